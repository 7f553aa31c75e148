/**
 * The core-owned HTTP client for model APIs: it sends what a dialect builds, with timeouts,
 * cancellation and retries that honour the server's retry-after, and pipes a streamed response
 * through the SSE decoder into the dialect's stream decoder. Plugins never open their own client.
 *
 * @module
 */

import {
  AmberError,
  type ChatRequest,
  type Dialect,
  type HttpRequestSpec,
  type ProviderSettings,
  type StreamEvent,
  type StreamSink,
} from "@amber/core";
import { SseDecoder } from "./sse.ts";

/**
 * How failed requests are retried.
 *
 * @example
 * ```ts
 * import type { RetryPolicy } from "@amber/providers";
 * const patient: RetryPolicy = { maxAttempts: 6, baseDelayMs: 1_000, maxDelayMs: 30_000, maxRetryAfterMs: 120_000 };
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
 * What {@linkcode ClientOptions.onRetry} is told before each wait.
 *
 * @example
 * ```ts
 * import type { RetryInfo } from "@amber/providers/client";
 * const note = (info: RetryInfo): string =>
 *   `${info.status ?? "network"}: ${info.message}; retry ${info.attempt + 1} in ${info.delayMs} ms`;
 * console.log(note({ attempt: 1, delayMs: 500, status: 429, message: "rate limited" }));
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

/**
 * Options of {@linkcode ProviderClient}.
 *
 * @example
 * ```ts
 * import type { ClientOptions } from "@amber/providers";
 * const options: ClientOptions = {
 *   timeoutMs: 30_000,
 *   retry: { maxAttempts: 2 },
 *   onRetry: ({ attempt, delayMs, message }) =>
 *     console.log(`attempt ${attempt} failed (${message}); retrying in ${delayMs} ms`),
 * };
 * ```
 */
export interface ClientOptions {
  /** How long to wait for the response headers; 60 s by default. */
  readonly timeoutMs?: number;
  /** The longest gap between two body chunks of a stream; 120 s by default. */
  readonly idleTimeoutMs?: number;
  /** Overrides of the default {@linkcode RetryPolicy}. */
  readonly retry?: Partial<RetryPolicy>;
  /** Called before each wait for a retry. */
  readonly onRetry?: (info: RetryInfo) => void;
  /**
   * Waits `ms`, ending early (rejecting or resolving) when `signal` aborts; a real timer by
   * default. Tests inject one so that they need not wait.
   */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A number in [0, 1) for the backoff jitter; `Math.random` by default. */
  readonly random?: () => number;
}

/**
 * How a {@linkcode ProviderClient.stream} call ended. Failures are not thrown: they reached the
 * sink as an `error` event followed by `finish`.
 *
 * @example
 * ```ts
 * import type { StreamOutcome } from "@amber/providers";
 * function describe(outcome: StreamOutcome): string {
 *   return outcome.cancelled ? "cancelled" : `${outcome.status} after ${outcome.attempts} attempt(s)`;
 * }
 * ```
 */
export interface StreamOutcome {
  /** The status of the last response; 0 when no response arrived. */
  readonly status: number;
  /** The headers of the last response (empty when none arrived). */
  readonly headers: Headers;
  /** How many requests were sent. */
  readonly attempts: number;
  /** The signal aborted the call; nothing reached the sink after that. */
  readonly cancelled: boolean;
  /** The URL requested. */
  readonly url: string;
}

/**
 * Where a {@linkcode ProviderError} came from.
 *
 * @example
 * ```ts
 * import type { ProviderErrorDetails } from "@amber/providers/client";
 * const details: ProviderErrorDetails = { url: "http://127.0.0.1:1/v1/models", retryable: false, status: 401 };
 * ```
 */
export interface ProviderErrorDetails {
  /** The URL requested (never with the API key in it). */
  readonly url: string;
  /** Whether trying again later may succeed. */
  readonly retryable: boolean;
  /** The HTTP status, when there was a response. */
  readonly status?: number;
}

/**
 * A request to a model API failed. The message names the URL and never holds the API key.
 *
 * @example
 * ```ts
 * import { ProviderError } from "@amber/providers";
 * const error = new ProviderError("listing models at http://127.0.0.1:1/v1/models failed: 503", {
 *   url: "http://127.0.0.1:1/v1/models",
 *   retryable: true,
 *   status: 503,
 * });
 * console.log(error.name, error.status, error.retryable); // ProviderError 503 true
 * ```
 */
