/**
 * The grant of a sandboxed third-party plugin: what its manifest asks for (`permissions`) set
 * against what the user granted before, and the user's answer when it asks for more. A plugin
 * that asks for nothing beyond its recorded grant needs no question; one that asks for more is
 * granted only by a yes (`amber plugins add|update` ask when stdin is a terminal) or `--grant`,
 * else it is refused with a {@linkcode GrantRequiredError} and nothing is recorded. What is
 * recorded is what it asks for now, so a version that asks for less keeps only that.
 *
 * @module
 */

import type { PluginPermissions } from "@amber/core";
import { checkPermissions, describePermissions, exceedsGrant } from "@amber/core/sandbox";
import { UsageError } from "./args.ts";

/** What a plugin asks to be granted, as a {@linkcode GrantDecider} is shown it. */
export interface GrantRequest {
  /** The plugin's id. */
  readonly id: string;
  /** Its version. */
  readonly version: string;
  /** Its file (or spec), for messages. */
  readonly file: string;
  /** Everything its manifest asks for. */
  readonly asked: PluginPermissions;
  /** That, one line per thing, for the user. */
  readonly lines: readonly string[];
  /** What it asks for beyond the grant recorded before (all of it when there was none). */
  readonly beyond: readonly string[];
}

/** Answers whether the user grants a {@linkcode GrantRequest}. */
export type GrantDecider = (request: GrantRequest) => boolean | Promise<boolean>;

/**
 * A plugin asks for permissions the user has not granted, and neither `--grant` nor a yes came.
 * The CLI exits 2 with it; the message names what it asks and how to grant it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GrantRequiredError } from "./plugin_grant.ts";
 * const error = new GrantRequiredError(
 *   "/p/mod.ts",
 *   "net",
 *   ["net api.example.com"],
 *   "amber plugins add /p/mod.ts --grant",
 * );
 * assert.equal(error.name, "GrantRequiredError");
 * assert.equal(
 *   error.message,
 *   "/p/mod.ts: plugin 'net' asks for: net api.example.com; nothing was recorded; " +
 *     "to grant it, run `amber plugins add /p/mod.ts --grant`",
 * );
 * ```
 */
export class GrantRequiredError extends UsageError {
  /** The plugin's id. */
  readonly pluginId: string;
  /** What it asks for that was not granted. */
  readonly beyond: readonly string[];
  /** Creates the error; `retry` is the command line that grants it. */
  constructor(file: string, pluginId: string, beyond: readonly string[], retry: string) {
    super(
      `${file}: plugin '${pluginId}' asks for: ${beyond.join(", ")}; nothing was recorded; ` +
        `to grant it, run \`${retry}\``,
    );
    this.name = "GrantRequiredError";
    this.pluginId = pluginId;
    this.beyond = beyond;
  }
}

/** What {@linkcode settleGrant} needs of the plugin. */
export interface GrantSubject {
  /** Its id. */
  readonly id: string;
  /** Its version. */
  readonly version: string;
  /** Its file (or spec), for messages. */
  readonly file: string;
  /** Its manifest's `permissions`, unchecked. */
  readonly permissions?: unknown;
}

/**
 * The grant to record for `subject`: what it asks for, when that is within `recorded` or
 * `decide` says yes; otherwise a {@linkcode GrantRequiredError} telling to run `retry`. A
 * manifest whose `permissions` are not valid is refused with the checker's words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GrantRequiredError, settleGrant } from "./plugin_grant.ts";
 * const subject = { id: "net", version: "1.0.0", file: "/p/mod.ts", permissions: { env: ["TZ"] } };
 * // Asked for and not granted before: refused without a yes.
 * await assert.rejects(settleGrant(subject, undefined, undefined, "retry"), GrantRequiredError);
 * assert.deepEqual(await settleGrant(subject, undefined, () => true, "retry"), { env: ["TZ"] });
 * // Within what was granted before: no question.
 * const granted = await settleGrant(subject, { env: ["TZ", "LANG"] }, undefined, "retry");
 * assert.deepEqual(granted, { env: ["TZ"] });
 * ```
 */
export async function settleGrant(
  subject: GrantSubject,
  recorded: PluginPermissions | undefined,
  decide: GrantDecider | undefined,
  retry: string,
): Promise<PluginPermissions> {
  const asked = checkPermissions(subject.permissions ?? {}, subject.file);
  const beyond = exceedsGrant(asked, recorded ?? {});
  if (beyond.length === 0) return asked;
  const request: GrantRequest = {
    id: subject.id,
    version: subject.version,
    file: subject.file,
    asked,
    lines: describePermissions(asked),
    beyond,
  };
  if (decide !== undefined && await decide(request)) return asked;
  throw new GrantRequiredError(subject.file, subject.id, beyond, retry);
}

/**
 * Whether `grant` names the plugin's data folder (`data:` paths), which then must exist before
 * its process starts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { usesDataFolder } from "./plugin_grant.ts";
 * assert.equal(usesDataFolder({ write: ["data:cache"] }), true);
 * assert.equal(usesDataFolder({ read: ["src"] }), false);
 * ```
 */
export function usesDataFolder(grant: PluginPermissions): boolean {
  return [...(grant.read ?? []), ...(grant.write ?? [])].some((path) => path.startsWith("data:"));
}
