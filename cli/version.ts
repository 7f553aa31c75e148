/**
 * The version of amber, read from the CLI package's own manifest.
 *
 * @module
 */

import manifest from "./deno.json" with { type: "json" };

/**
 * The version of the `amber` command.
 *
 * @example
 * ```ts
 * import { VERSION } from "@amber/cli";
 * console.log(/^\d+\.\d+\.\d+/.test(VERSION)); // true
 * ```
 */
export const VERSION: string = manifest.version;