export class ProviderError extends AmberError {
  /** The HTTP status, when there was a response. */
  readonly status?: number;
  /** Whether trying again later may succeed. */
  readonly retryable: boolean;
  /** The URL requested. */
  readonly url: string;
  /** Creates the error; `options.cause` keeps the underlying failure. */
  constructor(message: string, details: ProviderErrorDetails, options?: ErrorOptions) {
    super(message, options);
    this.name = "ProviderError";
    this.url = details.url;
    this.retryable = details.retryable;
    if (details.status !== undefined) this.status = details.status;
  }
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};
const REDACTED = "[redacted]";

/** Carries an exception the consumer's sink threw through the decoders, to be rethrown. */
class SinkThrew {
  constructor(readonly error: unknown) {}
}

/** The default sleep: a timer that rejects at once when the signal aborts. */
function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
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

/** One attempt's failure, before deciding whether to retry it. */
interface Failure {
  readonly message: string;
  readonly retryable: boolean;
  readonly status?: number;
  /** The wait the server asked for, uncapped; undefined when it named none. */
  readonly serverDelayMs?: number;
}

/**
 * Talks to one model API through a {@linkcode Dialect}: streams chat responses into a sink and
 * lists models. Every provider or network failure of a stream reaches the sink as one `error`
 * event then `finish` (exactly one `finish` per call, always last); nothing is thrown for them.
 * The API key never appears in what the client reports, even when a server echoes it back.
 *
 * @example
 * ```ts
 * import type { Dialect, StreamEvent } from "@amber/core";
 * import { ProviderClient } from "@amber/providers";
 * const dialect: Dialect = {
 *   flavor: "demo",
 *   chatRequest: (settings) => ({ url: `${settings.baseUrl}/chat`, method: "POST", headers: {}, body: "{}" }),
 *   decoder: () => ({ event() {}, end(sink) { sink({ type: "finish", reason: "stop" }); } }),
 *   isRetryable: () => false,
 *   errorMessage: (status) => `status ${status}`,
 *   isContextOverflow: () => false,
 * };
 * const client = new ProviderClient(dialect, { baseUrl: "http://127.0.0.1:9", apiKey: "sk-secret" }, {
 *   retry: { maxAttempts: 1 },
 * });
 * const events: StreamEvent[] = [];
 * const outcome = await client.stream({ model: "m", messages: [], tools: [] }, (e) => events.push(e));
 * console.log(outcome.status, events.map((e) => e.type)); // 0 ["error", "finish"]
 * ```
 */
export class ProviderClient {
  readonly #dialect: Dialect;
  readonly #settings: ProviderSettings;
  readonly #timeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #retry: RetryPolicy;
  readonly #onRetry: ((info: RetryInfo) => void) | undefined;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  /** The forms of the key to scrub from every text the client reports, longest first. */
  readonly #secrets: readonly string[];

