/**
 * The Gemini dialect: `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`, decoded
 * from `data:` chunks of `GenerateContentResponse` into amber's neutral stream events.
 *
 * Decisions the wire leaves open, written down here:
 * - Function calls arrive whole; each becomes `toolCallStart`, one `toolCallDelta` with the whole
 *   arguments and `toolCallEnd`, indexed in arrival order. A call without an id gets
 *   `call_<n>`, unique in the process, so ids never collide across turns (or across providers,
 *   should a session switch). Those ids, and OpenAI-style `call_` ids, are not sent back:
 *   Gemini pairs responses with calls by name and order; an id Gemini issued is echoed.
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
 * const request = geminiDialect().chatRequest(
 *   { baseUrl: "https://generativelanguage.googleapis.com", apiKey: "AIza..." },
 *   { model: "gemini-2.5-pro", messages: [{ role: "user", content: "Hi" }], tools: [] },
 * );
 * console.log(request.url);
 * // "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
 * ```
 *
 * @module
 */

import type {
  ChatRequest,
  Dialect,
  FinishReason,
  HttpRequestSpec,
  JsonSchema,
  Message,
  ProviderSettings,
  StreamDecoder,
  StreamSink,
} from "@amber/core";
import { argumentsObject } from "./_arguments.ts";
import { bodyLine, errorLine, oneLine } from "./_error_text.ts";

/** The signature Gemini documents for replayed calls whose real signature is unknown. */
const SKIP_SIGNATURE = "skip_thought_signature_validator";

/** Thinking budgets by reasoning effort; -1 is Gemini's "dynamic". */
const THINKING_BUDGETS: { readonly [effort: string]: number } = {
  minimal: 512,
  low: 2048,
  medium: 8192,
  high: 24576,
  xhigh: 24576,
  max: 24576,
};

/** gRPC status names by HTTP status, for messages that lack one. */
const STATUS_NAMES: { readonly [code: number]: string } = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "NOT_IMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** Process-wide, so made-up call ids stay unique across turns. */
let nextCallId = 0;

type Part = Record<string, unknown>;
interface Content {
  role: "user" | "model";
  parts: Part[];
}

// ---------------------------------------------------------------------------------------------
// JSON Schema -> Gemini's OpenAPI subset

const KEPT_NUMBERS = [
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
] as const;

const FORMATS: { readonly [type: string]: readonly string[] } = {
  string: ["date-time", "enum"],
  integer: ["int32", "int64"],
  number: ["float", "double"],
};

type Schema = { [key: string]: unknown };

