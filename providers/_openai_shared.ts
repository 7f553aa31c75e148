/**
 * What the two OpenAI dialects (Chat Completions and Responses) share: URLs and headers, the
 * error object both send (as a response body and inside a stream), and the models listing.
 * Private to the package.
 *
 * @module
 */

import type { HttpRequestSpec, ProviderSettings, StreamEvent, StreamSink } from "@amber/core";
import { bodyLine, errorLine } from "./_error_text.ts";

/** `baseUrl` without a trailing slash (the contract asks for none; a user may still type one). */
export function trimBase(baseUrl: string): string {
  return baseUrl.endsWith("/") ? baseUrl.slice(0, -1) : baseUrl;
}

/** JSON content type, and the bearer credential only when there is a key. */
export function jsonHeaders(apiKey: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  // An empty key means "no key": an empty credential header is never sent.
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return headers;
}

/** `GET {baseUrl}/models`. */
export function modelsRequest(settings: ProviderSettings): HttpRequestSpec {
  const headers: Record<string, string> = {};
  if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;
  return { url: `${trimBase(settings.baseUrl)}/models`, method: "GET", headers };
}

/** An error read from a stream, before it becomes an `error` event. */
export interface DecodedError {
  /** What went wrong, one line. */
  readonly message: string;
  /** Whether trying again may help. */
  readonly retryable: boolean;
  /** An HTTP-like status the error carried, when it had one. */
  readonly status?: number;
  /** The error says the request does not fit the model's context window. */
  readonly contextOverflow?: boolean;
}

interface ErrorFields {
  readonly message?: string;
  readonly label?: string;
  readonly status?: number;
}

/** The message, code-or-type label and numeric code of an OpenAI-style error value. */
function errorFields(value: unknown): ErrorFields {
  if (typeof value === "string") return { message: value };
  if (value === null || typeof value !== "object") return {};
  const error = value as {
    message?: unknown;
    code?: unknown;
    type?: unknown;
    detail?: unknown;
    error?: unknown;
  };
  // `{"error": "text"}` and `{"error": {...}}` both occur; so does vLLM's top-level shape.
  if (error.error !== undefined && error.error !== null && error.message === undefined) {
    return errorFields(error.error);
  }
  const message = typeof error.message === "string"
    ? error.message
    : typeof error.detail === "string"
    ? error.detail
    : undefined;
  const code = error.code;
  const label = typeof code === "string" && code.length > 0
    ? code
    : typeof error.type === "string" && error.type.length > 0 && error.type !== "error"
    ? error.type
    : undefined;
  const status = typeof code === "number"
    ? code
    : typeof code === "string" && /^\d{3}$/.test(code)
    ? Number(code)
    : undefined;
  return { message, label, status };
}

// Codes and types that say "try again later" rather than "this request is wrong".
const RETRYABLE_LABELS = new Set([
  "server_error",
  "internal_error",
  "internal_server_error",
  "api_error",
  "rate_limit_exceeded",
  "rate_limit_error",
  "requests",
  "tokens",
  "overloaded",
  "overloaded_error",
  "service_unavailable",
  "server_is_overloaded",
  "slow_down",
  "timeout",
]);

/** An in-stream error object as an error to report: `<code or type>: <message>`. */
export function streamError(value: unknown): DecodedError {
  const fields = errorFields(value);
  const message = fields.message ?? clip(JSON.stringify(value) ?? String(value), 300);
  const status = fields.status;
  const retryable = status !== undefined
    ? isRetryableStatus(status)
    : fields.label !== undefined && RETRYABLE_LABELS.has(fields.label);
  const text = joinLines(errorLine({ label: fields.label, message }));
  const error: { message: string; retryable: boolean; status?: number; contextOverflow?: true } = {
    message: text,
    retryable,
  };
  if (status !== undefined) error.status = status;
  // A server that streams before it checks the prompt's length reports an overflow in-stream.
  if (status !== 429 && saysContextOverflow(text)) error.contextOverflow = true;
  return error;
}

/**
 * The error in a bare JSON line outside the SSE framing (how some servers report a failure), or
 * undefined for a line that is not one.
 */
export function unframedError(line: string): DecodedError | undefined {
  if (line.charCodeAt(0) !== 123 /* { */) return undefined;
  let value: { readonly error?: unknown } | null;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === "object" && value.error != null
    ? streamError(value.error)
    : undefined;
}

/** Reports `error` as an `error` event, then `finish: error`. */
export function emitFailure(sink: StreamSink, error: DecodedError): void {
  const event: {
    type: "error";
    message: string;
    retryable: boolean;
    status?: number;
    contextOverflow?: boolean;
  } = { type: "error", message: error.message, retryable: error.retryable };
  if (error.status !== undefined) event.status = error.status;
  if (error.contextOverflow === true) event.contextOverflow = true;
  sink(event);
  sink({ type: "finish", reason: "error" });
}