  /** Creates a client for the API at `settings.baseUrl`, speaking `dialect`. */
  constructor(dialect: Dialect, settings: ProviderSettings, options: ClientOptions = {}) {
    this.#dialect = dialect;
    this.#settings = settings;
    this.#timeoutMs = positive(options.timeoutMs, DEFAULT_TIMEOUT_MS);
    this.#idleTimeoutMs = positive(options.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS);
    const retry = options.retry ?? {};
    this.#retry = {
      maxAttempts: Math.max(1, Math.floor(positive(retry.maxAttempts, DEFAULT_RETRY.maxAttempts))),
      baseDelayMs: nonNegative(retry.baseDelayMs, DEFAULT_RETRY.baseDelayMs),
      maxDelayMs: nonNegative(retry.maxDelayMs, DEFAULT_RETRY.maxDelayMs),
      maxRetryAfterMs: nonNegative(retry.maxRetryAfterMs, DEFAULT_RETRY.maxRetryAfterMs),
    };
    this.#onRetry = options.onRetry;
    this.#sleep = options.sleep ?? realSleep;
    this.#random = options.random ?? Math.random;
    const key = settings.apiKey ?? "";
    const secrets = new Set<string>();
    if (key !== "") secrets.add(key);
    if (key.trim() !== "") secrets.add(key.trim());
    // A key URL-encoded into a query string reads differently in a URL.
    if (key.trim() !== "") secrets.add(encodeURIComponent(key.trim()));
    this.#secrets = [...secrets].sort((a, b) => b.length - a.length);
  }

  /**
   * Streams the response to `request` into `sink`. Resolves when the stream is over, however it
   * ended; `finish` has then reached the sink exactly once, unless the call was cancelled, in
   * which case nothing more reached the sink once `signal` aborted.
   *
   * Retries failed attempts (statuses the dialect or `x-should-retry` calls retryable, and
   * network errors before a response) after the server's `retry-after-ms` / `retry-after`, the
   * dialect's body delay, or an exponential backoff with full jitter. Never retries once the
   * body has started.
   *
   * @example
   * ```ts
   * import type { Dialect } from "@amber/core";
   * import { ProviderClient } from "@amber/providers";
   * const dialect = { flavor: "demo", chatRequest: () => ({ url: "http://127.0.0.1:9/chat", method: "POST", headers: {} }) } as unknown as Dialect;
   * const client = new ProviderClient(dialect, { baseUrl: "http://127.0.0.1:9", apiKey: "sk-…" });
   * const controller = new AbortController();
   * controller.abort(); // the user pressed Esc
   * const outcome = await client.stream(
   *   { model: "m", messages: [], tools: [] },
   *   (event) => { if (event.type === "text") console.log(event.delta); },
   *   controller.signal,
   * );
   * console.log(outcome.cancelled, outcome.attempts); // true 0
   * ```
   */
  async stream(
    request: ChatRequest,
    sink: StreamSink,
    signal?: AbortSignal,
  ): Promise<StreamOutcome> {
    try {
      return await this.#stream(request, sink, signal);
    } catch (error) {
      // The consumer's own sink threw: that is its bug to see, not a provider failure to report.
      if (error instanceof SinkThrew) throw error.error;
      throw error;
    }
  }

  async #stream(
    request: ChatRequest,
    sink: StreamSink,
    signal: AbortSignal | undefined,
  ): Promise<StreamOutcome> {
    const secrets = this.#secrets;
    let finished = false;
    let sawError = false;
    // The sink as the decoder and the client see it: nothing after `finish` or after an abort,
    // and the key scrubbed from the texts a server could have echoed it into.
    const out: StreamSink = (event) => {
      if (finished || signal?.aborted) return;
      if (event.type === "finish") {
        finished = true;
        if (event.raw !== undefined && secrets.length > 0) {
          event = { ...event, raw: redactWith(secrets, event.raw) };
        }
      } else if (event.type === "error") {
        sawError = true;
        if (secrets.length > 0) event = { ...event, message: redactWith(secrets, event.message) };
      }
      try {
        sink(event);
      } catch (error) {
        throw new SinkThrew(error);
      }
    };
    const fail = (failure: Failure, reportRetryAfter: boolean): void => {
      const event: StreamEvent = {
        type: "error",
        message: failure.message,
        retryable: failure.retryable,
        ...(failure.status === undefined ? {} : { status: failure.status }),
        ...(reportRetryAfter && failure.serverDelayMs !== undefined
          ? { retryAfterMs: Math.round(failure.serverDelayMs) }
          : {}),
      };
      out(event);
      out({ type: "finish", reason: "error" });
    };

    let spec: HttpRequestSpec;
    let url: string;
    try {
      spec = this.#dialect.chatRequest(this.#settings, request);
      url = this.#redact(spec.url);
    } catch (error) {
      // A dialect refusing the request (an unsupported message part, say) is no network failure.
      url = this.#redact(this.#settings.baseUrl);
      fail({
        message: this.#redact(
          `the ${this.#dialect.flavor} request could not be built: ${errorText(error)}`,
        ),
        retryable: false,
      }, false);
      return { status: 0, headers: new Headers(), attempts: 0, cancelled: false, url };
    }
    const headers = credentialSafeHeaders(spec.headers);

    let status = 0;
    let responseHeaders = new Headers();
    const outcome = (attempts: number, cancelled: boolean): StreamOutcome => ({
      status,
      headers: responseHeaders,
      attempts,
      cancelled,
      url,
    });

    const policy = this.#retry;
    for (let attempt = 1;; attempt++) {
      if (signal?.aborted) return outcome(attempt - 1, true);
      const controller = new AbortController();
      const forward = (): void => controller.abort(signal?.reason);
      signal?.addEventListener("abort", forward, { once: true });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, this.#timeoutMs);
      let failure: Failure | undefined;
      try {
        let response: Response | undefined;
        try {
          response = await fetch(spec.url, {
            method: spec.method,
            headers,
            ...(spec.body === undefined ? {} : { body: spec.body }),
            signal: controller.signal,
          });
        } catch (error) {
          if (signal?.aborted) return outcome(attempt, true);
          failure = {
            message: this.#redact(
              timedOut
                ? `no response from ${url} within ${seconds(this.#timeoutMs)}`
                : `cannot reach ${url}: ${networkReason(error)}`,
            ),
            retryable: true,
          };
        }
        if (response !== undefined) {
          status = response.status;
          responseHeaders = response.headers;
          if (response.ok) {
            clearTimeout(timer);
            const body = await this.#pipe(response, url, controller, out, signal);
            if (body === "cancelled") return outcome(attempt, true);
            if (body === "done") {
              if (!finished) out({ type: "finish", reason: sawError ? "error" : "other" });
              return outcome(attempt, false);
            }
            // The body failed before its first byte: nothing reached the sink, so it may be
            // retried like a failed connection.
            failure = body;
          } else {
            let text = "";
            try {
              text = await response.text();
            } catch {
              if (signal?.aborted) return outcome(attempt, true);
              // The error body is only a better message; the status alone still says enough.
            }
            failure = this.#httpFailure(response, text);
          }
        }
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", forward);
      }

      // `failure` is always set here; the check only narrows its type.
      if (signal?.aborted || failure === undefined) return outcome(attempt, true);
      const serverDelay = failure.serverDelayMs;
      const tooLong = serverDelay !== undefined && serverDelay > policy.maxRetryAfterMs;
      if (!failure.retryable || tooLong || attempt >= policy.maxAttempts) {
        fail(failure, true);
        return outcome(attempt, false);
      }
      const delayMs = serverDelay !== undefined ? Math.ceil(serverDelay) : Math.floor(
        this.#random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)),
      );
      this.#onRetry?.({
        attempt,
        delayMs,
        ...(failure.status === undefined ? {} : { status: failure.status }),
        message: failure.message,
      });
      try {
        await this.#sleep(delayMs, signal);
      } catch {
        // An abort ends the wait by rejecting; checked just below like any other abort.
      }
      if (signal?.aborted) return outcome(attempt, true);
    }
  }

  /**
   * Lists the model ids the API offers.
   *
   * @throws {ProviderError} when the protocol cannot list models, the API cannot be reached, it
   * answers with an error, or its answer cannot be read; the message names the URL.
   *
   * @example
   * ```ts
   * import type { Dialect } from "@amber/core";
   * import { ProviderClient, ProviderError } from "@amber/providers";
   * const dialect = { flavor: "bare" } as Dialect; // no modelsRequest
   * try {
   *   await new ProviderClient(dialect, { baseUrl: "http://127.0.0.1:9" }).models();
   * } catch (error) {
   *   console.log((error as ProviderError).message); // the bare protocol cannot list models
   * }
   * ```
   */
  async models(signal?: AbortSignal): Promise<string[]> {
    const dialect = this.#dialect;
    if (dialect.modelsRequest === undefined || dialect.parseModels === undefined) {
      throw new ProviderError(`the ${dialect.flavor} protocol cannot list models`, {
        url: this.#redact(this.#settings.baseUrl),
        retryable: false,
      });
    }
    const spec = dialect.modelsRequest(this.#settings);
    const url = this.#redact(spec.url);
    const controller = new AbortController();
    const forward = (): void => controller.abort(signal?.reason);
    if (signal?.aborted) controller.abort(signal.reason);
    signal?.addEventListener("abort", forward, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.#timeoutMs);
    let status: number;
    let text: string;
    try {
      const response = await fetch(spec.url, {
        method: spec.method,
        headers: credentialSafeHeaders(spec.headers),
        ...(spec.body === undefined ? {} : { body: spec.body }),
        signal: controller.signal,
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      const message = signal?.aborted
        ? `listing models at ${url} was cancelled`
        : timedOut
        ? `listing models at ${url} timed out after ${seconds(this.#timeoutMs)}`
        : `cannot reach ${url}: ${networkReason(error)}`;
      throw new ProviderError(
        this.#redact(message),
        { url, retryable: !signal?.aborted },
        { cause: this.#safeCause(error) },
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", forward);
    }
    if (status < 200 || status > 299) {
      throw new ProviderError(
        this.#redact(`listing models at ${url} failed: ${this.#errorMessage(status, text)}`),
        { url, status, retryable: this.#isRetryable(status, text) },
      );
    }
    try {
      return dialect.parseModels(text);
    } catch (error) {
      throw new ProviderError(
        this.#redact(`the models listing from ${url} could not be read: ${errorText(error)}`),
        { url, status, retryable: false },
        { cause: this.#safeCause(error) },
      );
    }
  }

  /**
   * Reads a 2xx body through the SSE and stream decoders. "done" at the end of the body (the
   * decoder's `end` has run), "cancelled" when `signal` aborted, or a retryable failure when the
   * body broke before its first byte; a break after it is reported to the sink here.
   */
  async #pipe(
    response: Response,
    url: string,
    controller: AbortController,
    out: StreamSink,
    signal: AbortSignal | undefined,
  ): Promise<"done" | "cancelled" | Failure> {
    const decoder = this.#dialect.decoder();
    const unframed = decoder.unframed;
    const sse = new SseDecoder(
      (name, data) => decoder.event(name, data, out),
      unframed === undefined ? undefined : (line) => unframed.call(decoder, line, out),
    );
    const body = response.body;
    if (body === null) {
      decoder.end(out);
      return "done";
    }
    const reader = body.getReader();
    const idleMs = this.#idleTimeoutMs;
    // One timer for the whole body, re-armed only when it fires: a chunk costs a clock read,
    // not a clearTimeout/setTimeout pair.
    let lastChunkAt = Date.now();
    let idle = false;
    const watch = (): void => {
      const quiet = Date.now() - lastChunkAt;
      if (quiet >= idleMs) {
        idle = true;
        controller.abort();
        reader.cancel().catch(() => {});
      } else {
        idleTimer = setTimeout(watch, idleMs - quiet);
      }
    };
    let idleTimer = setTimeout(watch, idleMs);
    let received = false;
    let inDecoder = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        lastChunkAt = Date.now();
        received = true;
        inDecoder = true;
        sse.pushBytes(value);
        inDecoder = false;
        if (signal?.aborted) break;
      }
      if (signal?.aborted) {
        await reader.cancel().catch(() => {});
        return "cancelled";
      }
      if (!idle) {
        inDecoder = true;
        sse.end();
        decoder.end(out);
        inDecoder = false;
        return "done";
      }
    } catch (error) {
      if (error instanceof SinkThrew) {
        reader.cancel().catch(() => {});
        throw error;
      }
      if (signal?.aborted) return "cancelled";
      if (inDecoder) {
        // The dialect threw on what the server sent: report it, read no further.
        reader.cancel().catch(() => {});
        out({
          type: "error",
          message: this.#redact(
            `the response from ${url} could not be decoded: ${errorText(error)}`,
          ),
          retryable: false,
          status: response.status,
        });
        out({ type: "finish", reason: "error" });
        return "done";
      }
      if (!idle && !received) {
        return {
          message: this.#redact(`the connection to ${url} dropped: ${networkReason(error)}`),
          retryable: true,
        };
      }
      if (!idle) {
        this.#broken(
          out,
          decoder.end.bind(decoder),
          `the connection to ${url} dropped mid-stream: ${networkReason(error)}`,
        );
        return "done";
      }
    } finally {
      clearTimeout(idleTimer);
    }
    // The idle watchdog fired.
    const message = `no data from ${url} for ${seconds(idleMs)}`;
    if (!received) return { message: this.#redact(message), retryable: true };
    this.#broken(out, decoder.end.bind(decoder), `${message}; the connection dropped mid-stream`);
    return "done";
  }

  /** Reports a stream that broke after it started; the decoder's own end can add nothing. */
  #broken(out: StreamSink, end: (sink: StreamSink) => void, message: string): void {
    out({ type: "error", message: this.#redact(message), retryable: true });
    out({ type: "finish", reason: "error" });
    // Lets the decoder settle; the guarded sink drops all it emits, a second finish included.
    try {
      end(out);
    } catch {
      // A decoder failing on a truncated stream changes nothing: the error is reported.
    }
  }

  #httpFailure(response: Response, body: string): Failure {
    const status = response.status;
    const shouldRetry = response.headers.get("x-should-retry");
    const retryable = shouldRetry === "true"
      ? true
      : shouldRetry === "false"
      ? false
      : this.#isRetryable(status, body);
    let serverDelayMs = headerDelayMs(response.headers);
    if (serverDelayMs === undefined) {
      try {
        const fromBody = this.#dialect.retryDelayMs?.(status, body);
        if (fromBody !== undefined && Number.isFinite(fromBody) && fromBody >= 0) {
          serverDelayMs = fromBody;
        }
      } catch {
        // An unreadable retry hint is no hint.
      }
    }
    return {
      message: this.#redact(this.#errorMessage(status, body)),
      retryable,
      status,
      ...(serverDelayMs === undefined ? {} : { serverDelayMs }),
    };
  }

  #isRetryable(status: number, body: string): boolean {
    try {
      return this.#dialect.isRetryable(status, body);
    } catch {
      return status === 429 || status >= 500;
    }
  }

  #errorMessage(status: number, body: string): string {
    try {
      return this.#dialect.errorMessage(status, body);
    } catch {
      return `HTTP ${status}`;
    }
  }

  #redact(text: string): string {
    return redactWith(this.#secrets, text);
  }

  /** The cause to attach to a thrown error: the original unless its text holds the key. */
  #safeCause(error: unknown): unknown {
    const text = error instanceof Error ? `${error.message} ${String(error.cause)}` : String(error);
    return this.#secrets.some((s) => text.includes(s))
      ? new Error(this.#redact(errorText(error)))
      : error;
  }
}

function redactWith(secrets: readonly string[], text: string): string {
  for (const secret of secrets) {
    if (text.includes(secret)) text = text.split(secret).join(REDACTED);
  }
  return text;
}

/**
 * The headers to send: every empty value dropped (an empty key must read as "no key", never as
 * an empty credential), and a bearer credential without a token dropped too.
 */
function credentialSafeHeaders(spec: { readonly [name: string]: string }): Headers {
  const headers = new Headers();
  for (const name in spec) {
    const value = spec[name];
    if (typeof value !== "string") continue;
    const trimmed = value.trim();
    if (trimmed === "") continue;
    if (/^bearer$/i.test(trimmed)) continue;
    headers.set(name, value);
  }
  return headers;
}

/** The wait `retry-after-ms` or `retry-after` (seconds or an HTTP date) asks for. */
function headerDelayMs(headers: Headers): number | undefined {
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

/** A short reason for a failed connection, without the runtime's request dump. */
function networkReason(error: unknown): string {
  const chain: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    chain.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  const text = chain.join(" ");
  if (/connection refused|ECONNREFUSED/i.test(text)) return "connection refused";
  if (
    /dns error|failed to lookup|name or service not known|no such host|ENOTFOUND|nodename/i.test(
      text,
    )
  ) {
    return "the host name could not be resolved";
  }
  if (/connection reset|ECONNRESET/i.test(text)) return "connection reset";
  if (/error reading a body|unexpected eof|connection closed/i.test(text)) {
    return "the server closed the connection";
  }
  if (/certificate|tls|ssl/i.test(text)) return `TLS failure (${lastLine(text)})`;
  if (/timed out|ETIMEDOUT/i.test(text)) return "connection timed out";
  return lastLine(chain[chain.length - 1] ?? "unknown error");
}

function lastLine(text: string): string {
  // Deno prefixes "error sending request for url (...)": the URL is already in our message.
  return text.replace(/^error sending request for url \([^)]*\):\s*/i, "").trim() ||
    "unknown error";
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function seconds(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const s = ms / 1_000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

function nonNegative(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;
}
