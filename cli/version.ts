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
 * import assert from "node:assert/strict";
 * import { VERSION } from "@amber/cli";
 * assert.match(VERSION, /^\d+\.\d+\.\d+/);
 * ```
 */
export const VERSION: string = manifest.version;
