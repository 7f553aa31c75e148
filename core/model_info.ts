/**
 * What amber knows of a model: its context window, output limit, prices and abilities. The
 * catalog (`@amber/providers/model-catalog`) gathers these from a static snapshot, the provider's
 * `/models` answer and `config.yaml`; the kernel uses the window to decide when to compact, and
 * the session prices each call with {@linkcode costOf}.
 *
 * @module
 */

import type { TokenUsage } from "./usage.ts";

/** Prices in dollars per million tokens. */
export interface ModelPrices {
  /** Input tokens that were neither read from nor written to the cache. */
  readonly input?: number;
  /** Output tokens. */
  readonly output?: number;
  /** Input tokens read from the prompt cache. */
  readonly cacheRead?: number;
  /** Input tokens written to the prompt cache. */
  readonly cacheWrite?: number;
}

/** What a model can take and do. */
export interface ModelAbilities {
  /** It calls tools. */
  readonly tools?: boolean;
  /** It reasons before it answers. */
  readonly reasoning?: boolean;
  /** It takes images. */
  readonly images?: boolean;
}

/** Where a figure of the catalog came from, most trusted last. */
export type ModelInfoSource = "price-table" | "snapshot" | "provider" | "config";

/**
 * One model as the catalog knows it. Every figure may be unknown: a local model nobody
 * described has only its id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelInfo } from "@amber/core";
 * const info: ModelInfo = {
 *   id: "qwen3-coder",
 *   contextWindow: 32_768,
 *   prices: { input: 0, output: 0 },
 *   sources: ["config"],
 * };
 * assert.equal(info.contextWindow, 32_768);
 * ```
 */
export interface ModelInfo {
  /** The model id, as the provider's API takes it. */
  readonly id: string;
  /** A name for people, when the catalog has one. */
  readonly name?: string;
  /** The most tokens a request and its answer may hold together. */
  readonly contextWindow?: number;
  /** The most tokens one answer may hold. */
  readonly maxOutput?: number;
  /** Its prices. */
  readonly prices?: ModelPrices;
  /** What it can do. */
  readonly abilities?: ModelAbilities;
  /** Where its figures came from, in the order they were merged. */
  readonly sources: readonly ModelInfoSource[];
}

/**
 * What `config.yaml`'s `models: {NAME: ...}` says of a model (prices in dollars per million
 * tokens); it overrides the snapshot and the provider.
 */
export interface ModelOverride {
  /** The context window, in tokens. */
  readonly contextWindow?: number;
  /** The output limit, in tokens. */
  readonly maxOutput?: number;
  /** Dollars per million input tokens. */
  readonly input?: number;
  /** Dollars per million output tokens. */
  readonly output?: number;
  /** Dollars per million tokens read from the cache. */
  readonly cacheRead?: number;
  /** Dollars per million tokens written to the cache. */
  readonly cacheWrite?: number;
}

/**
 * The dollars `usage` cost at `prices`, or undefined when the prices do not say (no input or
 * output price). Cache reads and writes are billed at their own price where there is one, else
 * at the input price.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { costOf } from "@amber/core";
 * const prices = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
 * const usage = { promptTokens: 1_000_000, completionTokens: 100_000, cachedTokens: 800_000 };
 * // 200k fresh input at $3/M, 800k cache reads at $0.30/M, 100k output at $15/M
 * assert.equal(costOf(usage, prices)?.toFixed(2), "2.34");
 * assert.equal(costOf(usage, {}), undefined);
 * ```
 */
export function costOf(usage: TokenUsage, prices: ModelPrices | undefined): number | undefined {
  if (prices?.input === undefined || prices.output === undefined) return undefined;
  const read = usage.cachedTokens ?? 0;
  const write = usage.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, usage.promptTokens - read - write);
  return (fresh * prices.input + read * (prices.cacheRead ?? prices.input) +
    write * (prices.cacheWrite ?? prices.input) + usage.completionTokens * prices.output) /
    1_000_000;
}
