/**
 * The Anthropic Messages dialect: `POST {base}/v1/messages` with `stream: true`, decoded from
 * its named events (`message_start`, `content_block_*`, `message_delta`, `message_stop`, `ping`,
 * `error`) into amber's neutral stream events.
 *
 * Decisions the wire leaves open, written down here:
 * - Arguments that are not a JSON object (invalid JSON from a model, or an array) are sent back
 *   as `input: {}`: the API takes nothing else, the transcript keeps the original text, and the
 *   tool result that follows already tells the model what went wrong.
 * - Assistant reasoning goes back as a thinking block only with the signature Anthropic issued
 *   for it (`reasoningSignature`); unsigned reasoning is not sent back.
 * - Prompt caching: the system prompt's last block and the conversation's last block carry
 *   `cache_control: {type: "ephemeral"}`, so an agent loop re-reads its prefix at cache prices
 *   (tools come first in the cache order, so the system breakpoint covers them too).
 * - `promptTokens` counts every input token (`input_tokens` plus cache reads and writes), as
 *   OpenAI's `prompt_tokens` does; `cachedTokens` is the cache reads.
 * - An `error` event, a chunk that is not JSON, or a stream that ends before any `stop_reason`
 *   (a cut connection) ends the response at once with an `error` event and `finish: error`, as
 *   in every dialect: a stream that went wrong cannot be trusted further. Usage known by then is
 *   still reported, between the error and the finish (those tokens were billed).
 *   `overloaded_error`, `api_error`, `rate_limit_error` and `timeout_error` are retryable.
 *
 * @example
 * ```ts
 * import { anthropicDialect } from "@amber/providers/anthropic";
 * const request = anthropicDialect().chatRequest(
 *   { baseUrl: "https://api.anthropic.com", apiKey: "sk-ant-..." },
 *   { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "Hi" }], tools: [] },
 * );
 * console.log(request.url); // "https://api.anthropic.com/v1/messages"
 * ```
 *
 * @module
 */

import type {
  AllowanceSnapshot,
  AllowanceWindow,
  ChatRequest,
  Dialect,
  FinishReason,
  HttpRequestSpec,
  Message,
  ProviderSettings,
  StreamDecoder,
  StreamSink,
} from "@amber/core";
import { argumentsObject } from "./_arguments.ts";
import { bodyLine, errorLine, oneLine } from "./_error_text.ts";

/** The API version every request names. */
const ANTHROPIC_VERSION = "2023-06-01";

/** `max_tokens` is required by the API; this is what a request without one asks for. */
const DEFAULT_MAX_TOKENS = 8192;

/** The API's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1024;

/** Thinking budgets by reasoning effort. */
const THINKING_BUDGETS: { readonly [effort: string]: number } = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 32768,
};

const CACHE_CONTROL = { type: "ephemeral" } as const;

/** Error types by status, for the messages of in-stream errors that name only a type. */
const STATUS_OF_ERROR_TYPE: { readonly [type: string]: number } = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

type Block = Record<string, unknown>;
interface WireMessage {
  role: "user" | "assistant";
  content: Block[];
}

/**
 * The URL for an API path. A base URL that already ends in `/v1` (a common way to write it)
 * does not get a second one.
 */
function apiUrl(baseUrl: string, path: string): string {
  let base = baseUrl;
  while (base.endsWith("/")) base = base.slice(0, -1);
  if (base.endsWith("/v1")) base = base.slice(0, -3);
  return `${base}/v1/${path}`;
}

function headersFor(settings: ProviderSettings): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "anthropic-version": ANTHROPIC_VERSION,
  };
  if (settings.apiKey) headers["x-api-key"] = settings.apiKey;
  return headers;
}

/**
 * The thinking budget for a reasoning effort: a named effort, a number of tokens, or undefined
 * when thinking is off ("none", "off"). An effort this dialect does not know reads as medium.
 */
