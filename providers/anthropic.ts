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
 * - Prompt caching: `cache_control: {type: "ephemeral"}` marks the last tool definition, the
 *   system block, and the last block of the last two user turns (four breakpoints, the API's
 *   most), so an agent loop re-reads its whole prefix at cache prices; see `_anthropic_body.ts`.
 * - Each dialect keeps the JSON of the committed (frozen) messages it sent, so a request's body
 *   is assembled from those pieces instead of serializing the whole history again each step;
 *   the text is the same, byte for byte, as `JSON.stringify(anthropicBody(...))`.
 * - `promptTokens` counts every input token (`input_tokens` plus cache reads and writes), as
 *   OpenAI's `prompt_tokens` does; `cachedTokens` is the cache reads (`cache_read_input_tokens`)
 *   and `cacheWriteTokens` the writes (`cache_creation_input_tokens`).
 * - A request too long for the model's window ("prompt is too long: N tokens > M maximum", or
 *   input plus `max_tokens` over the limit) is a context overflow (`isContextOverflow`, and an
 *   in-stream error of that kind carries `contextOverflow`), so the kernel compacts and retries.
 *   A response that stops with `model_context_window_exceeded` finishes with `length` (raw
 *   reason kept): its output is real and billed, the request itself fit, and the usage it
 *   reports lets the kernel compact before the next step.
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
  ProviderSettings,
  StreamDecoder,
  SyncDialect,
} from "@amber/core";
import { anthropicAllowance } from "./_anthropic_allowance.ts";
import { AnthropicDecoder } from "./_anthropic_decoder.ts";
import { AnthropicBodyWriter } from "./_anthropic_body.ts";
import { describeError, isOverflowError, readErrorBody } from "./_anthropic_errors.ts";

export { anthropicAllowance } from "./_anthropic_allowance.ts";
export { anthropicBody } from "./_anthropic_body.ts";

/** The API version every request names. */
const ANTHROPIC_VERSION = "2023-06-01";

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
  // Per dialect, so that each committed message is serialized once for all the requests.
  const writer = new AnthropicBodyWriter();
  return {
    flavor: "anthropic",
    chatRequest(settings: ProviderSettings, request: ChatRequest): HttpRequestSpec {
      return {
        url: apiUrl(settings.baseUrl, "messages"),
        method: "POST",
        headers: headersFor(settings),
        body: writer.write(request, settings),
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
      return isOverflowError(readErrorBody(body), body);
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
