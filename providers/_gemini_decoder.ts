/**
 * Decoding Gemini's `streamGenerateContent?alt=sse` stream: `data:` chunks of
 * `GenerateContentResponse`, and errors Gemini writes raw (unframed, pretty-printed JSON) into
 * the stream, into amber's neutral stream events. The decisions it makes are listed in
 * `gemini.ts`. Private to the package.
 *
 * @module
 */

import type { FinishReason, StreamDecoder, StreamSink } from "@amber/core";
import { oneLine } from "./_error_text.ts";
import { madeUpCallId } from "./_gemini_call_ids.ts";
import { describeError, type GeminiError, readError, retryableStatus } from "./_gemini_errors.ts";
import { ArgumentsBuilder, type PartialArg } from "./_gemini_partial_args.ts";

interface GeminiChunk {
  candidates?: {
    content?: { parts?: GeminiPart[] };
    finishReason?: string;
    finishMessage?: string;
  }[];
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    cachedContentTokenCount?: number;
  };
  promptFeedback?: { blockReason?: string };
  error?: unknown;
}

interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: FunctionCall;
}

interface FunctionCall {
  id?: string;
  name?: string;
  args?: unknown;
  partialArgs?: PartialArg[];
  willContinue?: boolean;
}

/** A call whose arguments are streaming in (or one that came whole, as it ends). */
interface OpenCall {
  readonly index: number;
  readonly id: string;
  readonly name: string;
  signature: string | undefined;
  /** The arguments so far; undefined for a call that came whole. */
  readonly args: ArgumentsBuilder | undefined;
}

function finishOfReason(reason: string, calls: boolean): FinishReason {
  switch (reason) {
    case "STOP":
      // Gemini says STOP after function calls too.
      return calls ? "tool_calls" : "stop";
    case "MAX_TOKENS":
      return "length";
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
      return "content_filter";
    case "MALFORMED_FUNCTION_CALL":
    case "UNEXPECTED_TOOL_CALL":
      return "error";
    default:
      return "other";
  }
}

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const QUOTE = 34;
const BACKSLASH = 92;

/** Decodes one Gemini response stream into neutral events. */
export class GeminiDecoder implements StreamDecoder {
  #done = false;
  #calls = 0;
  #open: OpenCall | undefined = undefined;
  #finishReason: string | undefined = undefined;
  #usageSeen = false;
  #prompt = 0;
  #candidates = 0;
  #thoughts = 0;
  #cached = 0;
  // An unframed error being collected: its lines, bracket depth, and string state.
  #raw: string[] = [];
  #depth = 0;
  #inString = false;
  #escaped = false;