function thinkingBudget(effort: string | undefined): number | undefined {
  if (effort === undefined) return undefined;
  const key = effort.trim().toLowerCase();
  if (key === "" || key === "none" || key === "off" || key === "disabled") return undefined;
  const known = THINKING_BUDGETS[key];
  if (known !== undefined) return known;
  const number = Number(key);
  if (Number.isFinite(number) && number > 0) {
    return Math.max(MIN_THINKING_BUDGET, Math.floor(number));
  }
  return THINKING_BUDGETS.medium;
}

function toWireMessages(messages: readonly Message[]): { system: string[]; turns: WireMessage[] } {
  const system: string[] = [];
  const turns: WireMessage[] = [];
  const append = (role: "user" | "assistant", blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case "system":
        if (message.content.length > 0) system.push(message.content);
        break;
      case "user":
        // The API rejects empty text blocks, so an empty message contributes nothing.
        if (message.content.length > 0) append("user", [{ type: "text", text: message.content }]);
        break;
      case "assistant": {
        const blocks: Block[] = [];
        // Signed thinking goes back first: with thinking on, the API requires it on the
        // assistant turn that made tool calls. Unsigned reasoning cannot be sent back at all.
        if (message.reasoning && message.reasoningSignature) {
          blocks.push({
            type: "thinking",
            thinking: message.reasoning,
            signature: message.reasoningSignature,
          });
        }
        if (message.content.length > 0) blocks.push({ type: "text", text: message.content });
        for (const call of message.toolCalls ?? []) {
          if (call.name.length === 0) continue;
          blocks.push({
            type: "tool_use",
            id: call.id,
            name: call.name,
            input: argumentsObject(call.arguments),
          });
        }
        append("assistant", blocks);
        break;
      }
      case "tool": {
        const block: Block = { type: "tool_result", tool_use_id: message.toolCallId };
        // `content` may be omitted but not empty.
        if (message.content.length > 0) block.content = message.content;
        if (message.isError) block.is_error = true;
        append("user", [block]);
        break;
      }
    }
  }
  return { system, turns };
}

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

interface ErrorBody {
  readonly type?: string;
  readonly message?: string;
  readonly requestId?: string;
}