function isObject(value: unknown): value is Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** What `#/$defs/X` (or `#/definitions/X`) points at in the root schema. */
function resolveRef(root: Schema, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

function convertNode(node: unknown, root: Schema, refs: readonly string[]): Schema {
  if (node === true || node === undefined) return {};
  if (!isObject(node)) return {};
  const ref = node.$ref;
  if (typeof ref === "string") {
    // A recursive ref cannot be inlined; it becomes an object that says what it was.
    if (refs.includes(ref)) return { type: "object", description: `(recursive ${ref})` };
    const target = resolveRef(root, ref);
    if (target === undefined) return { type: "object" };
    const inlined = convertNode(target, root, [...refs, ref]);
    if (typeof node.description === "string") inlined.description = node.description;
    return inlined;
  }
  const out: Schema = {};
  let nullable = node.nullable === true;
  let type: unknown = node.type;
  if (Array.isArray(type)) {
    const types = type.filter((t) => t !== "null");
    if (types.length < type.length) nullable = true;
    if (types.length === 1) type = types[0];
    else if (types.length === 0) type = undefined;
    else {
      // Several types: Gemini has no type arrays, but it has anyOf.
      out.anyOf = types.map((t) =>
        convertNode({ ...node, type: t, nullable: undefined }, root, refs)
      );
      type = undefined;
    }
  }
  if (type === "null") {
    nullable = true;
    type = undefined;
  }
  if (typeof type === "string") out.type = type;
  if (typeof node.title === "string") out.title = node.title;
  if (typeof node.description === "string") out.description = node.description;

  const format = node.format;
  if (typeof format === "string" && typeof type === "string" && FORMATS[type]?.includes(format)) {
    out.format = format;
  }

  let values: unknown[] | undefined = Array.isArray(node.enum) ? node.enum : undefined;
  if (values === undefined && "const" in node) values = [node.const];
  if (values !== undefined) {
    const present = values.filter((value) => value !== null);
    if (present.length < values.length) nullable = true;
    if (present.length > 0 && present.every((value) => typeof value === "string")) {
      out.enum = present;
      if (out.type === undefined) out.type = "string";
    } else if (present.length > 0) {
      // Gemini takes only string enums; the allowed values survive in the description.
      const allowed = `Allowed values: ${
        present.map((value) => JSON.stringify(value)).join(", ")
      }.`;
      out.description = typeof out.description === "string"
        ? `${out.description} ${allowed}`
        : allowed;
    }
  }

  for (const key of KEPT_NUMBERS) {
    const value = node[key];
    if (typeof value === "number" && Number.isFinite(value)) out[key] = value;
  }
  if (typeof node.pattern === "string") out.pattern = node.pattern;

  if (isObject(node.properties)) {
    const properties: Schema = {};
    const names: string[] = [];
    for (const [name, value] of Object.entries(node.properties)) {
      properties[name] = convertNode(value, root, refs);
      names.push(name);
    }
    if (names.length > 0) {
      out.properties = properties;
      if (Array.isArray(node.required)) {
        const required = node.required.filter((name): name is string =>
          typeof name === "string" && names.includes(name)
        );
        if (required.length > 0) out.required = required;
      }
    }
    if (out.type === undefined) out.type = "object";
  }

  if (node.items !== undefined) {
    // A tuple (`items` as a list, or `prefixItems`) has no Gemini form; its first item stands in.
    const items = Array.isArray(node.items) ? node.items[0] : node.items;
    if (items !== undefined && items !== false) out.items = convertNode(items, root, refs);
  } else if (Array.isArray(node.prefixItems) && node.prefixItems.length > 0) {
    out.items = convertNode(node.prefixItems[0], root, refs);
  }
  if (out.type === "array" && out.items === undefined) out.items = {};

  const union = Array.isArray(node.anyOf)
    ? node.anyOf
    : Array.isArray(node.oneOf)
    ? node.oneOf
    : undefined;
  if (union !== undefined) {
    const branches: Schema[] = [];
    for (const branch of union) {
      if (isObject(branch) && branch.type === "null" && Object.keys(branch).length === 1) {
        nullable = true;
        continue;
      }
      branches.push(convertNode(branch, root, refs));
    }
    if (branches.length === 1) {
      // `anyOf: [X, {type: "null"}]`, the common optional-value shape, is X made nullable.
      const description = out.description;
      Object.assign(out, branches[0]);
      if (description !== undefined) out.description = description;
    } else if (branches.length > 1) {
      out.anyOf = branches;
    }
  }

  if (Array.isArray(node.allOf)) {
    // allOf intersects; for the object shapes tools use, merging properties is that.
    for (const part of node.allOf) {
      const converted = convertNode(part, root, refs);
      for (const [key, value] of Object.entries(converted)) {
        if (key === "properties" && isObject(value)) {
          out.properties = { ...(isObject(out.properties) ? out.properties : {}), ...value };
        } else if (key === "required" && Array.isArray(value)) {
          const required = Array.isArray(out.required) ? out.required : [];
          out.required = [...new Set([...required, ...value])];
        } else if (out[key] === undefined) {
          out[key] = value;
        }
      }
    }
  }

  if (nullable) out.nullable = true;
  return out;
}

/**
 * Converts a JSON Schema (draft 7 / 2020-12, as tools declare parameters) to the OpenAPI 3.0
 * subset Gemini's `functionDeclarations[].parameters` accepts. Keywords Gemini rejects are
 * dropped (`$schema`, `additionalProperties`, `default`, `examples`, unsupported `format`s, ...);
 * local `$ref`s are inlined (a recursive one becomes a plain object); `const` becomes a
 * one-value `enum`; `"null"` in a type list, a null `anyOf` branch or a null enum value become
 * `nullable: true`; other type lists become `anyOf`; `oneOf` becomes `anyOf`; `allOf` is merged;
 * non-string enums (which Gemini refuses) are moved into the description. An object schema with
 * no properties converts to undefined, since Gemini wants `parameters` absent then.
 *
 * @example
 * ```ts
 * import { toGeminiSchema } from "@amber/providers/gemini";
 * const schema = toGeminiSchema({
 *   $schema: "https://json-schema.org/draft/2020-12/schema",
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: ["integer", "null"], default: 10 } },
 *   required: ["path"],
 *   additionalProperties: false,
 * });
 * console.log(JSON.stringify(schema));
 * // {"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","nullable":true}},"required":["path"]}
 * ```
 */
export function toGeminiSchema(schema: JsonSchema): Record<string, unknown> | undefined {
  const converted = convertNode(schema, schema as Schema, []);
  if (converted.type === "object" && converted.properties === undefined) return undefined;
  if (Object.keys(converted).length === 0) return undefined;
  return converted;
}

// ---------------------------------------------------------------------------------------------
// Requests

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

function toContents(messages: readonly Message[]): { system: string[]; contents: Content[] } {
  const system: string[] = [];
  const contents: Content[] = [];
  const append = (role: "user" | "model", parts: Part[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of messages) {
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
        const functionResponse: Part = {
          name: message.name,
          // Gemini's convention: `output` for a result, `error` for a failure.
          response: message.isError ? { error: message.content } : { output: message.content },
        };
        if (echoableId(message.toolCallId)) functionResponse.id = message.toolCallId;
        append("user", [{ functionResponse }]);
        break;
      }
    }
  }
  return { system, contents };
}

