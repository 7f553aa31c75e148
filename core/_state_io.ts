// The runtime's reads and writes of `plugins/<id>/plugin.conf`, with what they report.

import { join } from "node:path";
import type { Plugin } from "./plugin.ts";
import { readPluginState, writePluginState } from "./plugin_state.ts";
import type { Diagnostic } from "./runtime_types.ts";

/**
 * Whether `plugin` is on: its `plugin.conf` in `configDir`, or its default when there is no
 * config directory, no file, or a corrupt one (reported, and left as it is). With `allOn`,
 * every plugin defaults to on.
 */
export async function readOn(
  configDir: string | undefined,
  allOn: boolean,
  plugin: Plugin,
  diagnose: (diagnostic: Diagnostic) => void,
): Promise<boolean> {
  const fallback = defaultOn(allOn, plugin);
  if (configDir === undefined) return fallback;
  const read = await readPluginState(configDir, plugin.id);
  if (read.status === "ok") return read.record.enabled;
  if (read.status === "corrupt") {
    diagnose({
      pluginId: plugin.id,
      where: "plugin.conf",
      message: `${read.error.message}; using the default (${
        fallback ? "on" : "off"
      }) and leaving the file as it is`,
      error: read.error,
    });
  }
  return fallback;
}

/**
 * The names in `configDir`'s `plugins/` folder: a plugin without a folder there has no
 * `plugin.conf` to read. A start lists the folder once instead of failing to read one file per
 * plugin (most have none, and each failed read builds an error: some 3 ms of a start with the
 * bundled plugins). Undefined when the folder cannot be listed for another reason than its
 * absence: then every plugin's file is read, and what is wrong with it reported.
 */
export async function stateFolders(configDir: string): Promise<ReadonlySet<string> | undefined> {
  const names = new Set<string>();
  try {
    for await (const entry of Deno.readDir(join(configDir, "plugins"))) names.add(entry.name);
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? names : undefined;
  }
  return names;
}

/**
 * Writes plugin `id`'s state atomically when there is a config directory; reports where a corrupt
 * file was moved before it was replaced.
 */
export async function writeOn(
  configDir: string | undefined,
  id: string,
  on: boolean,
  diagnose: (diagnostic: Diagnostic) => void,
): Promise<{ path: string; backup?: string } | undefined> {
  if (configDir === undefined) return undefined;
  const written = await writePluginState(configDir, id, { enabled: on });
  if (written.backup) {
    diagnose({
      pluginId: id,
      where: "plugin.conf",
      message: `the corrupt state file was moved to ${written.backup}`,
    });
  }
  return written;
}

/** Whether `plugin` is on when nothing on disk says otherwise. */
export function defaultOn(allOn: boolean, plugin: Plugin): boolean {
  return allOn || (plugin.enabledByDefault ?? true);
}
