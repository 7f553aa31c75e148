/**
 * The dialect contract: everything wire-specific about one LLM protocol. A dialect builds the
 * request, decodes the server-sent events into neutral stream events, and reads error bodies;
 * the core HTTP client and SSE decoder do the transport around it.
 *
 * @module
 */

import type { AllowanceSnapshot } from "./allowance.ts";
import type { Message } from "./message.ts";
import type { ToolDefinition } from "./tool.ts";

/** Why a response ended, the same for every protocol. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "error" | "other";

/**
 * One event of a decoded response stream. Tool calls are normalised to an id, a name and the
 * arguments as JSON text; `toolCallEnd` carries the whole call. A decoder emits `finish`
 * exactly once, last (after an `error`, with reason `error`).
 */
export type StreamEvent =
  | { readonly type: "text"; readonly delta: string }
  | {
    readonly type: "reasoning";
    readonly delta: string;
    /**
     * The wire field the delta came in, where a protocol has several (`reasoning_content` or
     * `reasoning` on OpenAI-compatible servers); kept on the message as `reasoningField`.
     */
    readonly field?: string;
  }
  /**
   * An opaque proof the provider attaches to the reasoning (Anthropic's thinking signature); it
   * must travel back with that reasoning on the next request.
   */
  | { readonly type: "reasoningSignature"; readonly signature: string }
  /**
   * An opaque proof the provider attaches to the answer's text (Gemini's `thoughtSignature` on
   * a text part); it travels back with that text, to the same provider only.
   */
  | { readonly type: "textSignature"; readonly signature: string }
  | {
    readonly type: "toolCallStart";
    readonly index: number;
    readonly id: string;
    readonly name: string;
  }
  | { readonly type: "toolCallDelta"; readonly index: number; readonly delta: string }
  | {
    readonly type: "toolCallEnd";
    readonly index: number;
    readonly id: string;
    readonly name: string;
    readonly arguments: string;
    /** An opaque proof the provider attached to the call (Gemini's `thoughtSignature`). */
    readonly signature?: string;
  }
  | {
    /**
     * Token counts (see `TokenUsage`): `promptTokens` includes the cached ones; cache reads
     * and writes are counted apart where the provider reports them.
     */
    readonly type: "usage";
    readonly promptTokens: number;
    readonly completionTokens: number;
    readonly cachedTokens?: number;
    readonly cacheWriteTokens?: number;
    readonly reasoningTokens?: number;
  }
  | { readonly type: "finish"; readonly reason: FinishReason; readonly raw?: string }
  | {
    readonly type: "error";
    readonly message: string;
    readonly retryable: boolean;
    readonly status?: number;
    readonly retryAfterMs?: number;
    /**
     * The provider said the request is too long for the model's context window (the dialect's
     * `isContextOverflow`); the kernel compacts and retries once.
     */
    readonly contextOverflow?: boolean;
  };

/** Receives stream events as they are decoded; the hot path, so a plain callback. */
export type StreamSink = (event: StreamEvent) => void;

/** Where and how to reach the service. */
export interface ProviderSettings {
  /** The API's base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** The key, when one is set; a dialect never sends an empty credential header. */
  readonly apiKey?: string;
  /**
   * Whether the model takes images (from the preset's `images`). Absent or false: a dialect
   * sends no image and says in the tool result's text what it left out.
   */
  readonly images?: boolean;
}

/** What the kernel asks a model for. */
export interface ChatRequest {
  /** The model. */
  readonly model: string;
  /** The conversation; system messages anywhere are the dialect's to place. */
  readonly messages: readonly Message[];
  /** The tools the model may call. */
  readonly tools: readonly ToolDefinition[];
  /** The most tokens to generate. */
  readonly maxTokens?: number;
  /** Sampling temperature. */
  readonly temperature?: number;
  /** Reasoning effort ("low", "medium", "high"), where the protocol has one. */
  readonly reasoningEffort?: string;
}

/** An HTTP request a dialect built; the core client sends it. */
export interface HttpRequestSpec {
  /** The full URL. */
  readonly url: string;
  /** The method. */
  readonly method: "GET" | "POST";
  /** The headers, credentials included (never with an empty value). */
  readonly headers: { readonly [name: string]: string };
  /** The JSON body, for a POST. */
  readonly body?: string;
}

/**
 * Decodes one response stream. The SSE layer hands over each event's name and data; a line that
 * is not SSE at all (some servers send a raw JSON error mid-stream) goes to `unframed`.
 *
 * A decoder in amber's process emits each event to the sink during the call that decoded it. A
 * decoder whose work happens elsewhere (a dialect in a plugin process) may emit the events of
 * `event` and `unframed` later, and returns a promise from `end`: every event reaches its sink
 * before that promise settles, and a rejection is the decoder's failure. Such a decoder reports
 * a failure of earlier frames by throwing from a later `event`, `unframed` or `end`.
 */