function readErrorBody(body: string): ErrorBody | undefined {
  try {
    const parsed = JSON.parse(body) as {
      error?: { type?: unknown; message?: unknown };
      request_id?: unknown;
    };
    const error = parsed?.error;
    if (error === null || typeof error !== "object") return undefined;
    return {
      type: typeof error.type === "string" ? error.type : undefined,
      message: typeof error.message === "string" ? error.message : undefined,
      requestId: typeof parsed.request_id === "string" ? parsed.request_id : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * `<status> <type>: <message> (request <id>)`; without a status for an in-stream error, and with
 * the body clipped when it is not Anthropic's object.
 */
function describeError(
  status: number | undefined,
  error: ErrorBody | undefined,
  body: string,
): string {
  if (error === undefined || (error.type === undefined && error.message === undefined)) {
    return bodyLine(status, oneLine(body));
  }
  return errorLine({
    status,
    label: error.type,
    message: oneLine(error.message ?? "no message"),
    suffix: error.requestId === undefined ? undefined : ` (request ${error.requestId})`,
  });
}

/** Whether an in-stream error type is worth retrying. */
function retryableType(type: string | undefined): boolean {
  return type === "overloaded_error" || type === "api_error" || type === "rate_limit_error" ||
    type === "timeout_error";
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

/** Which content blocks are tool calls being built, by block index. */
const TOOL = 1;
const OTHER = 2;

class AnthropicDecoder implements StreamDecoder {
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

  event(name: string | undefined, data: string, sink: StreamSink): void {
    if (this.#done) return;
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
        this.#fail(
          sink,
          describeError(undefined, { type, message: error?.message }, data),
          retryableType(type),
          type === undefined ? undefined : STATUS_OF_ERROR_TYPE[type],
        );
        return;
      }
      default:
        // ping, and event types newer than this dialect.
        return;
    }
  }

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
  #fail(sink: StreamSink, message: string, retryable: boolean, status?: number): void {
    this.#done = true;
    sink(
      status === undefined
        ? { type: "error", message, retryable }
        : { type: "error", message, retryable, status },
    );
    this.#usage(sink);
    sink({ type: "finish", reason: "error" });
  }
}

/** A utilization header value as a percentage: a fraction (0.42), a percentage, or `42%`. */
function percentOf(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  const isPercent = text.endsWith("%");
  const number = Number(isPercent ? text.slice(0, -1) : text);
  if (text.length === 0 || !Number.isFinite(number) || number < 0) return undefined;
  // Anthropic sends a fraction; a value above 1 can only be a percentage already.
  const percent = isPercent || number > 1 ? number : number * 100;
  return Math.round(percent * 100) / 100;
}

/** A reset header value as ISO 8601: unix seconds (what Anthropic sends), milliseconds or a date. */
function resetOf(value: string | null): string | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (text.length === 0) return undefined;
  const number = Number(text);
  let ms: number;
  if (Number.isFinite(number)) {
    if (number <= 0) return undefined;
    ms = number >= 1e12 ? number : number * 1000;
  } else {
    ms = Date.parse(text);
  }
  if (!Number.isFinite(ms)) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * The quota windows of Claude's unified rate-limit headers
 * (`anthropic-ratelimit-unified-5h-utilization` / `-5h-reset`, the same for `7d`), as sent to
 * subscription accounts. They are undocumented, so parsing is lenient: utilization as a fraction
 * (`0.42`, what the API sends), a percentage (`42`) or `42%`; resets as unix seconds (what the
 * API sends), milliseconds or a date. Undefined when no window is reported.
 *
 * @example
 * ```ts
 * import { anthropicAllowance } from "@amber/providers/anthropic";
 * const snapshot = anthropicAllowance(new Headers({
 *   "anthropic-ratelimit-unified-5h-utilization": "0.42",
 *   "anthropic-ratelimit-unified-5h-reset": "1767225600",
 * }));
 * console.log(snapshot?.windows); // [ { label: "5h", percentUsed: 42, resetsAt: "2026-01-01T00:00:00.000Z" } ]
 * ```
 */
export function anthropicAllowance(headers: Headers): AllowanceSnapshot | undefined {
  const windows: AllowanceWindow[] = [];
  for (const label of ["5h", "7d"]) {
    const percentUsed = percentOf(headers.get(`anthropic-ratelimit-unified-${label}-utilization`));
    const resetsAt = resetOf(headers.get(`anthropic-ratelimit-unified-${label}-reset`));
    if (percentUsed === undefined && resetsAt === undefined) continue;
    const window: { label: string; percentUsed?: number; resetsAt?: string } = { label };
    if (percentUsed !== undefined) window.percentUsed = percentUsed;
    if (resetsAt !== undefined) window.resetsAt = resetsAt;
    windows.push(window);
  }
  return windows.length > 0 ? { windows } : undefined;
}

/**
 * The Anthropic Messages request body for a chat request (what `chatRequest` sends, as an
 * object).
 *
 * @example
 * ```ts
 * import { anthropicBody } from "@amber/providers/anthropic";
 * const body = anthropicBody({
 *   model: "claude-sonnet-4-5",
 *   messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "Hi" }],
 *   tools: [],
 * });
 * console.log(body.max_tokens, body.stream); // 8192 true
 * ```
 */
export function anthropicBody(request: ChatRequest): Record<string, unknown> {
  const { system, turns } = toWireMessages(request.messages);
  const budget = thinkingBudget(request.reasoningEffort);
  let maxTokens = request.maxTokens ?? DEFAULT_MAX_TOKENS + (budget ?? 0);
  let thinking: number | undefined = budget;
  if (thinking !== undefined && thinking >= maxTokens) {
    // The budget counts towards max_tokens and must stay below it; leave room for an answer.
    thinking = Math.min(thinking, maxTokens - 1);
    if (thinking < MIN_THINKING_BUDGET) thinking = undefined;
  }
  if (maxTokens < 1) maxTokens = 1;
  const body: Record<string, unknown> = { model: request.model, max_tokens: maxTokens };
  if (system.length > 0) {
    body.system = [{ type: "text", text: system.join("\n\n"), cache_control: CACHE_CONTROL }];
  }
  const lastTurn = turns[turns.length - 1];
  if (lastTurn !== undefined) {
    const blocks = lastTurn.content;
    const index = blocks.length - 1;
    blocks[index] = { ...blocks[index], cache_control: CACHE_CONTROL };
  }
  body.messages = turns;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => {
      const schema = tool.parameters;
      return {
        name: tool.name,
        description: tool.description,
        // The API insists on an object schema; a tool declared without one takes no arguments.
        input_schema: schema.type === "object"
          ? schema
          : { type: "object", properties: {}, ...schema },
      };
    });
  }
  body.stream = true;
  if (thinking !== undefined) {
    body.thinking = { type: "enabled", budget_tokens: thinking };
  } else if (request.temperature !== undefined) {
    // With thinking on, the API accepts no temperature but 1, so it is not sent then.
    body.temperature = request.temperature;
  }
  return body;
}

