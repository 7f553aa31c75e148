/**
 * `@amber/plugins`: the plugins amber ships, each also importable on its own
 * (`@amber/plugins/hello`, `@amber/plugins/metrics`).
 *
 * @example
 * ```ts
 * import { makeBundledPlugins } from "@amber/plugins";
 * console.log(makeBundledPlugins().length > 0); // true
 * ```
 *
 * @module
 */

export { makeBundledPlugins } from "./bundled.ts";
export { createHelloPlugin, type HelloConfig } from "./hello/mod.ts";
export { createMetricsPlugin, type MetricsCounts, type MetricsPlugin } from "./metrics/mod.ts";
