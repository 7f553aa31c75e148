/**
 * What a sandboxed plugin's process runs before the plugin's specifier. From a source checkout
 * that is core's plugin-process module (the sandbox's default); the single-file bundle has no
 * such module beside it, so `standalone.ts` says, through {@linkcode runAsPluginProcessFrom},
 * that the bundle itself is the entry: it runs the plugin process when its first argument is
 * {@linkcode PLUGIN_PROCESS_FLAG}.
 *
 * @module
 */

/** The first argument that makes the bundle run a plugin process instead of amber. */
export const PLUGIN_PROCESS_FLAG = "--amber-plugin-process";

let bundleEntry: readonly string[] | undefined;

/**
 * Records that amber runs as the single-file program `mainModule`: plugin processes then run
 * `mainModule --amber-plugin-process <specifier>`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginProcessEntry, runAsPluginProcessFrom } from "./plugin_process_entry.ts";
 * assert.equal(pluginProcessEntry(), undefined);
 * runAsPluginProcessFrom("file:///opt/amber.js");
 * assert.deepEqual(pluginProcessEntry(), ["file:///opt/amber.js", "--amber-plugin-process"]);
 * ```
 */
export function runAsPluginProcessFrom(mainModule: string): void {
  bundleEntry = [mainModule, PLUGIN_PROCESS_FLAG];
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
