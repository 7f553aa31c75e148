/**
 * Token counts of model calls, the same for every protocol, and their sum over a turn or a
 * session.
 *
 * @module
 */

/**
 * The tokens one model call (or several, summed) used. `promptTokens` counts every input token,
 * the ones read from or written to the provider's prompt cache included; `cachedTokens` and
 * `cacheWriteTokens` say how many of them were, where the provider reports it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { TokenUsage } from "@amber/core";
 * const usage: TokenUsage = { promptTokens: 1200, completionTokens: 80, cachedTokens: 1000 };
 * assert.equal(usage.promptTokens - (usage.cachedTokens ?? 0), 200);
 * ```
 */
export interface TokenUsage {
  /** Input tokens, cache reads and writes included. */
  readonly promptTokens: number;
  /** Output tokens, reasoning included. */
  readonly completionTokens: number;
  /** Input tokens read from the prompt cache. */
  readonly cachedTokens?: number;
  /** Input tokens written to the prompt cache (Anthropic bills them apart). */
  readonly cacheWriteTokens?: number;
  /** Output tokens spent on reasoning. */
  readonly reasoningTokens?: number;
}

/**
 * The sum of two usages; an optional count is kept when either side has it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { addUsage } from "@amber/core";
 * assert.deepEqual(
 *   addUsage({ promptTokens: 10, completionTokens: 2 }, { promptTokens: 5, completionTokens: 1, cachedTokens: 4 }),
 *   { promptTokens: 15, completionTokens: 3, cachedTokens: 4 },
 * );
 * ```
 */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum: {
    promptTokens: number;
    completionTokens: number;
    cachedTokens?: number;
    cacheWriteTokens?: number;
    reasoningTokens?: number;
  } = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
  };
  for (const key of ["cachedTokens", "cacheWriteTokens", "reasoningTokens"] as const) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  return sum;
}
