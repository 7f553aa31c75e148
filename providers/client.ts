/**
 * The core-owned HTTP client for model APIs: it sends what a dialect builds, with timeouts,
 * cancellation and retries that honour the server's retry-after, and pipes a streamed response
 * through the SSE decoder into the dialect's stream decoder. Plugins never open their own client.
 *
 * @module
 */

import type {
  AllowanceSnapshot,
  ChatRequest,
  Dialect,
  HttpRequestSpec,
  ModelInfo,
  ProviderSettings,
  StreamEvent,
  StreamSink,
} from "@amber/core";
import { credentialSafeHeaders, Redactor } from "./_credentials.ts";
import { errorText, networkReason } from "./_failure_text.ts";
import { httpFailure } from "./_http_failure.ts";
import { fetchListing, type ListingContext, unreadableListing } from "./_model_listing.ts";
import { parseModelFacts } from "./model_facts.ts";
import { ProviderError } from "./_provider_error.ts";
import {
  type Failure,
  positive,
  realSleep,
  retryDelayMs,
  type RetryInfo,
  type RetryPolicy,
  retryPolicy,
} from "./_retry.ts";
import { pipeBody, SinkThrew } from "./_stream_body.ts";
import { durationText, FetchTimeoutError, TimedFetch } from "./_timed_fetch.ts";

export { ProviderError, type ProviderErrorDetails } from "./_provider_error.ts";
export type { RetryInfo, RetryPolicy } from "./_retry.ts";

/**
 * Options of {@linkcode ProviderClient}.
 *
 * @example
 * ```ts
 * import type { ClientOptions } from "@amber/providers";
 * import assert from "node:assert/strict";
 * const notes: string[] = [];
 * const options: ClientOptions = {
 *   timeoutMs: 30_000,
 *   retry: { maxAttempts: 2 },
 *   onRetry: ({ attempt, delayMs, message }) =>
 *     notes.push(`attempt ${attempt} failed (${message}); retrying in ${delayMs} ms`),
 * };
 * options.onRetry?.({ attempt: 1, delayMs: 250, message: "503" });
 * assert.deepEqual(notes, ["attempt 1 failed (503); retrying in 250 ms"]);
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
  /**
   * The `fetch` every request goes through; the global one (looked up at each request) by
   * default. An embedder routes requests through its own stack with it, and a benchmark or test
   * answers from memory, without replacing `globalThis.fetch` for the whole process.
   */
  readonly fetch?: typeof globalThis.fetch;
}

/**
 * How a {@linkcode ProviderClient.stream} call ended. Failures are not thrown: they reached the
 * sink as an `error` event followed by `finish`.
 *
 * @example
 * ```ts
 * import type { StreamOutcome } from "@amber/providers";
 * import assert from "node:assert/strict";
 * function describe(outcome: StreamOutcome): string {
 *   return outcome.cancelled ? "cancelled" : `${outcome.status} after ${outcome.attempts} attempt(s)`;
 * }
 * const outcome = { status: 200, headers: new Headers(), attempts: 1, cancelled: false, url: "http://127.0.0.1:1" };
 * assert.equal(describe(outcome), "200 after 1 attempt(s)");
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

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/**
 * Talks to one model API through a {@linkcode Dialect}: streams chat responses into a sink and
 * lists models. Every provider or network failure of a stream reaches the sink as one `error`
 * event then `finish` (exactly one `finish` per call, always last); nothing is thrown for them.
 * The API key never appears in what the client reports, even when a server echoes it back.
 *
 * The dialect may answer with promises (one running in a sandboxed plugin's process does): the
 * client waits for those, and for a decoder's `end`, before it goes on; a value that is not a
 * promise is used as it comes, so an in-process dialect's stream pays no wait per event.
 *
 * @example
 * ```ts
 * import type { Dialect, StreamEvent } from "@amber/core";
 * import { ProviderClient } from "@amber/providers";
 * import assert from "node:assert/strict";
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
 * assert.equal(outcome.status, 0);
 * assert.deepEqual(events.map((e) => e.type), ["error", "finish"]);
 * ```
 *
 * @example Answering from memory with `fetch`
 * ```ts
 * import type { Dialect } from "@amber/core";
 * import { ProviderClient } from "@amber/providers";
 * import assert from "node:assert/strict";
 * const dialect = {
 *   flavor: "demo",
 *   modelsRequest: (settings) => ({ url: `${settings.baseUrl}/models`, method: "GET", headers: {} }),
 *   parseModels: (body) => JSON.parse(body),
 * } as Dialect;
 * const asked: string[] = [];
 * const client = new ProviderClient(dialect, { baseUrl: "https://api.example" }, {
 *   fetch: (input) => {
 *     asked.push(String(input));
 *     return Promise.resolve(new Response('["m-1","m-2"]'));
 *   },
 * });
 * assert.deepEqual(await client.models(), ["m-1", "m-2"]);
 * assert.deepEqual(asked, ["https://api.example/models"]);
 * ```
 */
