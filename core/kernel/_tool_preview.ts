/**
 * What a call would change, asked of its tool right before an approval question
 * (`Tool.preview`), and the run's redaction over a {@linkcode FileChange}. A preview is a
 * courtesy to the user: it runs under the gate deadline, and whatever goes wrong shows no diff
 * and is reported as the plugin's fault, never a reason not to ask.
 *
 * @module
 */

import type { PluginRuntime } from "../runtime.ts";
import { timeoutFor, withDeadline } from "../limits.ts";
import { isFileChange } from "../tool.ts";
import type { FileChange, Tool } from "../tool.ts";
import { faultText } from "./_fault_text.ts";

/** Where a preview runs: the runtime it reports to, the run's redaction and cancel. */
export interface PreviewContext {
  /** The runtime (its config for the deadline, its fault report). */
  readonly runtime: PluginRuntime;
  /** The run's redaction, when it has one. */
  readonly redact?: (text: string) => string;
  /** The run's cancel. */
  readonly signal: AbortSignal;
}

/**
 * The change `tool` (of plugin `owner`) says a call with `args` would make, checked and
 * redacted; undefined when it says none, or fails.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { previewChange } from "./_tool_preview.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * const tool = {
 *   name: "w",
 *   description: "w",
 *   parameters: { type: "object" },
 *   preview: () => ({ path: "a.txt", before: "", after: "key=K1\n" }),
 *   execute: () => ({ ok: true, output: "" }),
 * };
 * const context = {
 *   runtime,
 *   redact: (text: string) => text.replace("K1", "***"),
 *   signal: new AbortController().signal,
 * };
 * const change = await previewChange(context, "p", tool, {});
 * assert.equal(change?.after, "key=***\n");
 * ```
 */
export async function previewChange(
  context: PreviewContext,
  owner: string,
  tool: Tool,
  args: unknown,
): Promise<FileChange | undefined> {
  const preview = tool.preview;
  if (preview === undefined) return undefined;
  const { runtime, redact, signal } = context;
  const what = `preview of '${tool.name}' of plugin '${owner}'`;
  try {
    const value: unknown = await withDeadline(
      () => preview.call(tool, args, { signal }),
      timeoutFor(runtime.config(), "gate", owner),
      what,
    );
    if (value === undefined) return undefined;
    if (!isFileChange(value)) {
      runtime.report({
        pluginId: owner,
        where: what,
        message: "returned something other than a file change",
      });
      return undefined;
    }
    return redact === undefined ? value : redactChange(value, redact);
  } catch (error) {
    runtime.report({ pluginId: owner, where: what, message: faultText(error), error });
    return undefined;
  }
}

/**
 * `redact` over a change's path and both its texts; the same object when nothing was hidden.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { redactChange } from "./_tool_preview.ts";
 * const change = { path: "a", before: "x", after: "y" };
 * assert.equal(redactChange(change, (text) => text), change);
 * assert.equal(redactChange(change, (text) => text.replace("y", "*")).after, "*");
 * ```
 */
export function redactChange(change: FileChange, redact: (text: string) => string): FileChange {
  const before = redact(change.before);
  const after = redact(change.after);
  const path = redact(change.path);
  if (before === change.before && after === change.after && path === change.path) return change;
  return { ...change, path, before, after };
}
