/**
 * A session's figures in words, the same in every front end: dollars, token counts, and what a
 * compaction did (`amber run` says it on stderr, the interactive session in its transcript).
 *
 * @module
 */

import type { RunEvent } from "@amber/core/kernel";

/** A compaction's start or end, as the kernel reports it. */
export type CompactionEvent = Extract<
  RunEvent,
  { readonly type: "compactionStarted" | "compactionFinished" }
>;

/**
 * Dollars for people, the same in the status bar, `amber run`'s stderr and `amber sessions`:
 * cents from a dollar on, tenths of a cent below (a turn on a cheap model costs less than a
 * cent), and `<$0.001` for what rounds to nothing but is not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dollars } from "./figures.ts";
 * assert.equal(dollars(0.0123), "$0.012");
 * assert.equal(dollars(1.75), "$1.75");
 * assert.equal(dollars(12.345), "$12.35");
 * assert.equal(dollars(0.0002), "<$0.001");
 * assert.equal(dollars(0), "$0.000");
 * ```
 */
export function dollars(value: number): string {
  if (value > 0 && value < 0.0005) return "<$0.001";
  return `$${value.toFixed(value >= 1 ? 2 : 3)}`;
}

/**
 * A token count in a few characters: `950`, `41.2k`, `1.3M`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tokenCount } from "./figures.ts";
 * assert.deepEqual([tokenCount(950), tokenCount(41_234), tokenCount(1_250_000)], ["950", "41.2k", "1.3M"]);
 * ```
 */
export function tokenCount(value: number): string {
  const n = Math.round(value);
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/**
 * What a compaction event says to a person: why it starts and how big the conversation is, or
 * how much smaller it got and who made it (or why it did not happen).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeCompaction } from "./figures.ts";
 * assert.equal(
 *   describeCompaction({ type: "compactionStarted", reason: "auto", tokens: 9000, budget: 10_000, threshold: 8500 }),
 *   "compacting the conversation: 9.0k tokens, past 85% of the 10.0k-token window",
 * );
 * assert.equal(
 *   describeCompaction({
 *     type: "compactionFinished", reason: "auto", success: true,
 *     tokensBefore: 9000, tokensAfter: 2100, strategy: "default",
 *   }),
 *   "compacted the conversation: 9.0k → 2.1k tokens (default)",
 * );
 * ```
 */
export function describeCompaction(event: CompactionEvent): string {
  if (event.type === "compactionFinished") {
    if (!event.success) {
      return `the conversation was not compacted: ${event.message ?? "no reason was given"}`;
    }
    const by = event.strategy === undefined ? "" : ` (${event.strategy})`;
    return `compacted the conversation: ${tokenCount(event.tokensBefore)} → ` +
      `${tokenCount(event.tokensAfter)} tokens${by}`;
  }
  const size = `${tokenCount(event.tokens)} tokens`;
  const window = event.budget > 0 ? `${tokenCount(event.budget)}-token window` : "";
  switch (event.reason) {
    case "auto": {
      const share = event.budget > 0 ? Math.round(event.threshold / event.budget * 100) : 0;
      return `compacting the conversation: ${size}, past ${share}% of the ${window}`;
    }
    case "overflow":
      return `the provider said the context overflowed; compacting the conversation (${size}` +
        `${window === "" ? "" : ` for a ${window}`}) and trying again`;
    case "manual":
      return `compacting the conversation (${size}${window === "" ? "" : ` of a ${window}`})`;
  }
}
