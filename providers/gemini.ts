/**
 * The Gemini dialect: `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`, decoded
 * from `data:` chunks of `GenerateContentResponse` into amber's neutral stream events.
 *
 * Decisions the wire leaves open, written down here:
 * - A function call arrives whole (`args`), or, from Gemini 3 asked to stream arguments, in
 *   pieces: a part with the name and `willContinue`, parts with `partialArgs` (a JSON path and a
 *   value each; a string may go on over several), and a part without `willContinue`. Either
 *   way it becomes `toolCallStart` when it begins, then one `toolCallDelta` with the whole
 *   arguments and `toolCallEnd` when it is complete, indexed in arrival order. A call without
 *   an id gets `call_<process>_<n>`, a random tag per process and a count, so ids never collide
 *   across turns, resumes, processes, or providers should a session switch. Those ids, and
 *   OpenAI-style `call_` ids, are not sent back: Gemini pairs responses with calls by name and
 *   order; an id Gemini issued is echoed.
 * - Thought signatures go back where they came from: a function call's on that call's part
 *   (`toolCallEnd.signature`, `ToolCall.signature`), a text part's on the answer's text
 *   (`textSignature`). A replayed call with no signature of its own (from another provider, or
 *   a transcript older than signatures) carries Gemini's documented
 *   `skip_thought_signature_validator`, since Gemini 3 rejects a call without one; the calls
 *   Gemini itself left unsigned after a signed one (parallel calls) go back unsigned. Reasoning
 *   is not sent back: Gemini does not need its thought summaries.
 * - Each committed (frozen) message is serialized once per dialect instance, and a request
 *   whose conversation repeats the previous one's committed messages goes on from the text
 *   made for them, so building a request costs little more late in a long session than early.
 *   The bytes are those of `JSON.stringify(geminiBody(request, settings))`.
 * - `completionTokens` is `candidatesTokenCount + thoughtsTokenCount` (Gemini bills both as
 *   output; OpenAI's `completion_tokens` includes reasoning too); `reasoningTokens` is the
 *   thoughts; `cachedTokens` is `cachedContentTokenCount`. Usage is cumulative, so one usage
 *   event with the last values is emitted at the end.
 * - An error object in a chunk, an error Gemini writes mid-stream as raw (unframed,
 *   pretty-printed) JSON, `MALFORMED_FUNCTION_CALL`, a chunk that is not JSON, or a stream that
 *   ends without a `finishReason` (a cut connection) ends the response at once with an `error`
 *   event and `finish: error`, as in every dialect. The raw error is collected line by line
 *   until its brackets balance, then reported with Gemini's own message, status and retry delay.
 *   Usage known by then is still reported, between the error and the finish (those tokens were
 *   billed).
 * - Parameters are converted to the OpenAPI subset Gemini accepts ({@linkcode toGeminiSchema}).
 *
 * @example
 * ```ts
 * import { geminiDialect } from "@amber/providers/gemini";
 * import assert from "node:assert/strict";
 * const request = geminiDialect().chatRequest(
 *   { baseUrl: "https://generativelanguage.googleapis.com", apiKey: "AIza..." },
 *   { model: "gemini-2.5-pro", messages: [{ role: "user", content: "Hi" }], tools: [] },
 * );
 * assert.equal(
 *   request.url,
 *   "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
 * );
 * ```
 *
 * @module
 */

import type {
  ChatRequest,
  HttpRequestSpec,
  ProviderSettings,
  StreamDecoder,
  SyncDialect,
} from "@amber/core";
import { GeminiDecoder } from "./_gemini_decoder.ts";
import { describeError, readErrorBody, retryableStatus } from "./_gemini_errors.ts";
import { BodyWriter, declarationOf, generationConfig, toContents } from "./_gemini_request.ts";
import { isObject } from "./_gemini_schema.ts";

export { toGeminiSchema } from "./_gemini_schema.ts";

/** The URL for an API path; a base already ending in `/v1beta` does not get a second one. */
function apiUrl(baseUrl: string, path: string): string {
  let base = baseUrl;
  while (base.endsWith("/")) base = base.slice(0, -1);
  if (base.endsWith("/v1beta")) base = base.slice(0, -7);
  return `${base}/v1beta/${path}`;
}

function headersFor(settings: ProviderSettings, json: boolean): Record<string, string> {
  const headers: Record<string, string> = json ? { "content-type": "application/json" } : {};
  if (settings.apiKey) headers["x-goog-api-key"] = settings.apiKey;
  return headers;
}