export class ProviderClient {
  // Set at construction, or once a dialect given as a promise has loaded; every request waits
  // for that, so what runs on a response finds it set.
  #dialect: Dialect | undefined;
  readonly #loading: Promise<Dialect>;
  readonly #settings: ProviderSettings;
  readonly #timeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #retry: RetryPolicy;
  readonly #onRetry: ((info: RetryInfo) => void) | undefined;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #fetch: typeof globalThis.fetch | undefined;
  readonly #redactor: Redactor;

  /**
   * Creates a client for the API at `settings.baseUrl`, speaking `dialect`. The dialect may be
   * a promise (a flavor whose module is loaded only when a session uses it); the first request
   * waits for it, and one that fails to load fails that request, saying so.
   */
  constructor(
    dialect: Dialect | Promise<Dialect>,
    settings: ProviderSettings,
    options: ClientOptions = {},
  ) {
    if (dialect instanceof Promise) {
      this.#loading = dialect.then((loaded) => this.#dialect = loaded);
      // Reported by the request that needs it, not as an unhandled rejection before that.
      this.#loading.catch(() => {});
    } else {
      this.#dialect = dialect;
      this.#loading = Promise.resolve(dialect);
    }
    this.#settings = settings;
    this.#timeoutMs = positive(options.timeoutMs, DEFAULT_TIMEOUT_MS);
    this.#idleTimeoutMs = positive(options.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS);
    this.#retry = retryPolicy(options.retry);
    this.#onRetry = options.onRetry;
    this.#sleep = options.sleep ?? realSleep;
    this.#random = options.random ?? Math.random;
    this.#fetch = options.fetch;
    this.#redactor = new Redactor(settings.apiKey);
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
   * import assert from "node:assert/strict";
   * const dialect = { flavor: "demo", chatRequest: () => ({ url: "http://127.0.0.1:9/chat", method: "POST", headers: {} }) } as unknown as Dialect;
   * const client = new ProviderClient(dialect, { baseUrl: "http://127.0.0.1:9", apiKey: "sk-…" });
   * const controller = new AbortController();
   * controller.abort(); // the user pressed Esc
   * const seen: string[] = [];
   * const outcome = await client.stream(
   *   { model: "m", messages: [], tools: [] },
   *   (event) => seen.push(event.type),
   *   controller.signal,
   * );
   * assert.equal(outcome.cancelled, true);
   * assert.equal(outcome.attempts, 0);
   * assert.deepEqual(seen, []);
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
    const redactor = this.#redactor;
    let finished = false;
    let sawError = false;
    // The sink as the decoder and the client see it: nothing after `finish` or after an abort,
    // and the key scrubbed from the texts a server could have echoed it into.
    const out: StreamSink = (event) => {
      if (finished || signal?.aborted) return;
      if (event.type === "finish") {
        finished = true;
        if (event.raw !== undefined && redactor.active) {
          event = { ...event, raw: redactor.redact(event.raw) };
        }
      } else if (event.type === "error") {
        sawError = true;
        if (redactor.active) event = { ...event, message: redactor.redact(event.message) };
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
        ...(failure.contextOverflow === true ? { contextOverflow: true } : {}),
      };
      out(event);
      out({ type: "finish", reason: "error" });
    };

    let dialect: Dialect;
    try {
      dialect = this.#dialect ?? await this.#loading;
    } catch (error) {
      fail({
        message: this.#redact(`the dialect could not be loaded: ${errorText(error)}`),
        retryable: false,
      }, false);
      const url = this.#redact(this.#settings.baseUrl);
      return { status: 0, headers: new Headers(), attempts: 0, cancelled: false, url };
    }
    let spec: HttpRequestSpec;
    let url: string;
    try {
      const built = dialect.chatRequest(this.#settings, request);
      spec = built instanceof Promise ? await built : built;
      url = this.#redact(spec.url);
    } catch (error) {
      // A dialect refusing the request (an unsupported message part, say) is no network failure.
      url = this.#redact(this.#settings.baseUrl);
      fail({
        message: this.#redact(
          `the ${dialect.flavor} request could not be built: ${errorText(error)}`,
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

    for (let attempt = 1;; attempt++) {
      if (signal?.aborted) return outcome(attempt - 1, true);
      let failure: Failure | undefined;
      {
        using call = this.#timed(spec.url, signal);
        let response: Response | undefined;
        try {
          response = await call.fetch({
            method: spec.method,
            headers,
            ...(spec.body === undefined ? {} : { body: spec.body }),
          });
        } catch (error) {
          if (signal?.aborted) return outcome(attempt, true);
          failure = {
            message: this.#redact(
              error instanceof FetchTimeoutError
                ? `no response from ${url} within ${durationText(this.#timeoutMs)}`
                : `cannot reach ${url}: ${networkReason(error)}`,
            ),
            retryable: true,
          };
        }
        if (response !== undefined) {
          status = response.status;
          responseHeaders = response.headers;
          if (response.ok) {
            // The deadline was for the headers; the body has the idle watchdog instead.
            call.stopClock();
            let body: Awaited<ReturnType<typeof pipeBody>>;
            try {
              body = await pipeBody(response, dialect.decoder(), out, signal, {
                url,
                idleTimeoutMs: this.#idleTimeoutMs,
                redact: (text) => this.#redact(text),
                abort: () => call.abort(),
              });
            } catch (error) {
              if (error instanceof SinkThrew) throw error;
              // The dialect's decoder could not be made, or threw where the body reader does not
              // catch it: the step gets an error naming the dialect, not a crash.
              response.body?.cancel().catch(() => {});
              fail({
                message: this.#redact(
                  `the ${dialect.flavor} dialect could not decode the response from ${url}: ${
                    errorText(error)
                  }`,
                ),
                retryable: false,
                status,
              }, false);
              return outcome(attempt, false);
            }
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
            failure = await httpFailure(dialect, response, text, this.#redactor);
          }
        }
      }

      // `failure` is always set here; the check only narrows its type.
      if (signal?.aborted || failure === undefined) return outcome(attempt, true);
      const delayMs = retryDelayMs(this.#retry, failure, attempt, this.#random);
      if (delayMs === undefined) {
        fail(failure, true);
        return outcome(attempt, false);
      }
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
   * The dialect's passive allowance readout of a response's headers (`allowanceFromHeaders`),
   * or undefined when the dialect has none or the headers say nothing. A promise of it when the
   * dialect answers later (one in a sandboxed plugin's process); that promise rejects with the
   * same {@linkcode ProviderError} a throw would be.
   *
   * @throws {ProviderError} when the dialect's readout throws; the message names the dialect.
   *
   * @example
   * ```ts
   * import type { Dialect } from "@amber/core";
   * import { ProviderClient, ProviderError } from "@amber/providers";
   * import assert from "node:assert/strict";
   * const dialect = {
   *   flavor: "odd",
   *   allowanceFromHeaders: () => {
   *     throw new TypeError("no such header");
   *   },
   * } as unknown as Dialect;
   * const client = new ProviderClient(dialect, { baseUrl: "http://127.0.0.1:9" });
   * assert.throws(
   *   () => client.allowanceFromHeaders(new Headers()),
   *   (error) => error instanceof ProviderError && /the odd dialect could not read/.test(error.message),
   * );
   * ```
   */
  allowanceFromHeaders(
    headers: Headers,
  ): AllowanceSnapshot | undefined | Promise<AllowanceSnapshot | undefined> {
    const dialect = this.#dialect;
    // Headers come from a response, and no request is sent before the dialect is there.
    if (dialect === undefined) return undefined;
    let snapshot: ReturnType<NonNullable<Dialect["allowanceFromHeaders"]>>;
    try {
      snapshot = dialect.allowanceFromHeaders?.(headers);
    } catch (error) {
      throw this.#allowanceError(dialect, error);
    }
    if (snapshot instanceof Promise) {
      return snapshot.catch((error) => {
        throw this.#allowanceError(dialect, error);
      });
    }
    return snapshot;
  }

  #allowanceError(dialect: Dialect, error: unknown): ProviderError {
    return new ProviderError(
      this.#redact(
        `the ${dialect.flavor} dialect could not read the allowance from the response headers: ${
          errorText(error)
        }`,
      ),
      { url: this.#redact(this.#settings.baseUrl), retryable: false },
      { cause: this.#redactor.safeCause(error) },
    );
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
   * import assert from "node:assert/strict";
   * const dialect = { flavor: "bare" } as Dialect; // no modelsRequest
   * await assert.rejects(
   *   new ProviderClient(dialect, { baseUrl: "http://127.0.0.1:9" }).models(),
   *   (error) => error instanceof ProviderError &&
   *     error.message === "the bare protocol cannot list models",
   * );
   * ```
   */
  async models(signal?: AbortSignal): Promise<string[]> {
    const { dialect, url, status, text } = await fetchListing(this.#listingContext(), signal, true);
    try {
      // There is a parseModels: fetchListing checked, before anything was sent.
      const models = dialect.parseModels!(text);
      return models instanceof Promise ? await models : models;
    } catch (error) {
      throw unreadableListing(url, status, error, this.#redactor);
    }
  }

  /**
   * Lists the models the API offers with what its answer says of each (context window, output
   * limit, prices, abilities; see `parseModelFacts` of `@amber/providers/model-catalog`), by the
   * same request as {@linkcode ProviderClient.models}.
   *
   * @throws {ProviderError} when the protocol cannot list models, the API cannot be reached, it
   * answers with an error, or its answer cannot be read; the message names the URL.
   *
   * @example
   * ```ts
   * import type { Dialect, ProviderSettings } from "@amber/core";
   * import { ProviderClient } from "@amber/providers";
   * import assert from "node:assert/strict";
   * const dialect = {
   *   flavor: "demo",
   *   modelsRequest: (settings: ProviderSettings) => ({
   *     url: `${settings.baseUrl}/models`,
   *     method: "GET",
   *     headers: {},
   *   }),
   * } as unknown as Dialect;
   * const client = new ProviderClient(dialect, { baseUrl: "http://127.0.0.1:8080/v1" }, {
   *   fetch: () => Promise.resolve(new Response('{"data":[{"id":"local","max_model_len":32768}]}')),
   * });
   * const [model] = await client.listModelFacts();
   * assert.equal(model.contextWindow, 32_768);
   * ```
   */
  async listModelFacts(signal?: AbortSignal): Promise<ModelInfo[]> {
    const { url, status, text } = await fetchListing(this.#listingContext(), signal, false);
    try {
      return parseModelFacts(text);
    } catch (error) {
      throw unreadableListing(url, status, error, this.#redactor);
    }
  }

  /** What the models request needs from this client (the dialect as far as it has loaded). */
  #listingContext(): ListingContext {
    return {
      dialect: this.#dialect ?? this.#loading,
      settings: this.#settings,
      redactor: this.#redactor,
      timeoutMs: this.#timeoutMs,
      fetch: this.#fetch,
    };
  }

  /** One request under this client's deadline, its `fetch`, and the caller's `signal`. */
  #timed(url: string, signal: AbortSignal | undefined): TimedFetch {
    return new TimedFetch(url, { timeoutMs: this.#timeoutMs, signal, fetch: this.#fetch });
  }

  #redact(text: string): string {
    return this.#redactor.redact(text);
  }
}
