/**
 * `plugins/<id>/plugin.conf`: a plugin's persisted on/off state. Only the runtime reads and
 * writes it, and it writes atomically (a temporary file, then a rename), so a reader never sees
 * half a file and a crash never leaves one. Every write is a read-modify-write under the file
 * lock of `plugin.conf` (see {@linkcode updatePluginState}), so two amber processes switching
 * plugins at once never undo each other or both move a corrupt file aside.
 *
 * @module
 */

import { join } from "node:path";
import { PluginStateError } from "./errors.ts";
import { withFileLock } from "./file_lock.ts";

/** What `plugin.conf` holds. */
export interface PluginStateRecord {
  /** Whether the plugin is on. */
  readonly enabled: boolean;
}

/** What reading a `plugin.conf` found. */
export type PluginStateRead =
  | { readonly status: "absent"; readonly path: string }
  | { readonly status: "ok"; readonly path: string; readonly record: PluginStateRecord }
  | { readonly status: "corrupt"; readonly path: string; readonly error: PluginStateError };

const TRUE_WORDS = new Set(["true", "on", "yes", "1"]);
const FALSE_WORDS = new Set(["false", "off", "no", "0"]);

/**
 * The path of a plugin's state file under a config directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginStatePath } from "./plugin_state.ts";
 * assert.equal(pluginStatePath("/cfg", "hello"), "/cfg/plugins/hello/plugin.conf");
 * ```
 */
export function pluginStatePath(configDir: string, pluginId: string): string {
  return join(configDir, "plugins", pluginId, "plugin.conf");
}

/**
 * Parses the text of a `plugin.conf`: `key = value` lines, `#` comments, blank lines.
 * Throws a {@linkcode PluginStateError} naming the line at fault.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePluginState } from "./plugin_state.ts";
 * assert.deepEqual(parsePluginState("# state\nenabled = false\n", "plugin.conf"), { enabled: false });
 * ```
 */
export function parsePluginState(text: string, path: string): PluginStateRecord {
  let enabled: boolean | undefined;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) {
      throw new PluginStateError(path, i + 1, `expected 'key = value', found '${clip(line)}'`);
    }
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim().toLowerCase();
    if (key !== "enabled") {
      throw new PluginStateError(path, i + 1, `unknown key '${clip(key)}' (known: enabled)`);
    }
    if (enabled !== undefined) {
      throw new PluginStateError(path, i + 1, "'enabled' is set twice");
    }
    if (TRUE_WORDS.has(value)) enabled = true;
    else if (FALSE_WORDS.has(value)) enabled = false;
    else {
      throw new PluginStateError(
        path,
        i + 1,
        `'enabled' must be true or false, found '${clip(value)}'`,
      );
    }
  }
  if (enabled === undefined) throw new PluginStateError(path, 0, "no 'enabled' line");
  return { enabled };
}

/**
 * The text of a `plugin.conf`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatPluginState } from "./plugin_state.ts";
 * assert.ok(formatPluginState("hello", { enabled: true }).endsWith("enabled = true\n"));
 * ```
 */
export function formatPluginState(pluginId: string, record: PluginStateRecord): string {
  return `# amber plugin state for '${pluginId}'. Written by amber; change it with\n` +
    `# amber plugins enable|disable ${pluginId} (or /set plugin on|off ${pluginId}).\n` +
    `enabled = ${record.enabled}\n`;
}

/**
 * Reads a plugin's state file. Never throws: an absent file is `absent`, an unreadable or
 * malformed one is `corrupt` with the error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPluginState } from "./plugin_state.ts";
 * const dir = await Deno.makeTempDir();
 * const read = await readPluginState(dir, "hello");
 * assert.equal(read.status, "absent");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readPluginState(
  configDir: string,
  pluginId: string,
): Promise<PluginStateRead> {
  const path = pluginStatePath(configDir, pluginId);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { status: "absent", path };
    return {
      status: "corrupt",
      path,
      error: new PluginStateError(path, 0, `cannot read: ${(error as Error).message}`, {
        cause: error,
      }),
    };
  }
  try {
    return { status: "ok", path, record: parsePluginState(text, path) };
  } catch (error) {
    if (error instanceof PluginStateError) return { status: "corrupt", path, error };
    throw error;
  }
}

let tempCounter = 0;

/** What {@linkcode updatePluginState} wrote. */
export interface PluginStateWrite {
  /** The `plugin.conf` written. */
  readonly path: string;
  /** Where a corrupt file found there was moved first. */
  readonly backup?: string;
  /** The record written. */
  readonly record: PluginStateRecord;
}

/**
 * Changes a plugin's state file as one step no other amber process interleaves with: under the
 * file lock of `plugin.conf`, reads what is there now (`undefined` when absent or corrupt),
 * passes it to `change`, and writes the result atomically. A corrupt file is first moved aside
 * to `plugin.conf.corrupt-<time>`, so nothing the user had is lost.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPluginState, updatePluginState } from "./plugin_state.ts";
 * const dir = await Deno.makeTempDir();
 * await updatePluginState(dir, "hello", () => ({ enabled: true }));
 * const written = await updatePluginState(dir, "hello", (now) => ({ enabled: !now?.enabled }));
 * assert.deepEqual(written.record, { enabled: false });
 * const read = await readPluginState(dir, "hello");
 * assert.equal(read.status === "ok" && read.record.enabled, false);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function updatePluginState(
  configDir: string,
  pluginId: string,
  change: (current: PluginStateRecord | undefined) => PluginStateRecord,
): Promise<PluginStateWrite> {
  const path = pluginStatePath(configDir, pluginId);
  return await withFileLock(path, async () => {
    let backup: string | undefined;
    const current = await readPluginState(configDir, pluginId);
    if (current.status === "corrupt") {
      backup = `${path}.corrupt-${new Date().toISOString().replaceAll(":", "-")}`;
      await Deno.rename(path, backup).catch(() => backup = undefined);
    }
    const record = change(current.status === "ok" ? current.record : undefined);
    const temp = `${path}.tmp-${Deno.pid}-${++tempCounter}`;
    await Deno.writeTextFile(temp, formatPluginState(pluginId, record));
    await Deno.rename(temp, path);
    return backup === undefined ? { path, record } : { path, backup, record };
  });
}

/**
 * Writes a plugin's state file atomically, over what is there now (see
 * {@linkcode updatePluginState}). When the file there now is corrupt it is first moved aside to
 * `plugin.conf.corrupt-<time>`, so nothing the user had is lost; the path of that copy is
 * returned.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPluginState, writePluginState } from "./plugin_state.ts";
 * const dir = await Deno.makeTempDir();
 * await writePluginState(dir, "hello", { enabled: false });
 * const read = await readPluginState(dir, "hello");
 * assert.equal(read.status, "ok");
 * assert.equal(read.status === "ok" && read.record.enabled, false);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writePluginState(
  configDir: string,
  pluginId: string,
  record: PluginStateRecord,
): Promise<{ readonly path: string; readonly backup?: string }> {
  // Fields this process does not set keep what another process wrote meanwhile.
  const written = await updatePluginState(configDir, pluginId, (now) => ({ ...now, ...record }));
  return written.backup === undefined
    ? { path: written.path }
    : { path: written.path, backup: written.backup };
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
