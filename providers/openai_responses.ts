/**
 * The OpenAI Responses dialect (`flavor: "openai_responses"`): `POST {baseUrl}/responses` with
 * named, typed stream events.
 *
 * @example
 * ```ts
 * import { openaiResponsesDialect } from "@amber/providers/openai-responses";
 * import assert from "node:assert/strict";
 * const request = openaiResponsesDialect().chatRequest(
 *   { baseUrl: "https://api.openai.com/v1" },
 *   { model: "gpt-5", messages: [{ role: "user", content: "Hi" }], tools: [] },
 * );
 * assert.equal(request.url, "https://api.openai.com/v1/responses");
 * assert.equal("authorization" in request.headers, false);
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
import { ResponsesBody } from "./_responses_body.ts";

/**
 * The OpenAI Responses dialect.
 *
 * Requests: system messages are joined (blank line between) into `instructions`; user and
 * assistant text become input messages, an assistant's tool calls `function_call` items and
 * tool results `function_call_output` items; tools are sent with `strict: false` (amber's
 * schemas are not written for strict mode). `store: false`, since every request carries the
 * whole conversation. An assistant turn's reasoning is not sent back (the API only takes its
 * own encrypted reasoning items). A tool result's images go in its output as `input_image`
 * data URLs beside an `input_text` when `settings.images` is true; otherwise a line of its
 * text says what was left out. Each committed message is serialized once per dialect instance
 * and the body joined from those pieces, so a request's cost stays flat as the session grows.
 *
 * Decoding: `response.output_text.delta` is text; reasoning summary and reasoning text deltas
 * are reasoning; a `function_call` output item is a tool call indexed by its `output_index`,
 * ended with the arguments its `done` event reports. `response.completed` reports usage and
 * finishes with `tool_calls` when the model called a tool, else `stop` (cache reads from
 * `input_tokens_details`, reasoning from `output_tokens_details`); `response.incomplete`
 * finishes with `length` (or `content_filter`); an `error` event or `response.failed` reports an
 * error and finishes with `error`, as does a malformed chunk or a stream that ends before the
 * response does.
 *
 * @example
 * ```ts
 * import { openaiResponsesDialect } from "@amber/providers/openai-responses";
 * import type { StreamEvent } from "@amber/core";
 * import assert from "node:assert/strict";
 * const events: StreamEvent[] = [];
 * const decoder = openaiResponsesDialect().decoder();
 * const sink = (event: StreamEvent) => events.push(event);
 * decoder.event(undefined, '{"type":"response.output_text.delta","delta":"Hi"}', sink);
 * decoder.event(undefined, '{"type":"response.completed","response":{}}', sink);
 * assert.deepEqual(events.map((e) => e.type), ["text", "finish"]);
 * ```
 */
