/**
 * The OpenAI Chat Completions dialect (`flavor: "openai"`): the shared protocol that OpenAI and
 * most compatible servers (OpenRouter, DeepSeek, Moonshot, vLLM, Ollama, ...) speak, and the
 * protocol an unknown flavor falls back to.
 *
 * @example
 * ```ts
 * import { openaiDialect } from "@amber/providers/openai";
 * import assert from "node:assert/strict";
 * const dialect = openaiDialect();
 * const request = dialect.chatRequest(
 *   { baseUrl: "https://api.openai.com/v1", apiKey: "sk-test" },
 *   { model: "gpt-4.1", messages: [{ role: "user", content: "Hi" }], tools: [] },
 * );
 * assert.equal(request.url, "https://api.openai.com/v1/chat/completions");
 * ```
 *
 * @module
 */

import type {
  ChatRequest,
  FinishReason,
  HttpRequestSpec,
  ProviderSettings,
  StreamDecoder,
  StreamEvent,
  StreamSink,
  SyncDialect,
} from "@amber/core";
import {
  type DecodedError,
  emitFailure,
  isOpenAIContextOverflow,
  isOpenAIRetryable,
  jsonHeaders,
  malformedChunk,
  modelsRequest,
  openaiErrorMessage,
  parseOpenAIModels,
  type PendingCall,
  streamError,
  trimBase,
  unframedError,
  usageEvent,
} from "./_openai_shared.ts";
import { ChatCompletionsBody } from "./_chat_completions_body.ts";

/**
 * Options of {@linkcode openaiDialect}.
 *
 * @example
 * ```ts
 * import { openaiDialect, type OpenAIDialectOptions } from "@amber/providers/openai";
 * import assert from "node:assert/strict";
 * // A server that predates `max_completion_tokens`.
 * const options: OpenAIDialectOptions = { maxTokensField: "max_tokens" };
 * assert.equal(openaiDialect(options).flavor, "openai");
 * ```
 */
export interface OpenAIDialectOptions {
  /**
   * The body field that carries {@linkcode ChatRequest.maxTokens}. OpenAI deprecated
   * `max_tokens` and rejects it for its reasoning models, so the default is
   * `max_completion_tokens`; a compatible server that only knows the old name can ask for it.
   */
  readonly maxTokensField?: "max_completion_tokens" | "max_tokens";
}

/**
 * The OpenAI Chat Completions dialect.
 *
 * Requests: `POST {baseUrl}/chat/completions` with `stream: true` and
 * `stream_options.include_usage`; `authorization: Bearer <key>` only when there is a key.
 * System messages stay where they are. An assistant message's reasoning goes back only to the
 * kind of server that sent it, in the field it came in (`reasoning_content` or `reasoning`, as
 * the message's `reasoningField` records; OpenAI itself sends none and rejects unknown
 * fields): DeepSeek's thinking mode needs it for the turn under way and for every turn that
 * called tools, and ignores it elsewhere, so other turns' reasoning is left out. A tool message
 * takes text only, so when `settings.images` is true the images of a run of tool results follow
 * it as one user message of `image_url` data URLs; otherwise a line of each result says what
 * was left out. Each committed message is serialized once per dialect instance and the body
 * joined from those pieces, so building a request costs little more at step 1,000 than at 20.
 *
 * Decoding: text from `delta.content`; reasoning from `delta.reasoning_content` or
 * `delta.reasoning` (compatible servers), each delta naming its field; usage with cache reads
 * from `prompt_tokens_details.cached_tokens` (DeepSeek: `prompt_cache_hit_tokens`) and
 * reasoning tokens from `completion_tokens_details`; tool calls by `index`, started when their
 * name is known, ended (in index order, `"{}"` for empty arguments) at the finish reason; a call
 * that never got a name is dropped. The finish is held until `[DONE]` (or the end of the stream)
 * because OpenAI sends the usage chunk after the finish reason; usage is reported once (the last
 * total, for servers that repeat it); a `stop` after tool calls is reported as `tool_calls`, as
 * some compatible servers say `stop` for those. An `{"error":...}` object in the
 * stream, a chunk that is not JSON, or a stream cut before any finish reason ends the response
 * with an `error` event and `finish: error`: a stream with a corrupt chunk cannot be trusted.
 *
 * @example
 * ```ts
 * import { openaiDialect } from "@amber/providers/openai";
 * import type { StreamEvent } from "@amber/core";
 * import assert from "node:assert/strict";
 * const events: StreamEvent[] = [];
 * const sink = (event: StreamEvent) => events.push(event);
 * const decoder = openaiDialect().decoder();
 * decoder.event(undefined, '{"choices":[{"delta":{"content":"Hi"}}]}', sink);
 * decoder.event(undefined, '{"choices":[{"delta":{},"finish_reason":"stop"}]}', sink);
 * decoder.event(undefined, "[DONE]", sink);
 * assert.deepEqual(events.map((e) => e.type), ["text", "finish"]);
 * ```
 */
