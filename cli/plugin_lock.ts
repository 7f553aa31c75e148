/**
 * `plugins.lock.json`: the record of the third-party plugins `amber plugins add` accepted, in
 * the config directory. Reading it checks its whole shape (a file that is not a valid lock is
 * refused, never overwritten); writing it is atomic. A change goes through
 * {@linkcode updatePluginLock}, which reads, changes and writes under a file lock, so two
 * `amber plugins add` running at once both keep their entry.
 *
 * @module
 */

import { isAbsolute } from "node:path";
import { describeError, type PluginPermissions, withFileLock } from "@amber/core";
import { writeTextAtomic } from "./atomic_file.ts";
import { type ModuleGraph, moduleGraphProblem } from "./module_graph.ts";
import { ThirdPartyPluginError } from "./third_party_error.ts";
import { pluginLockPath } from "./plugin_lock_file.ts";

export { PLUGIN_LOCK_FILE, pluginLockPath } from "./plugin_lock_file.ts";

/** Where a third-party plugin comes from. */
export type PluginSourceKind = "file" | "npm" | "jsr";

/** One added plugin, as `plugins.lock.json` records it. */
export interface PluginLockEntry {
  /** The plugin's id when it was added. */
  readonly id: string;
  /** Its display name when it was added (listed even when it cannot be loaded). */
  readonly name: string;
  /** Its version when it was added. */
  readonly version: string;
  /** Its category when it was added. */
  readonly category?: string;
  /** Its description when it was added. */
  readonly description?: string;
  /** What `amber plugins add` takes again: an absolute path, `npm:...` or `jsr:...`. */
  readonly spec: string;
  /** Where it comes from. */
  readonly kind: PluginSourceKind;
  /** What is imported: a file URL, the npm specifier, or the JSR specifier pinned to a version. */
  readonly specifier: string;
  /** The URL of the file whose bytes `sha256` covers. */
  readonly resolved: string;
  /** The sha256 of that file, lowercase hex. */
  readonly sha256: string;
  /**
   * Every local file the plugin imports and every npm package it resolves to, each with its
   * hash or version (see `module_graph.ts`). An entry written before amber recorded graphs has
   * none: it still loads, with a notice to run `amber plugins update <id>`.
   */
  readonly graph?: ModuleGraph;
  /**
   * What the user granted it (from its manifest's `permissions`): its process gets exactly
   * these Deno permissions. An entry without one (written before plugins ran in a process of
   * their own) is granted nothing.
   */
  readonly grant?: PluginPermissions;
  /**
   * Set by `amber plugins add --trusted`: it runs inside amber, with all of amber's permissions,
   * instead of in a process of its own.
   */
  readonly trusted?: true;
  /** When it was added or last accepted, ISO 8601. */
  readonly addedAt: string;
}

/** The contents of `plugins.lock.json`. */
export interface PluginLock {
  /** The format's version. */
  readonly version: 1;
  /** The added plugins, in the order they load. */
  readonly plugins: readonly PluginLockEntry[];
}

