/**
 * One HTTP request under a deadline and the caller's cancellation: the one place the package
 * arms a timer around `fetch`, combines it with an outside `AbortSignal` and clears both again.
 * The client's streams and model listings and the bearer GET all go through it. Private to the
 * package.
 *
 * @module
 */

/** What {@linkcode TimedFetch} needs besides the URL. */
export interface TimedFetchOptions {
  /** How long the request may take, from {@linkcode TimedFetch.fetch} until the clock stops. */
  readonly timeoutMs: number;
  /** The caller's cancellation: an abort aborts the request with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** The `fetch` to call; the global one, looked up at each call, by default. */
  readonly fetch?: typeof globalThis.fetch | undefined;
}

/**
 * A request ran past its deadline. It is the abort reason of the request, so `fetch` and a body
 * read under the deadline both reject with it.
 */
export class FetchTimeoutError extends Error {
  /** The URL requested, as the caller gave it. */
  readonly url: string;
  /** The limit that was exceeded, in milliseconds. */
  readonly timeoutMs: number;
  /** Creates the error for `url` and its limit. */
  constructor(url: string, timeoutMs: number, options?: ErrorOptions) {
    super(`the request to ${url} timed out after ${durationText(timeoutMs)}`, options);
    this.name = "FetchTimeoutError";
    this.url = url;
    this.timeoutMs = timeoutMs;
  }
}

/** A limit as people write it: `50 ms`, `2 s`, `1.5 s`. */
export function durationText(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const s = ms / 1_000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/**
 * One request with a deadline. The clock starts at {@linkcode TimedFetch.fetch} and runs until
 * {@linkcode TimedFetch.stopClock} or disposal, so it covers the body too unless stopped (a
 * stream stops it once the headers are in and watches its body its own way). Disposing clears
 * the timer and lets go of the caller's signal; it does not abort a body still being read.
 */
export class TimedFetch implements Disposable {
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #outer: AbortSignal | undefined;
  readonly #fetch: typeof globalThis.fetch | undefined;
  readonly #controller = new AbortController();
  readonly #forward = (): void => this.#controller.abort(this.#outer?.reason);
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #timedOut = false;

  /** Prepares a request to `url`; nothing is sent until {@linkcode TimedFetch.fetch}. */
  constructor(url: string | URL, options: TimedFetchOptions) {
    this.#url = String(url);
    this.#timeoutMs = options.timeoutMs;
    this.#outer = options.signal;
    this.#fetch = options.fetch;
  }

  /** Whether the deadline passed (the request was then aborted with a `FetchTimeoutError`). */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /**
   * Sends the request. Rejects with a {@linkcode FetchTimeoutError} past the deadline, with the
   * signal's reason once the caller aborts (at once when it already has), or with the network
   * error.
   */
  async fetch(init: Omit<RequestInit, "signal"> = {}): Promise<Response> {
    const outer = this.#outer;
    if (outer?.aborted) this.#controller.abort(outer.reason);
    else outer?.addEventListener("abort", this.#forward, { once: true });
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#controller.abort(new FetchTimeoutError(this.#url, this.#timeoutMs));
    }, this.#timeoutMs);
    const send = this.#fetch ?? globalThis.fetch;
    // Awaited here so that a `fetch` throwing synchronously rejects like any other failure.
    return await send(this.#url, { ...init, signal: this.#controller.signal });
  }

  /** Ends the deadline; the request stays cancellable by the caller and by `abort`. */
  stopClock(): void {
    clearTimeout(this.#timer);
  }

  /** Aborts the request and its body (what an idle watchdog does). */
  abort(reason?: unknown): void {
    this.#controller.abort(reason);
  }

  /** Clears the timer and stops listening to the caller's signal. */
  [Symbol.dispose](): void {
    clearTimeout(this.#timer);
    this.#outer?.removeEventListener("abort", this.#forward);
  }
}