/**
 * The Gemini request body for a chat request (what `chatRequest` sends, as an object). A tool
 * result's images follow the turn's function responses as `inlineData` parts when
 * `settings.images` is true (PNG, JPEG, WebP, HEIC and HEIF, the types the API takes);
 * otherwise a line of the response's text says what was left out.
 *
 * @example
 * ```ts
 * import { geminiBody } from "@amber/providers/gemini";
 * import assert from "node:assert/strict";
 * const body = geminiBody({
 *   model: "gemini-2.5-flash",
 *   messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "Hi" }],
 *   tools: [],
 *   maxTokens: 1000,
 * });
 * assert.deepEqual(body, {
 *   contents: [{ role: "user", parts: [{ text: "Hi" }] }],
 *   systemInstruction: { parts: [{ text: "Be terse." }] },
 *   generationConfig: { maxOutputTokens: 1000 },
 * });
 * ```
 *
 * @example A screenshot a tool returned, to a model that takes images
 * ```ts
 * import { geminiBody } from "@amber/providers/gemini";
 * import assert from "node:assert/strict";
 * const body = geminiBody({
 *   model: "gemini-2.5-flash",
 *   messages: [
 *     { role: "user", content: "Look" },
 *     { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "shot", arguments: "{}" }] },
 *     {
 *       role: "tool",
 *       toolCallId: "c1",
 *       name: "shot",
 *       content: "the screen",
 *       images: [{ mimeType: "image/png", data: "iVBORw0KGgo=" }],
 *     },
 *   ],
 *   tools: [],
 * }, { images: true });
 * const contents = body.contents as { parts: Record<string, unknown>[] }[];
 * assert.deepEqual(contents[2].parts[1], {
 *   inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" },
 * });
 * ```
 */
export function geminiBody(
  request: ChatRequest,
  settings?: Pick<ProviderSettings, "images">,
): Record<string, unknown> {
  const { system, contents } = toContents(request.messages, settings);
  const body: Record<string, unknown> = { contents };
  if (system.length > 0) body.systemInstruction = { parts: [{ text: system.join("\n\n") }] };
  if (request.tools.length > 0) {
    body.tools = [{ functionDeclarations: request.tools.map(declarationOf) }];
  }
  const config = generationConfig(request);
  if (config !== undefined) body.generationConfig = config;
  return body;
}

/**
 * The Gemini dialect (flavor `gemini`). Each call makes a dialect with its own cache of
 * serialized messages (see the module notes); one dialect serves one client.
 *
 * @example
 * ```ts
 * import { geminiDialect } from "@amber/providers/gemini";
 * import assert from "node:assert/strict";
 * const decoder = geminiDialect().decoder();
 * const events: string[] = [];
 * const sink = (e: { type: string }) => events.push(e.type);
 * decoder.event(undefined, '{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}]}', sink);
 * decoder.event(undefined, '{"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}', sink);
 * decoder.end(sink);
 * assert.deepEqual(events, ["text", "text", "usage", "finish"]);
 * ```
 */
export function geminiDialect(): SyncDialect {
  const writer = new BodyWriter();
  return {
    flavor: "gemini",
    chatRequest(settings: ProviderSettings, request: ChatRequest): HttpRequestSpec {
      let model = request.model;
      if (model.startsWith("models/")) model = model.slice(7);
      return {
        url: apiUrl(
          settings.baseUrl,
          `models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`,
        ),
        method: "POST",
        headers: headersFor(settings, true),
        body: writer.write(request, settings),
      };
    },
    decoder(): StreamDecoder {
      return new GeminiDecoder();
    },
    isRetryable(status: number, _body: string): boolean {
      return retryableStatus(status);
    },
    errorMessage(status: number, body: string): string {
      return describeError(status, readErrorBody(body), body);
    },
    isContextOverflow(status: number, body: string): boolean {
      if (status !== 400 && status !== 413) return false;
      const message = (readErrorBody(body)?.message ?? body).toLowerCase();
      return (message.includes("token") && message.includes("exceed")) ||
        message.includes("context window") || message.includes("too many tokens");
    },
    retryDelayMs(_status: number, body: string): number | undefined {
      return readErrorBody(body)?.retryDelayMs;
    },
    modelsRequest(settings: ProviderSettings): HttpRequestSpec {
      // One page of up to 1,000 holds every model Gemini lists.
      return {
        url: `${apiUrl(settings.baseUrl, "models")}?pageSize=1000`,
        method: "GET",
        headers: headersFor(settings, false),
      };
    },
    parseModels(body: string): string[] {
      const parsed = JSON.parse(body) as { models?: unknown };
      if (!Array.isArray(parsed?.models)) throw new Error("gemini: the models list has no models");
      const ids: string[] = [];
      for (const model of parsed.models) {
        if (!isObject(model) || typeof model.name !== "string") continue;
        // Embedding and other models that cannot chat are left out when Gemini says so.
        const methods = model.supportedGenerationMethods;
        if (Array.isArray(methods) && !methods.includes("generateContent")) continue;
        ids.push(model.name.startsWith("models/") ? model.name.slice(7) : model.name);
      }
      // Sorted, as every dialect lists them, so a picker reads the same whatever the provider.
      return ids.sort();
    },
  };
}