/**
 * The Gemini request body for a chat request (what `chatRequest` sends, as an object).
 *
 * @example
 * ```ts
 * import { geminiBody } from "@amber/providers/gemini";
 * const body = geminiBody({
 *   model: "gemini-2.5-flash",
 *   messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "Hi" }],
 *   tools: [],
 *   maxTokens: 1000,
 * });
 * console.log(JSON.stringify(body));
 * // {"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"systemInstruction":{"parts":[{"text":"Be terse."}]},"generationConfig":{"maxOutputTokens":1000}}
 * ```
 */
export function geminiBody(request: ChatRequest): Record<string, unknown> {
  const { system, contents } = toContents(request.messages);
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

// ---------------------------------------------------------------------------------------------
// Errors

interface GeminiError {
  readonly code?: number;
  readonly message?: string;
  readonly status?: string;
  readonly retryDelayMs?: number;
}

/** Reads `{error: {...}}`, also wrapped in a list as the non-SSE stream sends it. */
function readError(value: unknown): GeminiError | undefined {
  const holder = Array.isArray(value) ? value[0] : value;
  const error = isObject(holder) ? holder.error : undefined;
  if (!isObject(error)) return undefined;
  return {
    code: typeof error.code === "number" ? error.code : undefined,
    message: typeof error.message === "string" ? error.message : undefined,
    status: typeof error.status === "string" ? error.status : undefined,
    retryDelayMs: retryDelayOf(error.details),
  };
}

function readErrorBody(body: string): GeminiError | undefined {
  try {
    return readError(JSON.parse(body));
  } catch {
    return undefined;
  }
}

/** `RetryInfo.retryDelay` ("34.4s", or a `{seconds, nanos}` object) in milliseconds. */
function retryDelayOf(details: unknown): number | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (!isObject(detail)) continue;
    const type = detail["@type"];
    if (typeof type !== "string" || !type.endsWith("google.rpc.RetryInfo")) continue;
    const delay = detail.retryDelay;
    let seconds: number | undefined;
    if (typeof delay === "string" && delay.endsWith("s")) seconds = Number(delay.slice(0, -1));
    else if (isObject(delay)) {
      seconds = Number(delay.seconds ?? 0) + Number(delay.nanos ?? 0) / 1e9;
    }
    if (seconds !== undefined && Number.isFinite(seconds) && seconds >= 0) {
      return Math.round(seconds * 1000);
    }
  }
  return undefined;
}