/**
 * The Anthropic Messages dialect (flavor `anthropic`).
 *
 * @example
 * ```ts
 * import { anthropicDialect } from "@amber/providers/anthropic";
 * const dialect = anthropicDialect();
 * const events: string[] = [];
 * const decoder = dialect.decoder();
 * const sink = (e: { type: string }) => events.push(e.type);
 * decoder.event("message_start", '{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}', sink);
 * decoder.event("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}', sink);
 * decoder.event("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}', sink);
 * decoder.event("message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}', sink);
 * decoder.event("message_stop", '{"type":"message_stop"}', sink);
 * console.log(events); // [ "text", "usage", "finish" ]
 * ```
 */
export function anthropicDialect(): Dialect {
  return {
    flavor: "anthropic",
    chatRequest(settings: ProviderSettings, request: ChatRequest): HttpRequestSpec {
      return {
        url: apiUrl(settings.baseUrl, "messages"),
        method: "POST",
        headers: headersFor(settings),
        body: JSON.stringify(anthropicBody(request)),
      };
    },
    decoder(): StreamDecoder {
      return new AnthropicDecoder();
    },
    isRetryable(status: number, body: string): boolean {
      if (status === 408 || status === 409 || status === 429 || status === 529 || status >= 500) {
        return true;
      }
      // An overloaded error behind a proxy that rewrote the status is still worth a retry.
      return readErrorBody(body)?.type === "overloaded_error";
    },
    errorMessage(status: number, body: string): string {
      return describeError(status, readErrorBody(body), body);
    },
    isContextOverflow(status: number, body: string): boolean {
      if (status !== 400 && status !== 413) return false;
      const error = readErrorBody(body);
      const message = (error?.message ?? body).toLowerCase();
      if (message.includes("prompt is too long")) return true;
      if (error?.type !== undefined && error.type !== "invalid_request_error") return false;
      return message.includes("context window") || message.includes("context length") ||
        message.includes("too many tokens") ||
        (message.includes("context") && message.includes("exceed"));
    },
    modelsRequest(settings: ProviderSettings): HttpRequestSpec {
      // One page of up to 1,000 holds every model Anthropic lists.
      return {
        url: `${apiUrl(settings.baseUrl, "models")}?limit=1000`,
        method: "GET",
        headers: headersFor(settings),
      };
    },
    parseModels(body: string): string[] {
      const parsed = JSON.parse(body) as { data?: unknown };
      if (!Array.isArray(parsed?.data)) throw new Error("anthropic: the models list has no data");
      const ids: string[] = [];
      for (const model of parsed.data) {
        const id = (model as { id?: unknown } | null)?.id;
        if (typeof id === "string" && id.length > 0) ids.push(id);
      }
      // Sorted, as every dialect lists them, so a picker reads the same whatever the provider.
      return ids.sort();
    },
    allowanceFromHeaders(headers: Headers): AllowanceSnapshot | undefined {
      return anthropicAllowance(headers);
    },
  };
}
