/**
 * `@amber/core`: the contracts every amber plugin and host shares, the ledger, the event bus
 * and the plugin runtime.
 *
 * @example
 * ```ts
 * import { EventBus, PluginLedger } from "@amber/core";
 * const bus = new EventBus();
 * const ledger = new PluginLedger();
 * console.log(bus.count("turnStarted"), ledger.owners().length); // 0 0
 * ```
 *
 * @module
 */

export * from "./allowance.ts";
export * from "./bound.ts";
export * from "./capability.ts";
export * from "./command.ts";
export * from "./config.ts";
export * from "./errors.ts";
export * from "./dependency.ts";
export * from "./dialect.ts";
export * from "./environment.ts";
export * from "./events.ts";
export * from "./kernel.ts";
export * from "./ledger.ts";
export * from "./message.ts";
export * from "./panel.ts";
export * from "./plugin.ts";
export * from "./prompt.ts";
export * from "./provider.ts";
export * from "./registry.ts";
export * from "./services.ts";
export * from "./status.ts";
export * from "./tool.ts";
export * from "./transcript.ts";
export * from "./ui.ts";
export * from "./wallet.ts";
export * from "./plugin_config.ts";
export * from "./plugin_module.ts";
export * from "./plugin_state.ts";
export * from "./resolution_error.ts";
export * from "./run.ts";
export * from "./runtime.ts";
export * from "./selection.ts";
