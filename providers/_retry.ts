/**
 * When {@linkcode ProviderClient} tries a failed request again, and how long it waits first: the
 * retry policy and its defaults, the server's own retry hints, the backoff with full jitter, and
 * the cancellable wait. Private to the package; the policy's types are re-exported by
 * `client.ts`.
 *
 * @module
 */

/**
 * How failed requests are retried.
 *
 * @example
 * ```ts
 * import type { RetryPolicy } from "@amber/providers";
 * import assert from "node:assert/strict";
 * const patient: RetryPolicy = { maxAttempts: 6, baseDelayMs: 1_000, maxDelayMs: 30_000, maxRetryAfterMs: 120_000 };
 * assert.equal(patient.maxAttempts, 6);
 * ```
 */
export interface RetryPolicy {
  /** Total attempts, the first included; 4 by default. */
  readonly maxAttempts: number;
  /** The first backoff step; 500 ms by default, doubling per retry. */
  readonly baseDelayMs: number;
  /** The longest backoff step; 8 s by default. */
  readonly maxDelayMs: number;
  /**
   * The longest wait a server may ask for (`retry-after-ms`, `retry-after`, a body's retry
   * delay); 60 s by default. A server asking for more gets no retry: the error is reported.
   */
  readonly maxRetryAfterMs: number;
}

/**
 * What `ClientOptions.onRetry` is told before each wait.
 *
 * @example
 * ```ts
 * import type { RetryInfo } from "@amber/providers/client";
 * import assert from "node:assert/strict";
 * const note = (info: RetryInfo): string =>
 *   `${info.status ?? "network"}: ${info.message}; retry ${info.attempt + 1} in ${info.delayMs} ms`;
 * assert.equal(
 *   note({ attempt: 1, delayMs: 500, status: 429, message: "rate limited" }),
 *   "429: rate limited; retry 2 in 500 ms",
 * );
 * ```
 */
export interface RetryInfo {
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  /** How long the client waits before the next attempt. */
  readonly delayMs: number;
  /** The HTTP status, when there was a response. */
  readonly status?: number;
  /** Why the attempt failed (the API key is never in it). */
  readonly message: string;
}

/** One attempt's failure, before deciding whether to retry it. */
export interface Failure {
  /** What went wrong, in words (the API key is never in it). */
  readonly message: string;
  /** Whether another attempt may succeed. */
  readonly retryable: boolean;
  /** The HTTP status, when there was a response. */
  readonly status?: number;
  /** The wait the server asked for, uncapped; undefined when it named none. */
  readonly serverDelayMs?: number;
  /** The dialect read the error as the request overflowing the model's context window. */
  readonly contextOverflow?: boolean;
}

const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/** The whole policy: the defaults, with each override that is a usable number. */
export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  return {
    maxAttempts: Math.max(
      1,
      Math.floor(positive(overrides.maxAttempts, DEFAULT_RETRY.maxAttempts)),
    ),
    baseDelayMs: nonNegative(overrides.baseDelayMs, DEFAULT_RETRY.baseDelayMs),
    maxDelayMs: nonNegative(overrides.maxDelayMs, DEFAULT_RETRY.maxDelayMs),
    maxRetryAfterMs: nonNegative(overrides.maxRetryAfterMs, DEFAULT_RETRY.maxRetryAfterMs),
  };
}

/**
 * How long to wait after failed attempt `attempt` (from 1) before the next, or undefined when
 * the failure is reported instead: not retryable, attempts used up, or a server asking for a
 * longer wait than the policy allows. A server's wait is honoured as asked; otherwise the wait is
 * exponential backoff with full jitter (`random` in [0, 1)).
 */
export function retryDelayMs(
  policy: RetryPolicy,
  failure: Failure,
  attempt: number,
  random: () => number,
): number | undefined {
  const serverDelay = failure.serverDelayMs;
  const tooLong = serverDelay !== undefined && serverDelay > policy.maxRetryAfterMs;
  if (!failure.retryable || tooLong || attempt >= policy.maxAttempts) return undefined;
  if (serverDelay !== undefined) return Math.ceil(serverDelay);
  return Math.floor(
    random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)),
  );
}

/** The wait `retry-after-ms` or `retry-after` (seconds or an HTTP date) asks for. */
export function headerDelayMs(headers: Headers): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null) {
    const value = Number(ms.trim());
    if (ms.trim() !== "" && Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get("retry-after");
  if (after !== null && after.trim() !== "") {
    const seconds = Number(after.trim());
    if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1_000 : undefined;
    const date = Date.parse(after);
    if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  }
  return undefined;
}

/** The default sleep: a timer that rejects at once when the signal aborts. */
export function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** `value` when it is a finite number above 0, else `fallback`. */
export function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

function nonNegative(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;
}