/**
 * Reads the lock; a missing file is an empty lock. A file that is not a valid lock is an error
 * naming it (and is never overwritten: `add` and `remove` refuse until it is fixed or deleted).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPluginLock } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * assert.deepEqual(await readPluginLock(dir), { version: 1, plugins: [] });
 * await Deno.writeTextFile(`${dir}/plugins.lock.json`, '{ "version": 2, "plugins": [] }');
 * await assert.rejects(readPluginLock(dir), /unknown version 2 \(expected 1\)/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readPluginLock(configDir: string): Promise<PluginLock> {
  const path = pluginLockPath(configDir);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { version: 1, plugins: [] };
    throw new ThirdPartyPluginError(path, `${path}: cannot be read: ${describeError(error)}`, {
      cause: error,
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ThirdPartyPluginError(path, `${path}: not valid JSON: ${describeError(error)}`, {
      cause: error,
    });
  }
  const problem = lockProblem(data);
  if (problem !== undefined) {
    throw new ThirdPartyPluginError(
      path,
      `${path}: ${problem}; fix it, or delete it and add the plugins again`,
    );
  }
  return data as PluginLock;
}

/**
 * Writes the lock atomically (a temporary file, then a rename) and returns its path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPluginLock, writePluginLock } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * const path = await writePluginLock(dir, { version: 1, plugins: [] });
 * assert.equal(path, `${dir}/plugins.lock.json`);
 * assert.deepEqual(await readPluginLock(dir), { version: 1, plugins: [] });
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writePluginLock(configDir: string, lock: PluginLock): Promise<string> {
  const path = pluginLockPath(configDir);
  await Deno.mkdir(configDir, { recursive: true });
  try {
    await writeTextAtomic(path, `${JSON.stringify(lock, null, 2)}\n`);
  } catch (error) {
    throw new ThirdPartyPluginError(path, `${path}: cannot be written: ${describeError(error)}`, {
      cause: error,
    });
  }
  return path;
}

/**
 * Changes the lock as one step that no other amber process can interleave with: takes the file
 * lock on `plugins.lock.json`, reads it, passes it to `change`, and writes what `change` returns.
 * An error thrown by `change` leaves the file as it was. Resolves to the path written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPluginLock, updatePluginLock } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * const entry = (id: string) => ({
 *   id, name: id, version: "1.0.0", spec: `/plugins/${id}.ts`, kind: "file" as const,
 *   specifier: `file:///plugins/${id}.ts`, resolved: `file:///plugins/${id}.ts`,
 *   sha256: "0".repeat(64), addedAt: "2025-01-01T00:00:00.000Z",
 * });
 * await Promise.all(["a", "b", "c"].map((id) =>
 *   updatePluginLock(dir, (lock) => ({ ...lock, plugins: [...lock.plugins, entry(id)] }))
 * ));
 * const ids = (await readPluginLock(dir)).plugins.map((plugin) => plugin.id);
 * assert.deepEqual(ids.toSorted(), ["a", "b", "c"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function updatePluginLock(
  configDir: string,
  change: (lock: PluginLock) => PluginLock | Promise<PluginLock>,
): Promise<string> {
  const path = pluginLockPath(configDir);
  // Adding an npm plugin elsewhere can hold the lock while it is imported; wait that long.
  return await withFileLock(
    path,
    async () => await writePluginLock(configDir, await change(await readPluginLock(configDir))),
    { timeoutMs: UPDATE_TIMEOUT_MS },
  );
}

/** How long {@linkcode updatePluginLock} waits for another writer, in milliseconds. */
const UPDATE_TIMEOUT_MS = 60_000;

function lockProblem(data: unknown): string | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return "not an object";
  const lock = data as { version?: unknown; plugins?: unknown };
  if (lock.version !== 1) return `unknown version ${JSON.stringify(lock.version)} (expected 1)`;
  if (!Array.isArray(lock.plugins)) return "plugins is not a list";
  const strings = ["id", "name", "version", "spec", "specifier", "resolved", "addedAt"] as const;
  for (let i = 0; i < lock.plugins.length; i++) {
    const entry = lock.plugins[i] as { [key: string]: unknown } | null;
    if (typeof entry !== "object" || entry === null) return `plugins[${i}] is not an object`;
    for (const key of strings) {
      if (typeof entry[key] !== "string") return `plugins[${i}].${key} is not a string`;
    }
    if (entry.kind !== "file" && entry.kind !== "npm" && entry.kind !== "jsr") {
      return `plugins[${i}].kind is not file, npm or jsr`;
    }
    if (typeof entry.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(entry.sha256)) {
      return `plugins[${i}].sha256 is not 64 hex digits`;
    }
    if (entry.graph !== undefined) {
      const problem = moduleGraphProblem(entry.graph);
      if (problem !== undefined) return `plugins[${i}].graph: ${problem}`;
    }
    if (entry.grant !== undefined) {
      const problem = grantProblem(entry.grant);
      if (problem !== undefined) return `plugins[${i}].grant${problem}`;
    }
    if (entry.trusted !== undefined && entry.trusted !== true) {
      return `plugins[${i}].trusted is not true (leave it out for a sandboxed plugin)`;
    }
    if (entry.kind === "file" && !isAbsolute(entry.spec as string)) {
      return `plugins[${i}].spec is not an absolute path`;
    }
  }
  const ids = lock.plugins.map((entry) => (entry as { id: string }).id);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) return `plugin id '${repeated}' appears twice`;
  return undefined;
}

const GRANT_KEYS: readonly string[] = ["read", "write", "net", "env", "run"];

// The shape only; what each entry may say is checked where the grant becomes Deno's flags.
function grantProblem(grant: unknown): string | undefined {
  if (typeof grant !== "object" || grant === null || Array.isArray(grant)) {
    return " is not an object";
  }
  for (const [key, value] of Object.entries(grant)) {
    if (!GRANT_KEYS.includes(key)) return `.${key} is not one of ${GRANT_KEYS.join(", ")}`;
    if (!Array.isArray(value)) return `.${key} is not a list`;
    const at = value.findIndex((item) => typeof item !== "string" || item === "");
    if (at >= 0) return `.${key}[${at}] is not a non-empty string`;
  }
  return undefined;
}