/** A tool call being streamed. */
export interface PendingCall {
  /** The call's id, once known. */
  id: string;
  /** The tool's name, once known. */
  name: string;
  /** The argument text so far. */
  args: string;
  /** Whether `toolCallStart` went out. */
  started: boolean;
  /** Whether `toolCallEnd` went out. */
  ended: boolean;
}

/** A `usage` event from a response's token counts; cached and reasoning only when reported. */
export function usageEvent(
  promptTokens: number | null | undefined,
  completionTokens: number | null | undefined,
  cachedTokens: number | null | undefined,
  reasoningTokens: number | null | undefined,
): StreamEvent {
  const event: {
    type: "usage";
    promptTokens: number;
    completionTokens: number;
    cachedTokens?: number;
    reasoningTokens?: number;
  } = {
    type: "usage",
    promptTokens: promptTokens ?? 0,
    completionTokens: completionTokens ?? 0,
  };
  if (typeof cachedTokens === "number") event.cachedTokens = cachedTokens;
  if (typeof reasoningTokens === "number") event.reasoningTokens = reasoningTokens;
  return event;
}

/** The error for a chunk that is not JSON. */
export function malformedChunk(data: string): DecodedError {
  // Retryable: a corrupt chunk is a transport or server accident, not a wrong request.
  return { message: `malformed chunk from the provider: ${clip(data, 200)}`, retryable: true };
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Whether an OpenAI error response is worth retrying: 408, 409, 429 and 5xx, except a 429 that
 * says the account is out of quota (retrying cannot help, and only delays the message).
 */
export function isOpenAIRetryable(status: number, body: string): boolean {
  if (!isRetryableStatus(status)) return false;
  return !(status === 429 && body.includes("insufficient_quota"));
}

/** `<status> <code or type>: <message>`, or the body clipped to 300 characters. */
export function openaiErrorMessage(status: number, body: string): string {
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(body);
  } catch {
    // Not JSON: a proxy's HTML page or plain text; shown clipped below.
  }
  // Some compatible servers (Gemini's OpenAI endpoint) wrap the error in an array.
  if (Array.isArray(parsed)) parsed = parsed[0];
  const fields = errorFields(parsed);
  if (fields.message !== undefined && fields.message.length > 0) {
    return errorLine({ status, label: fields.label, message: joinLines(fields.message) });
  }
  return bodyLine(status, clip(body.trim(), 300));
}

/**
 * How OpenAI and the servers that speak its protocols say a request does not fit the model's
 * context window, lower-cased: OpenAI's code and its two wordings (Chat Completions, which
 * vLLM, DeepSeek, Mistral, Groq and OpenRouter share, and Responses); llama.cpp's error type
 * and message; LM Studio's; Ollama's; Moonshot's; xAI's; Gemini's OpenAI endpoint; and
 * Anthropic's wording as routers pass it on.
 */
const OVERFLOW_WORDINGS: readonly string[] = [
  "context_length_exceeded",
  "maximum context length",
  "exceeds the context window",
  "exceed_context_size_error",
  "exceeds the available context size",
  "context size has been exceeded",
  "context the overflows",
  "greater than the context length",
  "exceeds the context length",
  "longer than the maximum model length",
  "exceeded model token limit",
  "maximum prompt length is",
  "exceeds the maximum number of tokens allowed",
  "prompt is too long",
];

/** Whether `text` says the request does not fit the model's context window. */
function saysContextOverflow(text: string): boolean {
  const lower = text.toLowerCase();
  for (const wording of OVERFLOW_WORDINGS) if (lower.includes(wording)) return true;
  return false;
}

/**
 * Whether the error says the prompt does not fit the model's context window. A 429 never does:
 * a rate limit on tokens per minute also speaks of a request too large.
 */
export function isOpenAIContextOverflow(status: number, body: string): boolean {
  return status !== 429 && saysContextOverflow(body);
}

/** The ids of a `{"data":[{"id":...}]}` listing, sorted; none for a body that is not one. */
export function parseOpenAIModels(body: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const data = (parsed as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return [];
  const ids: string[] = [];
  for (const model of data) {
    const id = (model as { id?: unknown } | null)?.id;
    if (typeof id === "string" && id.length > 0) ids.push(id);
  }
  return ids.sort();
}

/**
 * `text` on one line: line breaks (and the spaces around them) become one space. Unlike
 * `oneLine` in `_error_text.ts` it keeps runs of spaces within a line and clips nothing.
 */
function joinLines(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ").trim();
}

/** `text` on one line, at most `max` characters (then `...`). */
export function clip(text: string, max: number): string {
  const line = joinLines(text);
  return line.length <= max ? line : `${line.slice(0, max)}...`;
}
