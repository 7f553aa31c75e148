/**
 * The response meter: what the bar says of the model's response, live while it streams. A
 * response's output tokens are estimated from its deltas as they come (about four characters a
 * token) until the provider reports usage, which then counts instead; tokens per second run from
 * the first delta. A new response starts from nothing, so the bar never passes the last
 * response's figures off as the current one's: until its first delta it shows none.
 *
 * Pure: every function takes the time an event arrived.
 *
 * @module
 */

/** Characters of streamed text per output token, for the estimate before usage is reported. */
export const CHARS_PER_TOKEN = 4;

// Below this much streaming a rate is noise (two deltas in one read): no tokens per second yet.
const MIN_RATE_MS = 250;

/**
 * The response in progress, or the last one once it ended: latency to the first delta, token
 * counts and completion tokens per second of streaming.
 */
export interface Meter {
  /** Latency to the first delta, ms; 0 until it arrives. */
  readonly latencyMs: number;
  /** Prompt tokens: the request's estimate until the provider reports its count. */
  readonly promptTokens: number;
  /** Completion tokens so far: reported, plus the estimate of what streamed since. */
  readonly completionTokens: number;
  /** Completion tokens per second of streaming; 0 until measurable. */
  readonly tps: number;
  /** When the model call in progress started, ms; absent between responses. */
  readonly started?: number;
  /** When its first delta arrived, ms. */
  readonly first?: number;
  /** When its stream finished, ms; the step goes on (its tools run) until it ends. */
  readonly done?: number;
  /** Characters streamed by the response in progress. */
  readonly chars?: number;
  /** The completion tokens last reported, and `chars` when they were. */
  readonly reported?: { readonly tokens: number; readonly chars: number };
}

/** A meter with nothing to show. */
export const EMPTY_METER: Meter = Object.freeze({
  latencyMs: 0,
  promptTokens: 0,
  completionTokens: 0,
  tps: 0,
});

/**
 * A model call started at `now`: the last response's figures are not this one's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { meterStart } from "./meter.ts";
 * const last = { latencyMs: 300, promptTokens: 900, completionTokens: 120, tps: 60 };
 * assert.deepEqual(meterStart(last, 5000), {
 *   latencyMs: 0,
 *   promptTokens: 0,
 *   completionTokens: 0,
 *   tps: 0,
 *   started: 5000,
 *   chars: 0,
 * });
 * ```
 */
export function meterStart(_meter: Meter, now: number): Meter {
  return { ...EMPTY_METER, started: now, chars: 0 };
}

/**
 * A request estimated at `tokens` was sent at `now`: the response starts from nothing (a retry's
 * too), and its prompt figure is the estimate until the provider says its own.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EMPTY_METER, meterDelta, meterRequest, meterStart } from "./meter.ts";
 * const failed = meterDelta(meterStart(EMPTY_METER, 0), 40, 100);
 * const retry = meterRequest(failed, 1500, 2000);
 * assert.deepEqual([retry.promptTokens, retry.completionTokens, retry.started], [1500, 0, 2000]);
 * ```
 */
export function meterRequest(meter: Meter, tokens: number, now: number): Meter {
  if (meter.started === undefined) return meter;
  return { ...EMPTY_METER, promptTokens: tokens, started: now, chars: 0 };
}

/**
 * The response's stream finished at `now` (its finish reason, or an error): the figures stop
 * being live, while the step's tools run; usage reported after it still counts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EMPTY_METER, meterDelta, meterFinish, meterStart, meterStreaming } from "./meter.ts";
 * const streaming = meterDelta(meterStart(EMPTY_METER, 0), 400, 500);
 * assert.equal(meterStreaming(streaming), true);
 * const finished = meterFinish(meterDelta(streaming, 400, 1500), 1500);
 * assert.equal(meterStreaming(finished), false);
 * assert.deepEqual([finished.completionTokens, finished.tps], [200, 200]);
 * ```
 */
export function meterFinish(meter: Meter, now: number): Meter {
  if (meter.started === undefined || meter.done !== undefined) return meter;
  const first = meter.first ?? now;
  return { ...meter, done: now, tps: rate(meter.completionTokens, now - first) };
}

/**
 * Whether a response is streaming now: it started, its first delta came, its stream goes on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EMPTY_METER, meterDelta, meterStart, meterStreaming } from "./meter.ts";
 * assert.equal(meterStreaming(meterStart(EMPTY_METER, 0)), false);
 * assert.equal(meterStreaming(meterDelta(meterStart(EMPTY_METER, 0), 4, 10)), true);
 * ```
 */
