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
 * import assert from "node:assert/strict";
 * const request = anthropicDialect().chatRequest(
 *   { baseUrl: "https://api.anthropic.com", apiKey: "sk-ant-..." },
 *   { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "Hi" }], tools: [] },
 * );
 * assert.equal(request.url, "https://api.anthropic.com/v1/messages");
 * ```
 *
 * @module
 */

import type {
  AllowanceSnapshot,
  ChatRequest,
  HttpRequestSpec,
  Message,
  ProviderSettings,
  StreamDecoder,
  SyncDialect,
} from "@amber/core";
import { anthropicAllowance } from "./_anthropic_allowance.ts";
import { AnthropicDecoder } from "./_anthropic_decoder.ts";
import { describeError, readErrorBody } from "./_anthropic_errors.ts";
import { argumentsObject } from "./_arguments.ts";
import { toolImages } from "./_tool_images.ts";

export { anthropicAllowance } from "./_anthropic_allowance.ts";

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

/** The image types the Messages API takes. */
const IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
]);

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

function toWireMessages(
  messages: readonly Message[],
  settings: Pick<ProviderSettings, "images"> | undefined,
): { system: string[]; turns: WireMessage[] } {
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
        const { sent, text } = toolImages(message, settings, IMAGE_TYPES);
        // `content` may be omitted but not empty, and a text block may not be empty either.
        if (sent.length > 0) {
          block.content = [
            ...(text.length > 0 ? [{ type: "text", text }] : []),
            ...sent.map((image) => ({
              type: "image",
              source: { type: "base64", media_type: image.mimeType, data: image.data },
            })),
          ];
        } else if (text.length > 0) {
          block.content = text;
        }
        if (message.isError) block.is_error = true;
        append("user", [block]);
        break;
      }
    }
  }
  return { system, turns };
}

/**
 * The Anthropic Messages request body for a chat request (what `chatRequest` sends, as an
 * object). A tool result's images go in its content as image blocks when `settings.images` is
 * true (JPEG, PNG, GIF and WebP, the types the API takes); otherwise a line of its text says
 * what was left out.
 *
 * @example
 * ```ts
 * import { anthropicBody } from "@amber/providers/anthropic";
 * import assert from "node:assert/strict";
 * const body = anthropicBody({
 *   model: "claude-sonnet-4-5",
 *   messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "Hi" }],
 *   tools: [],
 * });
 * assert.equal(body.max_tokens, 8192);
 * assert.equal(body.stream, true);
 * ```
 *
 * @example A screenshot a tool returned, to a model that takes images
 * ```ts
 * import { anthropicBody } from "@amber/providers/anthropic";
 * import assert from "node:assert/strict";
 * const body = anthropicBody({
 *   model: "claude-sonnet-4-5",
 *   messages: [
 *     { role: "user", content: "Look" },
 *     {
 *       role: "assistant",
 *       content: "",
 *       toolCalls: [{ id: "toolu_1", name: "screenshot", arguments: "{}" }],
 *     },
 *     {
 *       role: "tool",
 *       toolCallId: "toolu_1",
 *       name: "screenshot",
 *       content: "the screen",
 *       images: [{ mimeType: "image/png", data: "iVBORw0KGgo=" }],
 *     },
 *   ],
 *   tools: [],
 * }, { images: true });
 * const turns = body.messages as { content: { type: string; content?: unknown }[] }[];
 * assert.deepEqual(turns[2].content[0].content, [
 *   { type: "text", text: "the screen" },
 *   { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
 * ]);
 * ```
 */
export function anthropicBody(
  request: ChatRequest,
  settings?: Pick<ProviderSettings, "images">,
): Record<string, unknown> {
  const { system, turns } = toWireMessages(request.messages, settings);
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
 * import assert from "node:assert/strict";
 * const dialect = anthropicDialect();
 * const events: string[] = [];
 * const decoder = dialect.decoder();
 * const sink = (e: { type: string }) => events.push(e.type);
 * decoder.event("message_start", '{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}', sink);
 * decoder.event("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}', sink);
 * decoder.event("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}', sink);
 * decoder.event("message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}', sink);
 * decoder.event("message_stop", '{"type":"message_stop"}', sink);
 * assert.deepEqual(events, ["text", "usage", "finish"]);
 * ```
 */
export function anthropicDialect(): SyncDialect {
  return {
    flavor: "anthropic",
    chatRequest(settings: ProviderSettings, request: ChatRequest): HttpRequestSpec {
      return {
        url: apiUrl(settings.baseUrl, "messages"),
        method: "POST",
        headers: headersFor(settings),
        body: JSON.stringify(anthropicBody(request, settings)),
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
