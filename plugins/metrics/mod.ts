/**
 * A plugin that only observes: it counts turns, tool calls and tokens from the event bus and
 * contributes nothing. Its subscriptions are made through its context, so the ledger ends them
 * when it is switched off.
 *
 * @module
 */

import type { Plugin } from "@amber/core";
import { PluginCategory } from "@amber/core";

/** What the metrics plugin has counted. */
export interface MetricsCounts {
  /** Turns started. */
  turns: number;
  /** Tool calls completed. */
  toolCalls: number;
  /** Tool calls that returned an error. */
  toolErrors: number;
  /** Milliseconds spent in tools. */
  toolMs: number;
  /** Prompt tokens reported by the model. */
  promptTokens: number;
  /** Completion tokens reported by the model. */
  completionTokens: number;
  /** Errors raised. */
  errors: number;
}

/** The metrics plugin: a plugin plus a read of its counts. */
export interface MetricsPlugin extends Plugin {
  /** A copy of the counts so far. */
  counts(): MetricsCounts;
}

/**
 * Creates the metrics plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMetricsPlugin } from "@amber/plugins/metrics";
 * const metrics = createMetricsPlugin();
 * assert.equal(metrics.capabilities().length, 0);
 * assert.equal(metrics.counts().turns, 0);
 * ```
 */
export function createMetricsPlugin(): MetricsPlugin {
  const zero = (): MetricsCounts => ({
    turns: 0,
    toolCalls: 0,
    toolErrors: 0,
    toolMs: 0,
    promptTokens: 0,
    completionTokens: 0,
    errors: 0,
  });
  let counts = zero();
  return {
    id: "metrics",
    version: "0.1.0",
    name: "Metrics",
    description: "Counts turns, tool calls and tokens; contributes nothing.",
    category: PluginCategory.Observability,
    // It only observes: subscriptions are not contributions a bound limits.
    bound: {},
    initialize(ctx) {
      counts = zero();
      ctx.events.subscribe("turnStarted", () => counts.turns++);
      ctx.events.subscribe("toolCompleted", (event) => {
        counts.toolCalls++;
        if (!event.result.ok) counts.toolErrors++;
        counts.toolMs += event.durationMs;
      });
      ctx.events.subscribe("llmResponse", (event) => {
        counts.promptTokens += event.promptTokens;
        counts.completionTokens += event.completionTokens;
      });
      ctx.events.subscribe("errorRaised", () => counts.errors++);
      return true;
    },
    shutdown() {},
    capabilities: () => [],
    counts: () => ({ ...counts }),
  };
}
