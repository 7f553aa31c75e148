/**
 * What a sandboxed plugin's process runs before the plugin's specifier, and where amber's own
 * packages resolve in it. From a source checkout that is core's plugin-process module and the
 * checkout (the sandbox's defaults); a single-file build has no such module beside it, so its
 * entry says, through {@linkcode usePluginProcessEntry}, that the build itself is the entry: it
 * runs the plugin process when its first argument is {@linkcode PLUGIN_PROCESS_FLAG}. The
 * installed build also says where its packages are (`deno task install`: an import map to the
 * build's own modules, so that a plugin importing `@amber/core` gets the same classes as amber).
 *
 * @module
 */

import type { AmberPackages } from "@amber/core/sandbox";

/** The first argument that makes the bundle run a plugin process instead of amber. */
export const PLUGIN_PROCESS_FLAG = "--amber-plugin-process";

let bundleEntry: readonly string[] | undefined;
let bundlePackages: AmberPackages | undefined;

/**
 * Records what a plugin's process runs before the plugin's specifier (a module and arguments),
 * with `packages` as where `@amber/*` resolve in it (none: they do not, as from the one-file
 * bundle). The one-file bundle names itself with {@linkcode PLUGIN_PROCESS_FLAG}; the installed
 * build names its own copy of the sandbox's entry, which loads less than the whole program.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   PLUGIN_PROCESS_FLAG,
 *   pluginProcessEntry,
 *   pluginProcessPackages,
 *   usePluginProcessEntry,
 * } from "./plugin_process_entry.ts";
 * assert.equal(pluginProcessEntry(), undefined);
 * usePluginProcessEntry(["file:///opt/amber.js", PLUGIN_PROCESS_FLAG]);
 * assert.deepEqual(pluginProcessEntry(), ["file:///opt/amber.js", "--amber-plugin-process"]);
 * assert.equal(pluginProcessPackages(), undefined);
 * const packages = { importMap: "/opt/amber/import_map.json", folders: ["/opt/amber"] };
 * usePluginProcessEntry(["file:///opt/amber/app/core/sandbox/child_main.js"], packages);
 * assert.deepEqual(pluginProcessEntry(), ["file:///opt/amber/app/core/sandbox/child_main.js"]);
 * assert.deepEqual(pluginProcessPackages(), packages);
 * ```
 */
export function usePluginProcessEntry(entry: readonly string[], packages?: AmberPackages): void {
  bundleEntry = [...entry];
  bundlePackages = packages;
}

/**
 * The module and arguments a plugin process runs before the plugin's specifier, or `undefined`
 * for the sandbox's own default (amber runs from source).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginProcessEntry } from "./plugin_process_entry.ts";
 * // `deno run cli/main.ts`: the plugin process runs core's own entry module.
 * assert.equal(pluginProcessEntry(), undefined);
 * ```
 */
export function pluginProcessEntry(): readonly string[] | undefined {
  return bundleEntry;
}

/**
 * Where amber's packages resolve in a plugin process, or `undefined` for the sandbox's own
 * default (the source checkout amber runs from, if any).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginProcessPackages } from "./plugin_process_entry.ts";
 * assert.equal(pluginProcessPackages(), undefined);
 * ```
 */
export function pluginProcessPackages(): AmberPackages | undefined {
  return bundlePackages;
}