export function meterStreaming(meter: Meter): boolean {
  return meter.started !== undefined && meter.first !== undefined && meter.done === undefined;
}

/**
 * `chars` characters of output (text, reasoning, tool-call arguments) arrived at `now`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EMPTY_METER, meterDelta, meterStart } from "./meter.ts";
 * let meter = meterStart(EMPTY_METER, 1000);
 * meter = meterDelta(meter, 400, 1200);
 * assert.deepEqual([meter.latencyMs, meter.completionTokens, meter.tps], [200, 100, 0]);
 * meter = meterDelta(meter, 400, 2200);
 * assert.deepEqual([meter.completionTokens, meter.tps], [200, 200]);
 * ```
 */
export function meterDelta(meter: Meter, chars: number, now: number): Meter {
  if (meter.started === undefined || meter.done !== undefined) return meter;
  const first = meter.first ?? now;
  const streamed = (meter.chars ?? 0) + chars;
  const completionTokens = estimate(meter.reported, streamed);
  return {
    ...meter,
    first,
    latencyMs: first - meter.started,
    chars: streamed,
    completionTokens,
    tps: rate(completionTokens, now - first),
  };
}

/**
 * The provider reported the call's usage as it stands at `now` (some report it mid-stream): its
 * counts replace the estimate.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EMPTY_METER, meterDelta, meterStart, meterUsage } from "./meter.ts";
 * let meter = meterDelta(meterStart(EMPTY_METER, 0), 40, 100);
 * meter = meterUsage(meter, { promptTokens: 700, completionTokens: 3 }, 100);
 * assert.deepEqual([meter.promptTokens, meter.completionTokens], [700, 3]);
 * assert.equal(meterDelta(meter, 8, 200).completionTokens, 5);
 * ```
 */
export function meterUsage(
  meter: Meter,
  usage: { readonly promptTokens: number; readonly completionTokens: number },
  now: number,
): Meter {
  if (meter.started === undefined) return meter;
  const chars = meter.chars ?? 0;
  const promptTokens = usage.promptTokens > 0 ? usage.promptTokens : meter.promptTokens;
  // A report of no output yet (a prompt count sent as the stream opens) is no count of it.
  if (usage.completionTokens <= 0) return { ...meter, promptTokens };
  const reported = { tokens: usage.completionTokens, chars };
  const completionTokens = estimate(reported, chars);
  return {
    ...meter,
    promptTokens,
    reported,
    completionTokens,
    tps: meter.first === undefined ? 0 : rate(completionTokens, (meter.done ?? now) - meter.first),
  };
}

/**
 * The step ended at `now`, with the response's final usage when the provider reported one;
 * without it the estimate stands. The rate is over the stream, not the tools that ran after.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EMPTY_METER, meterDelta, meterEnd, meterStart } from "./meter.ts";
 * const streaming = meterDelta(meterStart(EMPTY_METER, 1000), 10, 1250);
 * const ended = meterEnd(streaming, { promptTokens: 100, completionTokens: 50 }, 2250);
 * assert.deepEqual(ended, { latencyMs: 250, promptTokens: 100, completionTokens: 50, tps: 50 });
 * assert.equal(meterEnd(streaming, undefined, 2250).completionTokens, 3);
 * ```
 */
export function meterEnd(
  meter: Meter,
  usage: { readonly promptTokens: number; readonly completionTokens: number } | undefined,
  now: number,
): Meter {
  if (meter.started === undefined) return meter;
  const final = usage === undefined ? meter : meterUsage(meter, usage, now);
  const first = final.first ?? final.started ?? now;
  return {
    latencyMs: final.latencyMs,
    promptTokens: final.promptTokens,
    completionTokens: final.completionTokens,
    tps: rate(final.completionTokens, (final.done ?? now) - first),
  };
}

function estimate(
  reported: { readonly tokens: number; readonly chars: number } | undefined,
  chars: number,
): number {
  const since = chars - (reported?.chars ?? 0);
  return (reported?.tokens ?? 0) + Math.ceil(since / CHARS_PER_TOKEN);
}

function rate(tokens: number, ms: number): number {
  return ms >= MIN_RATE_MS ? tokens / (ms / 1000) : 0;
}
