/**
 * The one list of plugins amber ships.
 *
 * @module
 */

import type { Plugin } from "@amber/core";
import { createHelloPlugin } from "./hello/mod.ts";
import { createMetricsPlugin } from "./metrics/mod.ts";

/**
 * Fresh instances of every bundled plugin, in activation order.
 *
 * @example
 * ```ts
 * import { makeBundledPlugins } from "@amber/plugins";
 * console.log(makeBundledPlugins().map((plugin) => plugin.id)); // [ "hello", "metrics" ]
 * ```
 */
export function makeBundledPlugins(): Plugin[] {
  return [
    createHelloPlugin(),
    createMetricsPlugin(),
  ];
}