export function openaiResponsesDialect(): SyncDialect {
  const body = new ResponsesBody();
  return {
    flavor: "openai_responses",
    chatRequest(settings: ProviderSettings, request: ChatRequest): HttpRequestSpec {
      return {
        url: `${trimBase(settings.baseUrl)}/responses`,
        method: "POST",
        headers: jsonHeaders(settings.apiKey),
        body: body.build(settings, request),
      };
    },
    decoder(): StreamDecoder {
      return new ResponsesDecoder();
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

interface WireItem {
  readonly type?: string;
  readonly call_id?: string | null;
  readonly id?: string | null;
  readonly name?: string | null;
  readonly arguments?: string | null;
}

interface WireUsage {
  readonly input_tokens?: number | null;
  readonly output_tokens?: number | null;
  readonly input_tokens_details?: { readonly cached_tokens?: number | null } | null;
  readonly output_tokens_details?: { readonly reasoning_tokens?: number | null } | null;
}

interface WireResponse {
  readonly status?: string;
  readonly usage?: WireUsage | null;
  readonly error?: unknown;
  readonly incomplete_details?: { readonly reason?: string | null } | null;
}

interface WireEvent {
  readonly type?: string;
  readonly delta?: string;
  readonly output_index?: number;
  readonly summary_index?: number;
  readonly arguments?: string | null;
  readonly item?: WireItem | null;
  readonly response?: WireResponse | null;
  readonly error?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
}

/** Decodes one Responses stream; see {@linkcode openaiResponsesDialect}. */
class ResponsesDecoder implements StreamDecoder {
  /** Calls by output index (sparse: index order is iteration order). */
  #calls: (PendingCall | undefined)[] = [];
  #ended = 0;
  #finished = false;

  event(name: string | undefined, data: string, sink: StreamSink): void {
    if (this.#finished || data.length === 0) return;
    let event: WireEvent;
    try {
      event = JSON.parse(data);
    } catch {
      this.#fail(sink, malformedChunk(data));
      return;
    }
    if (event === null || typeof event !== "object") {
      this.#fail(sink, malformedChunk(data));
      return;
    }
    // Most frequent first: this switch runs once per token.
    switch (event.type ?? name) {
      case "response.output_text.delta": {
        const delta = event.delta;
        if (typeof delta === "string" && delta.length > 0) sink({ type: "text", delta });
        return;
      }
      case "response.function_call_arguments.delta": {
        const delta = event.delta;
        if (typeof delta !== "string" || delta.length === 0) return;
        const index = event.output_index ?? 0;
        const call = this.#call(index);
        if (call.ended) return;
        call.args += delta;
        if (call.started) sink({ type: "toolCallDelta", index, delta });
        return;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const delta = event.delta;
        if (typeof delta === "string" && delta.length > 0) sink({ type: "reasoning", delta });
        return;
      }
      case "response.reasoning_summary_part.added":
        // Summary parts are paragraphs: keep them apart in the one reasoning stream.
        if ((event.summary_index ?? 0) > 0) sink({ type: "reasoning", delta: "\n\n" });
        return;
      case "response.output_item.added": {
        const item = event.item;
        if (item?.type === "function_call") this.#start(event.output_index ?? 0, item, sink);
        return;
      }
      case "response.function_call_arguments.done": {
        const index = event.output_index ?? 0;
        const call = this.#calls[index];
        if (call === undefined || call.ended) return;
        if (typeof event.arguments === "string") call.args = event.arguments;
        this.#end(index, call, sink);
        return;
      }
      case "response.output_item.done": {
        const item = event.item;
        if (item?.type !== "function_call") return;
        const index = event.output_index ?? 0;
        // A server may skip `added`: the done item alone is a whole call.
        const call = this.#start(index, item, sink);
        if (call.ended) return;
        if (typeof item.arguments === "string") call.args = item.arguments;
        this.#end(index, call, sink);
        return;
      }
      case "response.completed":
        this.#complete(event.response, sink);
        return;
      case "response.incomplete":
        this.#incomplete(event.response, sink);
        return;
      case "response.failed": {
        const error = event.response?.error;
        this.#fail(
          sink,
          error === undefined || error === null
            ? { message: "the provider reported the response as failed", retryable: false }
            : streamError(error),
        );
        return;
      }
      case "error":
        // `{type:"error", code, message}` per the SDK types; recorded streams nest `error:{...}`.
        this.#fail(sink, streamError(event.error ?? event));
        return;
      default:
        return;
    }
  }

  unframed(line: string, sink: StreamSink): void {
    if (this.#finished) return;
    const error = unframedError(line);
    if (error !== undefined) this.#fail(sink, error);
  }

  end(sink: StreamSink): void {
    if (this.#finished) return;
    this.#fail(sink, {
      message: "the stream ended before the response completed",
      retryable: true,
    });
  }

  #call(index: number): PendingCall {
    let call = this.#calls[index];
    if (call === undefined) {
      call = { id: "", name: "", args: "", started: false, ended: false };
      this.#calls[index] = call;
    }
    return call;
  }

  #start(index: number, item: WireItem, sink: StreamSink): PendingCall {
    const call = this.#call(index);
    if (call.started) return call;
    const name = item.name;
    if (typeof name !== "string" || name.length === 0) return call;
    // `call_id` is what a function_call_output answers; `id` (fc_...) names the output item.
    const id = item.call_id || item.id || `call_${index}`;
    call.id = id;
    call.name = name;
    call.started = true;
    sink({ type: "toolCallStart", index, id, name });
    if (call.args.length === 0 && typeof item.arguments === "string") call.args = item.arguments;
    if (call.args.length > 0) sink({ type: "toolCallDelta", index, delta: call.args });
    return call;
  }

  #end(index: number, call: PendingCall, sink: StreamSink): void {
    // A call that never got a name cannot be run: it is dropped.
    if (!call.started) return;
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

  #endCalls(sink: StreamSink): void {
    const calls = this.#calls;
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index];
      if (call !== undefined && !call.ended) this.#end(index, call, sink);
    }
  }

  #complete(response: WireResponse | null | undefined, sink: StreamSink): void {
    this.#endCalls(sink);
    const usage = response?.usage;
    if (usage !== undefined && usage !== null) sink(usageOf(usage));
    const status = response?.status;
    const incomplete = response?.incomplete_details?.reason;
    let reason: FinishReason;
    let raw: string | undefined = status;
    if (status === "incomplete" && typeof incomplete === "string") {
      reason = incompleteReason(incomplete);
      raw = incomplete;
    } else {
      reason = this.#ended > 0 ? "tool_calls" : "stop";
    }
    this.#finished = true;
    sink(raw === undefined ? { type: "finish", reason } : { type: "finish", reason, raw });
  }

  #incomplete(response: WireResponse | null | undefined, sink: StreamSink): void {
    // Calls still open were cut off mid-arguments: they are dropped, not run half-written.
    const usage = response?.usage;
    if (usage !== undefined && usage !== null) sink(usageOf(usage));
    const raw = response?.incomplete_details?.reason;
    this.#finished = true;
    sink(
      typeof raw === "string"
        ? { type: "finish", reason: incompleteReason(raw), raw }
        : { type: "finish", reason: "length" },
    );
  }

  #fail(sink: StreamSink, error: DecodedError): void {
    this.#finished = true;
    emitFailure(sink, error);
  }
}

function incompleteReason(reason: string): FinishReason {
  switch (reason) {
    case "max_output_tokens":
      return "length";
    case "content_filter":
      return "content_filter";
    default:
      return "other";
  }
}

function usageOf(usage: WireUsage): StreamEvent {
  return usageEvent(
    usage.input_tokens,
    usage.output_tokens,
    usage.input_tokens_details?.cached_tokens,
    usage.output_tokens_details?.reasoning_tokens,
  );
}