export interface StreamDecoder {
  /** One server-sent event. `name` is undefined for the default event type. */
  event(name: string | undefined, data: string, sink: StreamSink): void;
  /** A line that is not an SSE field. */
  unframed?(line: string, sink: StreamSink): void;
  /**
   * The stream ended; emits what is pending and `finish` if it has not been emitted yet. A
   * promise, for a decoder that answers later, settles once all of that reached the sink.
   */
  end(sink: StreamSink): void | Promise<void>;
}

/**
 * A wire protocol, as the core HTTP client uses it. Every member may answer with a promise: a
 * dialect contributed by a sandboxed plugin runs in the plugin's process, and the stand-in the
 * host gets for it answers later. A dialect written for amber's own process answers at once
 * ({@linkcode SyncDialect}); the client takes no detour for a value that is not a promise.
 *
 * `settings.apiKey` is the key the user configured for the provider: the dialect puts it in the
 * request's credential header, so a plugin's dialect sees that key (and only that one).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openaiDialect } from "@amber/providers/openai";
 * import type { Dialect } from "@amber/core";
 * async function chatUrl(dialect: Dialect): Promise<string> {
 *   const spec = await dialect.chatRequest(
 *     { baseUrl: "https://api.example/v1" },
 *     { model: "m", messages: [], tools: [] },
 *   );
 *   return spec.url;
 * }
 * assert.equal(await chatUrl(openaiDialect()), "https://api.example/v1/chat/completions");
 * ```
 */
export interface Dialect {
  /** The flavor this dialect speaks. */
  readonly flavor: string;
  /** Builds the streaming request for `request`. */
  chatRequest(
    settings: ProviderSettings,
    request: ChatRequest,
  ): HttpRequestSpec | Promise<HttpRequestSpec>;
  /** A fresh decoder for one response stream. */
  decoder(): StreamDecoder;
  /** Whether a failed response with this status and body is worth retrying. */
  isRetryable(status: number, body: string): boolean | Promise<boolean>;
  /** A clear one-line message for an error response (the provider's own words, with context). */
  errorMessage(status: number, body: string): string | Promise<string>;
  /** Whether an error says the prompt is too long for the model's context window. */
  isContextOverflow(status: number, body: string): boolean | Promise<boolean>;
  /** A retry delay the body asks for (Gemini's RetryInfo), when the headers give none. */
  retryDelayMs?(status: number, body: string): number | undefined | Promise<number | undefined>;
  /** The request that lists models, where the API can. */
  modelsRequest?(settings: ProviderSettings): HttpRequestSpec | Promise<HttpRequestSpec>;
  /** The model ids in a models response. */
  parseModels?(body: string): string[] | Promise<string[]>;
  /** Quota windows a response's headers report, where the provider sends them. */
  allowanceFromHeaders?(
    headers: Headers,
  ): AllowanceSnapshot | undefined | Promise<AllowanceSnapshot | undefined>;
}

/**
 * A dialect that answers at once, as every dialect running in amber's own process does (the
 * bundled ones return this type). Its results can be used without waiting.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openaiDialect } from "@amber/providers/openai";
 * import type { SyncDialect } from "@amber/core";
 * const dialect: SyncDialect = openaiDialect();
 * assert.equal(dialect.errorMessage(503, ""), "503: empty response body");
 * ```
 */
export interface SyncDialect extends Dialect {
  /** Builds the streaming request for `request`. */
  chatRequest(settings: ProviderSettings, request: ChatRequest): HttpRequestSpec;
  /** A fresh decoder for one response stream; it emits each event before the call returns. */
  decoder(): StreamDecoder;
  /** Whether a failed response with this status and body is worth retrying. */
  isRetryable(status: number, body: string): boolean;
  /** A clear one-line message for an error response (the provider's own words, with context). */
  errorMessage(status: number, body: string): string;
  /** Whether an error says the prompt is too long for the model's context window. */
  isContextOverflow(status: number, body: string): boolean;
  /** A retry delay the body asks for (Gemini's RetryInfo), when the headers give none. */
  retryDelayMs?(status: number, body: string): number | undefined;
  /** The request that lists models, where the API can. */
  modelsRequest?(settings: ProviderSettings): HttpRequestSpec;
  /** The model ids in a models response. */
  parseModels?(body: string): string[];
  /** Quota windows a response's headers report, where the provider sends them. */
  allowanceFromHeaders?(headers: Headers): AllowanceSnapshot | undefined;
}