export function openaiDialect(options: OpenAIDialectOptions = {}): SyncDialect {
  const body = new ChatCompletionsBody(options.maxTokensField ?? "max_completion_tokens");
  return {
    flavor: "openai",
    chatRequest(settings: ProviderSettings, request: ChatRequest): HttpRequestSpec {
      return {
        url: `${trimBase(settings.baseUrl)}/chat/completions`,
        method: "POST",
        headers: jsonHeaders(settings.apiKey),
        body: body.build(settings, request),
      };
    },
    decoder(): StreamDecoder {
      return new ChatCompletionsDecoder();
    },
    isRetryable: isOpenAIRetryable,
    errorMessage: openaiErrorMessage,
    isContextOverflow: isOpenAIContextOverflow,
    modelsRequest,
    parseModels: parseOpenAIModels,
  };
}

// ---------------------------------------------------------------------------------------------
// Decoding

interface WireToolCall {
  readonly index?: number;
  readonly id?: string | null;
  readonly function?: { readonly name?: string | null; readonly arguments?: string | null } | null;
}

interface WireDelta {
  readonly content?: string | null;
  readonly reasoning_content?: string | null;
  readonly reasoning?: string | null;
  readonly tool_calls?: readonly (WireToolCall | null)[] | null;
}

interface WireChoice {
  readonly delta?: WireDelta | null;
  readonly finish_reason?: string | null;
}

interface WireUsage {
  readonly prompt_tokens?: number | null;
  readonly completion_tokens?: number | null;
  readonly prompt_tokens_details?: { readonly cached_tokens?: number | null } | null;
  readonly completion_tokens_details?: { readonly reasoning_tokens?: number | null } | null;
  /** DeepSeek: the prompt tokens read from its context cache. */
  readonly prompt_cache_hit_tokens?: number | null;
  /** DeepSeek: the prompt tokens not in its cache. */
  readonly prompt_cache_miss_tokens?: number | null;
  /** Moonshot: the prompt tokens read from its cache. */
  readonly cached_tokens?: number | null;
}

interface WireChunk {
  readonly choices?: readonly (WireChoice | null)[] | null;
  readonly usage?: WireUsage | null;
  readonly error?: unknown;
}

/** Decodes one Chat Completions stream; see {@linkcode openaiDialect}. */
class ChatCompletionsDecoder implements StreamDecoder {
  /** Calls by their wire index (a sparse array: index order is iteration order). */
  #calls: (PendingCall | undefined)[] = [];
  #ended = 0;
  #reason: FinishReason | undefined = undefined;
  #raw: string | undefined = undefined;
  #usage: WireUsage | undefined = undefined;
  #finished = false;

