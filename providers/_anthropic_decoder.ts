/**
 * Decoding Anthropic's Messages stream: the named events `message_start`, `content_block_*`,
 * `message_delta`, `message_stop`, `ping` and `error`, into amber's neutral stream events. The
 * decisions it makes are listed in `anthropic.ts`. Private to the package.
 *
 * @module
 */

import type { FinishReason, StreamDecoder, StreamSink } from "@amber/core";
import { oneLine } from "./_error_text.ts";
import {
  describeError,
  isOverflowError,
  retryableType,
  STATUS_OF_ERROR_TYPE,
} from "./_anthropic_errors.ts";

/** Maps Anthropic's `stop_reason`. */
function finishOfStopReason(reason: string | undefined): FinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
    case "pause_turn":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "other";
  }
}

interface AnthropicEvent {
  type?: string;
  index?: number;
  message?: { usage?: AnthropicUsage };
  content_block?: {
    type?: string;
    id?: string;
    name?: string;
    text?: string;
    thinking?: string;
    input?: unknown;
  };
  delta?: {
    type?: string;
    text?: string;
    partial_json?: string;
    thinking?: string;
    signature?: string;
    stop_reason?: string | null;
  };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

// Nearly every event of a stream is a text or tool-argument delta in exactly this compact shape.
// Reading the one string it carries is a string-only JSON.parse, a fraction of parsing the whole
// object; anything else (other spacing, key order or fields) takes the full parse.
const DELTA_HEAD = '{"type":"content_block_delta","index":';
const TEXT_MID = ',"delta":{"type":"text_delta","text":';
const ARGS_MID = ',"delta":{"type":"input_json_delta","partial_json":';
const TEXT_DELTA = 1;
const ARGS_DELTA = 2;

/** A delta read by {@linkcode readDelta}: its kind (TEXT_DELTA or ARGS_DELTA), block index and string. */
interface Delta {
  kind: number;
  index: number;
  value: string;
}

/**
 * Reads `data` as a text or tool-argument delta in the compact shape, or returns false. Exact:
 * the string literal is handed to JSON.parse whole, so an unterminated or doubled literal throws
 * and falls back to the full parse, which reports it.
 */
function readDelta(data: string, out: Delta): boolean {
  const last = data.length - 2;
  if (
    !data.startsWith(DELTA_HEAD) || data.charCodeAt(last) !== 125 ||
    data.charCodeAt(last + 1) !== 125
  ) return false;
  let at = DELTA_HEAD.length;
  let index = 0;
  const first = at;
  for (let c = data.charCodeAt(at); c >= 48 && c <= 57; c = data.charCodeAt(++at)) {
    index = index * 10 + c - 48;
  }
  // No digits, a leading zero JSON forbids, or an index too long to be exact: the full parse.
  if (at === first || at - first > 9 || (data.charCodeAt(first) === 48 && at - first > 1)) {
    return false;
  }
  let kind: number;
  if (data.startsWith(TEXT_MID, at)) {
    kind = TEXT_DELTA;
    at += TEXT_MID.length;
  } else if (data.startsWith(ARGS_MID, at)) {
    kind = ARGS_DELTA;
    at += ARGS_MID.length;
  } else return false;
  if (data.charCodeAt(at) !== 34 || data.charCodeAt(last - 1) !== 34 || last - at < 2) {
    return false;
  }
  // Quoted at both ends, the literal parses to a string or not at all.
  let value: string;
  try {
    value = JSON.parse(data.slice(at, last));
  } catch {
    return false;
  }
  out.kind = kind;
  out.index = index;
  out.value = value;
  return true;
}

/** Which content blocks are tool calls being built, by block index. */
const TOOL = 1;
const OTHER = 2;

/** Decodes one Anthropic Messages stream into neutral events. */
export class AnthropicDecoder implements StreamDecoder {
  #done = false;
  #usageSeen = false;
  #inputTokens = 0;
  #outputTokens = 0;
  #cacheRead = 0;
  #cacheWrite = 0;
  #stopReason: string | undefined = undefined;
  // Parallel arrays by block index: no per-block object, no per-delta lookup beyond an index.
  #kind: number[] = [];
  #ids: string[] = [];
  #names: string[] = [];
  #args: string[] = [];
  #startInput: (string | undefined)[] = [];
  #delta: Delta = { kind: 0, index: 0, value: "" };

