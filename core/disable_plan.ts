/**
 * The plan of a disable: which plugins switching one off takes down, in the order they go, and
 * every contribution each one's ledger would unwind. `PluginRuntime.planDisable` computes it
 * without changing anything; `PluginRuntime.setState(id, false)` computes the same plan and
 * carries it out, so what a dry run shows is what a disable does.
 *
 * @module
 */

import type { ContributionKind } from "./contribution.ts";

/** One contribution a disable would remove. */
export interface PlannedRemoval {
  /** Its kind: a capability kind, or `subscription` for an event subscription. */
  readonly kind: ContributionKind;
  /** The capability's name (`event:<type>` for a subscription). */
  readonly name: string;
  /** The ids it holds in its registry (tool names, a command root, presets...). */
  readonly ids: readonly string[];
}

/** One plugin a disable would switch off. */
export interface PlannedSwitchOff {
  /** The plugin. */
  readonly pluginId: string;
  /**
   * `requested` for the plugin named, `dependent` for an active plugin that requires it and goes
   * first (a cascade).
   */
  readonly reason: "requested" | "dependent";
  /** What its ledger unwinds, in the order it is removed: newest first. */
  readonly removes: readonly PlannedRemoval[];
}

/**
 * What switching plugin `pluginId` off would do.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { any, PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * runtime.register({
 *   id: "style",
 *   version: "1.0.0",
 *   name: "Style",
 *   bound: { prompts: any() },
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [{ kind: "prompt", name: "brief", priority: 400, render: () => "Be brief." }],
 * });
 * await runtime.start();
 * const plan = runtime.planDisable("style");
 * assert.deepEqual(plan.plugins, [{
 *   pluginId: "style",
 *   reason: "requested",
 *   removes: [{ kind: "prompt", name: "brief", ids: ["brief"] }],
 * }]);
 * assert.equal(runtime.state("style").status, "active");
 * ```
 */
export interface DisablePlan {
  /** The plugin to switch off. */
  readonly pluginId: string;
  /** Whether active plugins that require it would be switched off first. */
  readonly cascade: boolean;
  /**
   * The plugins that would go, in order: furthest dependents first, the plugin itself last.
   * Empty when the plugin is not active (switching it off only records that it is off) or when
   * the disable is refused.
   */
  readonly plugins: readonly PlannedSwitchOff[];
  /**
   * Without `cascade`: the active plugins that require it, which a disable would strand; the
   * disable is refused (a `PluginDependentsError`) and nothing changes. Empty otherwise.
   */
  readonly stranded: readonly string[];
}

/** Options of `PluginRuntime.planDisable`. */
export interface DisablePlanOptions {
  /** Plan to switch off, first, the active plugins that require the plugin. */
  readonly cascade?: boolean;
}