  event(name: string | undefined, data: string, sink: StreamSink): void {
    if (this.#finished) return;
    if (data.length === 0) return; // an empty keep-alive `data:` line
    if (data === "[DONE]") {
      this.#complete(sink);
      return;
    }
    let chunk: WireChunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      this.#malformed(data, sink);
      return;
    }
    if (chunk === null || typeof chunk !== "object") {
      this.#malformed(data, sink);
      return;
    }
    if ((chunk.error !== undefined && chunk.error !== null) || name === "error") {
      this.#fail(sink, streamError(chunk.error ?? chunk));
      return;
    }
    const choices = chunk.choices;
    if (choices !== undefined && choices !== null && choices.length > 0) {
      const choice = choices[0];
      if (choice !== null && choice !== undefined) {
        const delta = choice.delta;
        if (delta !== undefined && delta !== null) {
          // The field is kept with the reasoning: it goes back in the same one.
          const reasoning = delta.reasoning_content;
          if (reasoning !== undefined && reasoning !== null) {
            if (reasoning.length > 0) {
              sink({ type: "reasoning", delta: reasoning, field: "reasoning_content" });
            }
          } else if (typeof delta.reasoning === "string" && delta.reasoning.length > 0) {
            sink({ type: "reasoning", delta: delta.reasoning, field: "reasoning" });
          }
          const content = delta.content;
          if (typeof content === "string" && content.length > 0) {
            sink({ type: "text", delta: content });
          }
          const calls = delta.tool_calls;
          if (calls !== undefined && calls !== null) this.#toolCalls(calls, sink);
        }
        const reason = choice.finish_reason;
        if (typeof reason === "string" && reason.length > 0) {
          // OpenRouter reports a mid-stream failure as finish_reason "error" with no error object.
          if (reason === "error") {
            this.#fail(sink, {
              message: "the provider ended the response with an error",
              retryable: true,
            });
            return;
          }
          this.#reason = finishReason(reason);
          this.#raw = reason;
          // Calls are complete once the finish reason arrives; report them before the usage.
          this.#endCalls(sink);
        }
      }
    }
    const usage = chunk.usage;
    // Some servers repeat a running total on every chunk: keep the last, report it once.
    if (usage !== undefined && usage !== null) this.#usage = usage;
  }

  unframed(line: string, sink: StreamSink): void {
    if (this.#finished) return;
    const error = unframedError(line);
    if (error !== undefined) this.#fail(sink, error);
  }

  end(sink: StreamSink): void {
    if (this.#finished) return;
    if (this.#reason === undefined) {
      this.#fail(sink, {
        message: "the stream ended before the model finished (no finish reason, no [DONE])",
        retryable: true,
      });
      return;
    }
    this.#complete(sink);
  }

  #toolCalls(fragments: readonly (WireToolCall | null)[], sink: StreamSink): void {
    const calls = this.#calls;
    for (let i = 0; i < fragments.length; i++) {
      const fragment = fragments[i];
      if (fragment === null || typeof fragment !== "object") continue;
      const index = typeof fragment.index === "number" ? fragment.index : this.#slotFor(fragment);
      let call = calls[index];
      if (call === undefined) {
        call = { id: "", name: "", args: "", started: false, ended: false };
        calls[index] = call;
      }
      if (call.ended) continue;
      const id = fragment.id;
      if (call.id === "" && typeof id === "string") call.id = id;
      const fn = fragment.function;
      if (fn === undefined || fn === null) continue;
      const args = fn.arguments;
      const hasArgs = typeof args === "string" && args.length > 0;
      if (hasArgs) call.args += args;
      if (!call.started) {
        const name = fn.name;
        if (typeof name !== "string" || name.length === 0) continue;
        call.name = name;
        call.started = true;
        // A server that omits ids still needs one: tool results answer calls by id.
        if (call.id === "") call.id = `call_${index}`;
        sink({ type: "toolCallStart", index, id: call.id, name });
        // Arguments that came before the name (or with it) go out as one delta.
        if (call.args.length > 0) sink({ type: "toolCallDelta", index, delta: call.args });
      } else if (hasArgs) {
        sink({ type: "toolCallDelta", index, delta: args as string });
      }
    }
  }

  /**
   * Where a fragment without an `index` (a non-conforming server) belongs: the call with its id;
   * else a new call when it names one (only first fragments carry a name); else the latest call.
   */
  #slotFor(fragment: WireToolCall): number {
    const calls = this.#calls;
    const id = fragment.id;
    if (typeof id === "string" && id.length > 0) {
      for (let j = 0; j < calls.length; j++) if (calls[j]?.id === id) return j;
      return calls.length;
    }
    const name = fragment.function?.name;
    if (typeof name === "string" && name.length > 0) return calls.length;
    return calls.length === 0 ? 0 : calls.length - 1;
  }

  #endCalls(sink: StreamSink): void {
    const calls = this.#calls;
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index];
      if (call === undefined || call.ended || !call.started) continue;
      call.ended = true;
      this.#ended++;
      sink({
        type: "toolCallEnd",
        index,
        id: call.id,
        name: call.name,
        arguments: call.args.length === 0 ? "{}" : call.args,
      });
    }
  }

  #complete(sink: StreamSink): void {
    this.#endCalls(sink);
    const usage = this.#usage;
    if (usage !== undefined) sink(usageOf(usage));
    let reason = this.#reason;
    // `[DONE]` without a finish reason is still a clean end; and some compatible servers say
    // "stop" for a turn that called tools, which would end the agent's loop too early.
    if (reason === undefined || reason === "stop") reason = this.#ended > 0 ? "tool_calls" : "stop";
    this.#finished = true;
    sink(
      this.#raw === undefined
        ? { type: "finish", reason }
        : { type: "finish", reason, raw: this.#raw },
    );
  }

  #malformed(data: string, sink: StreamSink): void {
    this.#fail(sink, malformedChunk(data));
  }

  #fail(sink: StreamSink, error: DecodedError): void {
    this.#finished = true;
    emitFailure(sink, error);
  }
}

function finishReason(raw: string): FinishReason {
  switch (raw) {
    case "stop":
    case "end_turn":
      return "stop";
    case "length":
    case "max_tokens":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    default:
      return "other";
  }
}

function usageOf(usage: WireUsage): StreamEvent {
  const hits = usage.prompt_cache_hit_tokens;
  const misses = usage.prompt_cache_miss_tokens;
  // DeepSeek counts cache hits and misses apart (their sum is the prompt); Moonshot reports
  // `cached_tokens` beside the totals; OpenAI and most others under `prompt_tokens_details`.
  const prompt = usage.prompt_tokens ??
    (typeof hits === "number" && typeof misses === "number" ? hits + misses : undefined);
  return usageEvent(
    prompt,
    usage.completion_tokens,
    usage.prompt_tokens_details?.cached_tokens ?? hits ?? usage.cached_tokens,
    usage.completion_tokens_details?.reasoning_tokens,
  );
}