  /** One SSE event, by name (or by the `type` in its data when the name is missing). */
  event(name: string | undefined, data: string, sink: StreamSink): void {
    if (this.#done) return;
    const delta = this.#delta;
    if ((name === undefined || name === "content_block_delta") && readDelta(data, delta)) {
      if (delta.kind === TEXT_DELTA) {
        if (delta.value) sink({ type: "text", delta: delta.value });
        return;
      }
      const index = delta.index;
      if (this.#kind[index] !== TOOL || !delta.value) return;
      this.#args[index] += delta.value;
      sink({ type: "toolCallDelta", index, delta: delta.value });
      return;
    }
    let event: AnthropicEvent;
    try {
      event = JSON.parse(data);
    } catch {
      // Some compatible proxies end with OpenAI's sentinel; it carries nothing.
      if (data === "[DONE]") return;
      // Retryable: a corrupt chunk is a transport or server accident, not a wrong request.
      this.#fail(sink, `malformed chunk from the provider: ${oneLine(data, 200)}`, true);
      return;
    }
    if (event === null || typeof event !== "object") return;
    // Compatible servers may leave out `event:` lines; `type` in the data says the same.
    switch (name ?? event.type) {
      case "content_block_delta": {
        const delta = event.delta;
        if (delta === undefined) return;
        switch (delta.type) {
          case "text_delta":
            if (delta.text) sink({ type: "text", delta: delta.text });
            return;
          case "input_json_delta": {
            const index = event.index ?? 0;
            const part = delta.partial_json;
            if (this.#kind[index] !== TOOL || !part) return;
            this.#args[index] += part;
            sink({ type: "toolCallDelta", index, delta: part });
            return;
          }
          case "thinking_delta":
            if (delta.thinking) sink({ type: "reasoning", delta: delta.thinking });
            return;
          case "signature_delta":
            if (delta.signature) sink({ type: "reasoningSignature", signature: delta.signature });
            return;
          default:
            // citations_delta: nothing the neutral events carry.
            return;
        }
      }
      case "content_block_start":
        this.#blockStart(event, sink);
        return;
      case "content_block_stop": {
        const index = event.index ?? 0;
        if (this.#kind[index] !== TOOL) return;
        this.#kind[index] = OTHER;
        const args = this.#args[index];
        sink({
          type: "toolCallEnd",
          index,
          id: this.#ids[index],
          name: this.#names[index],
          arguments: args.length > 0 ? args : (this.#startInput[index] ?? "{}"),
        });
        return;
      }
      case "message_start":
        this.#readUsage(event.message?.usage);
        return;
      case "message_delta": {
        const reason = event.delta?.stop_reason;
        if (typeof reason === "string") this.#stopReason = reason;
        this.#readUsage(event.usage);
        return;
      }
      case "message_stop":
        this.#finish(sink, this.#stopReason);
        return;
      case "error": {
        const error = event.error;
        const type = error?.type;
        const body = { type, message: error?.message };
        this.#fail(
          sink,
          describeError(undefined, body, data),
          retryableType(type),
          type === undefined ? undefined : STATUS_OF_ERROR_TYPE[type],
          // Only with a message to read: a bare error event is no evidence of an overflow.
          typeof body.message === "string" && isOverflowError(body, data),
        );
        return;
      }
      default:
        // ping, and event types newer than this dialect.
        return;
    }
  }

  /** The end of the stream. */
  end(sink: StreamSink): void {
    if (this.#done) return;
    if (this.#stopReason !== undefined) {
      // A `message_delta` said how the message ended; only `message_stop` went missing.
      this.#finish(sink, this.#stopReason);
      return;
    }
    this.#fail(sink, "the stream ended before the message did (no stop_reason)", true);
  }

  #blockStart(event: AnthropicEvent, sink: StreamSink): void {
    const index = event.index ?? 0;
    const block = event.content_block;
    if (block === undefined) return;
    switch (block.type) {
      case "tool_use": {
        // A nameless call cannot be answered; it is dropped, as every dialect does.
        if (!block.name) {
          this.#kind[index] = OTHER;
          return;
        }
        const id = block.id ?? `toolu_${index}`;
        this.#kind[index] = TOOL;
        this.#ids[index] = id;
        this.#names[index] = block.name;
        this.#args[index] = "";
        // Streams start with `input: {}` and send the JSON as deltas; a server that sends the
        // whole input up front (and no deltas) still has it honoured.
        const input = block.input;
        this.#startInput[index] = input !== null && typeof input === "object" &&
            Object.keys(input).length > 0
          ? JSON.stringify(input)
          : undefined;
        sink({ type: "toolCallStart", index, id, name: block.name });
        return;
      }
      case "text":
        this.#kind[index] = OTHER;
        if (block.text) sink({ type: "text", delta: block.text });
        return;
      case "thinking":
        this.#kind[index] = OTHER;
        if (block.thinking) sink({ type: "reasoning", delta: block.thinking });
        return;
      default:
        // redacted_thinking, server tools: nothing amber can show or answer.
        this.#kind[index] = OTHER;
        return;
    }
  }

  #readUsage(usage: AnthropicUsage | undefined): void {
    if (usage === undefined || usage === null) return;
    this.#usageSeen = true;
    // message_delta's counts are cumulative, so the latest value of each field wins.
    if (typeof usage.input_tokens === "number") this.#inputTokens = usage.input_tokens;
    if (typeof usage.output_tokens === "number") this.#outputTokens = usage.output_tokens;
    if (typeof usage.cache_read_input_tokens === "number") {
      this.#cacheRead = usage.cache_read_input_tokens;
    }
    if (typeof usage.cache_creation_input_tokens === "number") {
      this.#cacheWrite = usage.cache_creation_input_tokens;
    }
  }

  /** The usage known so far: also after a failure, since the tokens were billed. */
  #usage(sink: StreamSink): void {
    if (!this.#usageSeen) return;
    sink({
      type: "usage",
      promptTokens: this.#inputTokens + this.#cacheRead + this.#cacheWrite,
      completionTokens: this.#outputTokens,
      cachedTokens: this.#cacheRead,
      cacheWriteTokens: this.#cacheWrite,
    });
  }

  #finish(sink: StreamSink, stopReason: string | undefined): void {
    this.#done = true;
    this.#usage(sink);
    const reason = finishOfStopReason(stopReason);
    sink(
      stopReason === undefined ? { type: "finish", reason } : {
        type: "finish",
        reason,
        raw: stopReason,
      },
    );
  }

  /** Ends the response with an error: a stream that went wrong cannot be trusted further. */
  #fail(
    sink: StreamSink,
    message: string,
    retryable: boolean,
    status?: number,
    contextOverflow = false,
  ): void {
    this.#done = true;
    sink({
      type: "error",
      message,
      retryable,
      ...(status === undefined ? {} : { status }),
      ...(contextOverflow ? { contextOverflow: true } : {}),
    });
    this.#usage(sink);
    sink({ type: "finish", reason: "error" });
  }
}
