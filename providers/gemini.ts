/**
 * The Gemini dialect: `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`, decoded
 * from `data:` chunks of `GenerateContentResponse` into amber's neutral stream events.
 *
 * Decisions the wire leaves open, written down here:
 * - Function calls arrive whole; each becomes `toolCallStart`, one `toolCallDelta` with the whole
 *   arguments and `toolCallEnd`, indexed in arrival order. A call without an id gets
 *   `call_<n>`, counted per dialect instance (per client) and past every `call_<n>` the
 *   conversation already holds, so ids never collide across turns, on resume, or across
 *   providers should a session switch, while nothing is shared between sessions. Those ids, and
 *   OpenAI-style `call_` ids, are not sent back: Gemini pairs responses with calls by name and
 *   order; an id Gemini issued is echoed.
 * - Replayed function calls carry Gemini's documented `skip_thought_signature_validator`
 *   signature, since the neutral transcript keeps no thought signatures and Gemini 3 rejects a
 *   replayed call without one. Reasoning is not sent back: unsigned thoughts mean nothing to it.
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
  Message,
  ProviderSettings,
  StreamDecoder,
  SyncDialect,
} from "@amber/core";
import { argumentsObject } from "./_arguments.ts";
import { CallIds } from "./_gemini_call_ids.ts";
import { GeminiDecoder } from "./_gemini_decoder.ts";
import { describeError, readErrorBody, retryableStatus } from "./_gemini_errors.ts";
import { isObject, toGeminiSchema } from "./_gemini_schema.ts";
import { toolImages } from "./_tool_images.ts";

export { toGeminiSchema } from "./_gemini_schema.ts";

/** The signature Gemini documents for replayed calls whose real signature is unknown. */
const SKIP_SIGNATURE = "skip_thought_signature_validator";

/** The image types the API takes inline. */
const IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/png",
  "image/jpeg",
  "image/webp",
  "image/heic",
  "image/heif",
]);

/** Thinking budgets by reasoning effort; -1 is Gemini's "dynamic". */
const THINKING_BUDGETS: { readonly [effort: string]: number } = {
  minimal: 512,
  low: 2048,
  medium: 8192,
  high: 24576,
  xhigh: 24576,
  max: 24576,
};

type Part = Record<string, unknown>;
interface Content {
  role: "user" | "model";
  parts: Part[];
}

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

/** Whether an id came from a provider that pairs by id (Gemini) rather than from us or OpenAI. */
function echoableId(id: string): boolean {
  return id.length > 0 && !id.startsWith("call_");
}

function thinkingConfig(effort: string | undefined): Record<string, unknown> | undefined {
  if (effort === undefined) return undefined;
  const key = effort.trim().toLowerCase();
  // "none" leaves the model's default: some Gemini models cannot turn thinking off at all.
  if (key === "" || key === "none" || key === "off" || key === "disabled") return undefined;
  const number = Number(key);
  const budget = THINKING_BUDGETS[key] ??
    (Number.isFinite(number) && number > 0 ? Math.floor(number) : -1);
  return { thinkingBudget: budget, includeThoughts: true };
}

function toContents(
  messages: readonly Message[],
  settings: Pick<ProviderSettings, "images"> | undefined,
): { system: string[]; contents: Content[] } {
  const system: string[] = [];
  const contents: Content[] = [];
  const append = (role: "user" | "model", parts: Part[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  // The images of a turn's tool results follow all of its function responses, so the responses
  // stay together, in the order of the calls they answer.
  let images: Part[] = [];
  for (const message of messages) {
    if (images.length > 0 && message.role !== "tool") {
      append("user", images);
      images = [];
    }
    switch (message.role) {
      case "system":
        if (message.content.length > 0) system.push(message.content);
        break;
      case "user":
        if (message.content.length > 0) append("user", [{ text: message.content }]);
        break;
      case "assistant": {
        const parts: Part[] = [];
        if (message.content.length > 0) parts.push({ text: message.content });
        for (const call of message.toolCalls ?? []) {
          if (call.name.length === 0) continue;
          const functionCall: Part = { name: call.name, args: argumentsObject(call.arguments) };
          if (echoableId(call.id)) functionCall.id = call.id;
          parts.push({ functionCall, thoughtSignature: SKIP_SIGNATURE });
        }
        append("model", parts);
        break;
      }
      case "tool": {
        const { sent, text } = toolImages(message, settings, IMAGE_TYPES);
        const functionResponse: Part = {
          name: message.name,
          // Gemini's convention: `output` for a result, `error` for a failure.
          response: message.isError ? { error: text } : { output: text },
        };
        if (echoableId(message.toolCallId)) functionResponse.id = message.toolCallId;
        append("user", [{ functionResponse }]);
        for (const image of sent) {
          images.push({ inlineData: { mimeType: image.mimeType, data: image.data } });
        }
        break;
      }
    }
  }
  append("user", images);
  return { system, contents };
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
    body.tools = [{
      functionDeclarations: request.tools.map((tool) => {
        const declaration: Record<string, unknown> = {
          name: tool.name,
          description: tool.description,
        };
        const parameters = toGeminiSchema(tool.parameters);
        if (parameters !== undefined) declaration.parameters = parameters;
        return declaration;
      }),
    }];
  }
  const config: Record<string, unknown> = {};
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  const thinking = thinkingConfig(request.reasoningEffort);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

/**
 * The Gemini dialect (flavor `gemini`). Each call makes a dialect with its own count of made-up
 * call ids (see the module notes), so one dialect serves one client and its conversations.
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
  const ids = new CallIds();
  return {
    flavor: "gemini",
    chatRequest(settings: ProviderSettings, request: ChatRequest): HttpRequestSpec {
      // The response to this request continues the conversation's numbering.
      ids.skipPast(request.messages);
      let model = request.model;
      if (model.startsWith("models/")) model = model.slice(7);
      return {
        url: apiUrl(
          settings.baseUrl,
          `models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`,
        ),
        method: "POST",
        headers: headersFor(settings, true),
        body: JSON.stringify(geminiBody(request, settings)),
      };
    },
    decoder(): StreamDecoder {
      return new GeminiDecoder(ids);
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