  /** One `data:` chunk. */
  event(_name: string | undefined, data: string, sink: StreamSink): void {
    if (this.#done) return;
    let chunk: GeminiChunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      // Retryable: a corrupt chunk is a transport or server accident, not a wrong request.
      this.#fail(sink, `malformed chunk from the provider: ${oneLine(data, 200)}`, true);
      return;
    }
    if (chunk === null || typeof chunk !== "object") return;
    if (chunk.error !== undefined) {
      this.#failWith(readError(chunk), data, sink);
      return;
    }
    // Usage first: a chunk that ends the response in error still reports what was billed.
    const usage = chunk.usageMetadata;
    if (usage !== undefined) {
      this.#usageSeen = true;
      this.#prompt = usage.promptTokenCount ?? this.#prompt;
      this.#candidates = usage.candidatesTokenCount ?? this.#candidates;
      this.#thoughts = usage.thoughtsTokenCount ?? this.#thoughts;
      this.#cached = usage.cachedContentTokenCount ?? this.#cached;
    }
    const candidate = chunk.candidates?.[0];
    if (candidate === undefined) {
      // The prompt itself was blocked: no candidate at all.
      if (chunk.promptFeedback?.blockReason !== undefined) this.#finishReason = "SAFETY";
      return;
    }
    const parts = candidate.content?.parts;
    if (parts !== undefined) {
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i];
        const text = part.text;
        if (part.functionCall !== undefined) {
          this.#call(part.functionCall, part.thoughtSignature, sink);
        } else {
          if (text !== undefined && text.length > 0) {
            sink(
              part.thought === true
                ? { type: "reasoning", delta: text }
                : { type: "text", delta: text },
            );
          }
          // Gemini signs the turn's text, often on a last part with no text of its own; the
          // signature goes back with the text.
          if (part.thoughtSignature) {
            sink({ type: "textSignature", signature: part.thoughtSignature });
          }
        }
      }
    }
    const reason = candidate.finishReason;
    if (reason === undefined) return;
    this.#finishReason = reason;
    // A call still streaming when the response finishes has all the arguments it will get.
    this.#close(sink);
    if (reason === "MALFORMED_FUNCTION_CALL" || reason === "UNEXPECTED_TOOL_CALL") {
      const detail = candidate.finishMessage ? `: ${oneLine(candidate.finishMessage)}` : "";
      // Retryable: the model may well produce a valid call on another try.
      this.#fail(sink, `${reason}${detail}`, true);
    }
  }

  /** A line outside SSE framing: part of an error Gemini wrote raw into the stream. */
  unframed(line: string, sink: StreamSink): void {
    if (this.#done) return;
    if (this.#raw.length === 0) {
      // Only JSON opens an error; stray text outside one is not the model's output.
      const first = line.trimStart().charCodeAt(0);
      if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return;
    }
    this.#raw.push(line);
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    if (depth <= 0) this.#flushRaw(sink);
  }

  /** The end of the stream. */
  end(sink: StreamSink): void {
    if (this.#done) return;
    // An error cut short by the end of the stream is still the error.
    if (this.#raw.length > 0) {
      this.#flushRaw(sink);
      return;
    }
    const raw = this.#finishReason;
    if (raw === undefined) {
      this.#open = undefined;
      this.#fail(sink, "the stream ended before the model finished (no finishReason)", true);
      return;
    }
    this.#done = true;
    this.#usage(sink);
    const reason = finishOfReason(raw, this.#calls > 0);
    sink({ type: "finish", reason, raw });
  }

  /**
   * One `functionCall` part: a whole call, or a piece of one whose arguments stream in. A
   * streamed call opens with its name and `willContinue`, goes on in parts without a name that
   * carry `partialArgs`, and ends with a part whose `willContinue` is not set (Gemini sends an
   * empty `functionCall`).
   */
  #call(call: FunctionCall, signature: string | undefined, sink: StreamSink): void {
    const open = this.#open;
    if (open !== undefined && !call.name) {
      if (signature && open.signature === undefined) open.signature = signature;
      if (call.args !== undefined) open.args?.merge(call.args);
      if (call.partialArgs !== undefined) open.args?.apply(call.partialArgs);
      if (call.willContinue !== true) this.#close(sink);
      return;
    }
    // A named call while another is open starts anew: the open one got all it will.
    this.#close(sink);
    const name = call.name;
    // A nameless call cannot be answered; it is dropped, as every dialect does.
    if (!name) return;
    const index = this.#calls++;
    const id = call.id || madeUpCallId();
    sink({ type: "toolCallStart", index, id, name });
    const opened: OpenCall = {
      index,
      id,
      name,
      signature: signature || undefined,
      args: undefined,
    };
    if (call.willContinue !== true && call.partialArgs === undefined) {
      // A whole call, the usual case: its arguments as Gemini wrote them.
      const args = call.args === undefined || call.args === null ? "{}" : JSON.stringify(call.args);
      this.#end(opened, args, sink);
      return;
    }
    const args = new ArgumentsBuilder();
    if (call.args !== undefined) args.merge(call.args);
    if (call.partialArgs !== undefined) args.apply(call.partialArgs);
    this.#open = { ...opened, args };
    if (call.willContinue !== true) this.#close(sink);
  }

  /** Ends the call whose arguments were streaming in, if one is. */
  #close(sink: StreamSink): void {
    const call = this.#open;
    if (call === undefined) return;
    this.#open = undefined;
    this.#end(call, call.args?.json() ?? "{}", sink);
  }

  #end(call: OpenCall, args: string, sink: StreamSink): void {
    const { index, id, name, signature } = call;
    sink({ type: "toolCallDelta", index, delta: args });
    sink(
      signature === undefined
        ? { type: "toolCallEnd", index, id, name, arguments: args }
        : { type: "toolCallEnd", index, id, name, arguments: args, signature },
    );
  }

  #flushRaw(sink: StreamSink): void {
    const text = this.#raw.join("\n");
    this.#raw = [];
    this.#depth = 0;
    this.#inString = false;
    this.#escaped = false;
    let error: GeminiError | undefined;
    try {
      error = readError(JSON.parse(text));
    } catch {
      error = undefined;
    }
    this.#failWith(error, text, sink);
  }

  /** Ends the response with Gemini's error object (or the raw text, when it is none). */
  #failWith(error: GeminiError | undefined, raw: string, sink: StreamSink): void {
    const code = error?.code;
    this.#fail(
      sink,
      describeError(undefined, error, raw),
      // An error without a code (unreadable) may be a passing accident too.
      code === undefined ? true : retryableStatus(code),
      code,
      error?.retryDelayMs,
    );
  }

  #usage(sink: StreamSink): void {
    if (!this.#usageSeen) return;
    sink({
      type: "usage",
      promptTokens: this.#prompt,
      completionTokens: this.#candidates + this.#thoughts,
      cachedTokens: this.#cached,
      reasoningTokens: this.#thoughts,
    });
  }

  /** Ends the response with an error: a stream that went wrong cannot be trusted further. */
  #fail(
    sink: StreamSink,
    message: string,
    retryable: boolean,
    status?: number,
    retryAfterMs?: number,
  ): void {
    this.#done = true;
    const event: {
      type: "error";
      message: string;
      retryable: boolean;
      status?: number;
      retryAfterMs?: number;
    } = { type: "error", message, retryable };
    if (status !== undefined) event.status = status;
    if (retryAfterMs !== undefined) event.retryAfterMs = retryAfterMs;
    sink(event);
    this.#usage(sink);
    sink({ type: "finish", reason: "error" });
  }
}
