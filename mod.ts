/**
 * amber for Deno: the public facade. A plugin author or an embedder imports from here: the core
 * contracts and runtime (`@amber/core`), the run kernel (`@amber/core/kernel`), the registries,
 * and the bundled plugins.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRegistries, makeBundledPlugins, PluginRuntime } from "./mod.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * for (const plugin of makeBundledPlugins()) runtime.register(plugin);
 * await runtime.start();
 * assert.equal(runtime.state("tool_read").status, "active");
 * assert.equal(runtime.state("hello").status, "disabled", "the worked example is off by default");
 * await runtime.stop();
 * ```
 *
 * @module
 */

export * from "@amber/core";
export * from "@amber/core/kernel";
export { createRegistries, type RegistriesOptions } from "@amber/registries";
export { makeBundledPlugins } from "@amber/plugins";
