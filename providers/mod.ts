/**
 * `@amber/providers`: everything that talks to a model. The core-owned HTTP client
 * ({@linkcode ProviderClient}: timeouts, cancellation, retries that honour retry-after) and SSE
 * decoder, one dialect per wire protocol (`/openai`, `/openai-responses`, `/anthropic`,
 * `/gemini`), and `getWithBearer` for account readouts. Plugins never open their own HTTP client.
 * The fake provider for tests is `@amber/providers/testing`.
 *
 * @example
 * ```ts
 * import { getJsonWithBearer } from "@amber/providers";
 * import assert from "node:assert/strict";
 * // A wallet fetch: nothing honest to report reads as undefined, never as zero.
 * async function balance(baseUrl: string, apiKey?: string): Promise<number | undefined> {
 *   if (!apiKey) return undefined;
 *   const data = await getJsonWithBearer(`${baseUrl}/user/balance`, apiKey);
 *   const total = (data as { total?: unknown } | undefined)?.total;
 *   return typeof total === "number" && total >= 0 ? total : undefined;
 * }
 * assert.equal(await balance("http://127.0.0.1:1", undefined), undefined);
 * ```
 *
 * @module
 */

export { anthropicDialect } from "./anthropic.ts";
export {
  type ClientOptions,
  ProviderClient,
  ProviderError,
  type ProviderErrorDetails,
  type RetryInfo,
  type RetryPolicy,
  type StreamOutcome,
} from "./client.ts";
export { geminiDialect } from "./gemini.ts";
export { getJsonWithBearer, type GetOptions, getWithBearer } from "./http_get.ts";
export { openaiDialect } from "./openai.ts";
export { openaiResponsesDialect } from "./openai_responses.ts";
export { SseDecoder } from "./sse.ts";
