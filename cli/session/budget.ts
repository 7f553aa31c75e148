/**
 * What a session gives the kernel of the model in use, and what it counts of the money spent:
 * the context window and compaction settings a run is given (from the model catalog,
 * `--compact-at` and config.yaml's `compaction:`), the price of a call's usage, and the dollars
 * of the session and of its running turn.
 *
 * @module
 */

import { type CompactionConfig, costOf, type ModelInfo, type TokenUsage } from "@amber/core";
import type { LoadedSession, RunEvent, RunOptions } from "@amber/core/kernel";
import type { SessionEvent } from "./events.ts";

/** The share of the window a request may fill before it is compacted, when nothing says. */
export const DEFAULT_COMPACT_AT = 0.85;

/** The figures a run is given for the model in use. */
export type RunBudget = Pick<
  RunOptions,
  "contextWindow" | "compactAt" | "autoCompact" | "keepTurns" | "price"
>;

/**
 * The run options for a model as the catalog knows it: its window (none while unknown: the
 * kernel then compacts only after an overflow), the share of it a request may fill
 * (`compactAt`, else config.yaml's `compaction.at`, else {@linkcode DEFAULT_COMPACT_AT}),
 * config.yaml's `compaction.auto` and `keepTurns`, and the price of a call at the model's
 * prices. `info` is asked at each use, so what is learned during a run (the provider's `/models`
 * answer) counts from then on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelInfo } from "@amber/core";
 * import { runBudget } from "./budget.ts";
 * let info: ModelInfo = { id: "m", sources: [] };
 * const budget = runBudget(() => info, undefined, { keepTurns: 3 });
 * const window = budget.contextWindow as () => number | undefined;
 * assert.equal(window(), undefined);
 * info = { id: "m", contextWindow: 8000, prices: { input: 1, output: 2 }, sources: ["provider"] };
 * assert.equal(window(), 8000);
 * assert.equal(budget.compactAt, 0.85);
 * assert.equal(budget.keepTurns, 3);
 * assert.equal(budget.price?.({ promptTokens: 1_000_000, completionTokens: 0 }), 1);
 * assert.equal(runBudget(() => info, 0.5, { at: 0.7 }).compactAt, 0.5);
 * ```
 */
export function runBudget(
  info: () => ModelInfo,
  compactAt: number | undefined,
  config: CompactionConfig | undefined,
): RunBudget {
  return {
    contextWindow: () => info().contextWindow,
    compactAt: compactAt ?? config?.at ?? DEFAULT_COMPACT_AT,
    ...(config?.auto === undefined ? {} : { autoCompact: config.auto }),
    ...(config?.keepTurns === undefined ? {} : { keepTurns: config.keepTurns }),
    price: (usage: TokenUsage) => costOf(usage, info().prices),
  };
}

/**
 * `event` as front ends get it: a call's usage with its price in dollars (`cost`), when the
 * budget knows the prices; any other event as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pricedEvent, runBudget } from "./budget.ts";
 * const budget = runBudget(() => ({ id: "m", prices: { input: 2, output: 8 }, sources: [] }), undefined, undefined);
 * const event = pricedEvent({ type: "usage", promptTokens: 500_000, completionTokens: 0 }, budget);
 * assert.equal(event.type === "usage" && event.cost, 1);
 * ```
 */
export function pricedEvent(event: RunEvent, budget: RunBudget): SessionEvent {
  if (event.type !== "usage") return event;
  const cost = budget.price?.(event);
  return cost === undefined ? event : { ...event, cost };
}

/**
 * The dollars a saved session spent: its steps' and its compactions' summaries', those whose
 * price was known; undefined when none was.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { savedCost } from "./budget.ts";
 * const step = (cost?: number) => ({ type: "step" as const, step: 0, at: "", messages: [], cost });
 * assert.equal(savedCost({ steps: [step(0.25), step(), step(0.5)], compactions: [] }), 0.75);
 * assert.equal(savedCost({ steps: [step()], compactions: [] }), undefined);
 * ```
 */
export function savedCost(
  session: Pick<LoadedSession, "steps" | "compactions">,
): number | undefined {
  let cost: number | undefined;
  for (const record of [...session.steps, ...session.compactions]) {
    if (record.cost !== undefined) cost = (cost ?? 0) + record.cost;
  }
  return cost;
}

/**
 * The money a session spent: over the session, and over its turn running (or last run). Each
 * is undefined until a call's price was known: a model without prices costs nothing anyone
 * could say.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Spending } from "./budget.ts";
 * const spending = new Spending();
 * spending.spend(0.5, false);
 * spending.startTurn();
 * spending.spend(0.25, true);
 * spending.spend(undefined, true);
 * assert.deepEqual([spending.turn, spending.session], [0.25, 0.75]);
 * spending.startTurn();
 * spending.step(0.5);
 * spending.runEnded(0.75); // a compaction's summary cost the rest
 * assert.deepEqual([spending.turn, spending.session], [0.75, 1.5]);
 * spending.forget();
 * assert.deepEqual([spending.turn, spending.session], [undefined, undefined]);
 * ```
 */
export class Spending {
  #session: number | undefined;
  #turn: number | undefined;
  // What the steps of the turn's run cost, as they ended.
  #steps = 0;

  /** Dollars over the session, when known. */
  get session(): number | undefined {
    return this.#session;
  }

  /** Dollars over the turn running or last run, when known. */
  get turn(): number | undefined {
    return this.#turn;
  }

  /** A turn starts: its count starts over. */
  startTurn(): void {
    this.#turn = undefined;
    this.#steps = 0;
  }

  /** A step of the turn's run ended having cost `cost` (nothing when unknown). */
  step(cost: number | undefined): void {
    if (cost !== undefined) this.#steps += cost;
    this.spend(cost, true);
  }

  /**
   * The turn's run ended having cost `total` in all: what its steps did not count (the
   * summaries of its compactions) counts now.
   */
  runEnded(total: number | undefined): void {
    if (total !== undefined && total > this.#steps) this.spend(total - this.#steps, true);
  }

  /** Counts `cost` (nothing when unknown), in the turn's count too when `inTurn`. */
  spend(cost: number | undefined, inTurn: boolean): void {
    if (cost === undefined) return;
    this.#session = (this.#session ?? 0) + cost;
    if (inTurn) this.#turn = (this.#turn ?? 0) + cost;
  }

  /** The session goes on from a file whose earlier spending was `session`. */
  resume(session: number | undefined): void {
    this.#session = session;
    this.#turn = undefined;
  }

  /** The session starts over: nothing was spent. */
  forget(): void {
    this.resume(undefined);
  }
}