/**
 * `<status> <STATUS>: <message>`; an in-stream error leaves the number out (it is in the event's
 * `status`), and a body that is not Google's error object is shown clipped.
 */
function describeError(
  status: number | undefined,
  error: GeminiError | undefined,
  body: string,
): string {
  if (error === undefined || (error.message === undefined && error.status === undefined)) {
    return bodyLine(status, oneLine(body));
  }
  const code = status ?? error.code;
  return errorLine({
    status,
    label: error.status ?? (code === undefined ? undefined : STATUS_NAMES[code]),
    message: oneLine(error.message ?? "no message"),
  });
}

function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

// ---------------------------------------------------------------------------------------------
// Decoding

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
  functionCall?: { id?: string; name?: string; args?: unknown };
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

class GeminiDecoder implements StreamDecoder {
  #done = false;
  #calls = 0;
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
        if (text !== undefined) {
          if (text.length > 0) {
            sink(
              part.thought === true
                ? { type: "reasoning", delta: text }
                : { type: "text", delta: text },
            );
          }
        } else if (part.functionCall !== undefined) {
          this.#call(part.functionCall, sink);
        }
      }
    }
    const reason = candidate.finishReason;
    if (reason === undefined) return;
    this.#finishReason = reason;
    if (reason === "MALFORMED_FUNCTION_CALL" || reason === "UNEXPECTED_TOOL_CALL") {
      const detail = candidate.finishMessage ? `: ${oneLine(candidate.finishMessage)}` : "";
      // Retryable: the model may well produce a valid call on another try.
      this.#fail(sink, `${reason}${detail}`, true);
    }
  }

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

  end(sink: StreamSink): void {
    if (this.#done) return;
    // An error cut short by the end of the stream is still the error.
    if (this.#raw.length > 0) {
      this.#flushRaw(sink);
      return;
    }
    const raw = this.#finishReason;
    if (raw === undefined) {
      this.#fail(sink, "the stream ended before the model finished (no finishReason)", true);
      return;
    }
    this.#done = true;
    this.#usage(sink);
    const reason = finishOfReason(raw, this.#calls > 0);
    sink({ type: "finish", reason, raw });
  }

  #call(call: { id?: string; name?: string; args?: unknown }, sink: StreamSink): void {
    const name = call.name;
    // A nameless call cannot be answered; it is dropped, as every dialect does.
    if (!name) return;
    const index = this.#calls++;
    const id = call.id || `call_${nextCallId++}`;
    const args = call.args === undefined || call.args === null ? "{}" : JSON.stringify(call.args);
    sink({ type: "toolCallStart", index, id, name });
    sink({ type: "toolCallDelta", index, delta: args });
    sink({ type: "toolCallEnd", index, id, name, arguments: args });
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

// ---------------------------------------------------------------------------------------------
// The dialect

/**
 * The Gemini dialect (flavor `gemini`).
 *
 * @example
 * ```ts
 * import { geminiDialect } from "@amber/providers/gemini";
 * const decoder = geminiDialect().decoder();
 * const events: string[] = [];
 * const sink = (e: { type: string }) => events.push(e.type);
 * decoder.event(undefined, '{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}]}', sink);
 * decoder.event(undefined, '{"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}', sink);
 * decoder.end(sink);
 * console.log(events); // [ "text", "text", "usage", "finish" ]
 * ```
 */
export function geminiDialect(): Dialect {
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
        body: JSON.stringify(geminiBody(request)),
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
