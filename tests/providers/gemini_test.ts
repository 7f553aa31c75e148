import assert from "node:assert/strict";
import { z } from "zod";
import type { ChatRequest, Message, StreamEvent } from "@amber/core";
import { geminiBody, geminiDialect, toGeminiSchema } from "../../providers/gemini.ts";
import { geminiEncoder } from "../../providers/testing/gemini.ts";
import {
  assertFinish,
  decodeWith,
  ends,
  errorOf,
  type Harness,
  startHarness,
  text,
  types,
} from "./_e2e.ts";

// ---------------------------------------------------------------------------------------------
// Helpers

const TOOL = {
  name: "read",
  description: "Reads a file.",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
    additionalProperties: false,
  },
};

const BASE = "https://generativelanguage.googleapis.com";

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "gemini-2.5-flash",
    messages: [{ role: "user", content: "Hi" }],
    tools: [],
    ...overrides,
  };
}

function body(overrides: Partial<ChatRequest> = {}): Record<string, unknown> {
  return geminiBody(request(overrides));
}

/** Runs `chunks` through the SSE decoder into a fresh Gemini decoder. */
function decode(chunks: readonly string[]): StreamEvent[] {
  return decodeWith(geminiDialect(), chunks);
}

/** One frame as Gemini writes it: a data line and a CRLF blank line. */
function data(value: unknown): string {
  return `data: ${JSON.stringify(value)}\r\n\r\n`;
}

interface Usage {
  prompt: number;
  candidates?: number;
  thoughts?: number;
  cached?: number;
}

function chunk(parts: unknown[], finishReason?: string, usage?: Usage): string {
  const candidate: Record<string, unknown> = { content: { parts, role: "model" }, index: 0 };
  if (finishReason !== undefined) candidate.finishReason = finishReason;
  const value: Record<string, unknown> = {
    candidates: [candidate],
    modelVersion: "gemini-2.5-flash",
    responseId: "r1",
  };
  if (usage !== undefined) {
    const meta: Record<string, number> = { promptTokenCount: usage.prompt };
    if (usage.candidates !== undefined) meta.candidatesTokenCount = usage.candidates;
    if (usage.thoughts !== undefined) meta.thoughtsTokenCount = usage.thoughts;
    if (usage.cached !== undefined) meta.cachedContentTokenCount = usage.cached;
    meta.totalTokenCount = usage.prompt + (usage.candidates ?? 0) + (usage.thoughts ?? 0);
    value.usageMetadata = meta;
  }
  return data(value);
}

// A stream as Gemini sends it: text in chunks, usage growing on each, STOP on the last.
const RECORDED_TEXT = [
  chunk([{ text: "Hello" }], undefined, { prompt: 12, candidates: 1 }),
  chunk([{ text: ", wor" }], undefined, { prompt: 12, candidates: 3 }),
  chunk([{ text: "ld! é😀" }], "STOP", { prompt: 12, candidates: 5, cached: 4 }),
];

const PRETTY_ERROR = JSON.stringify(
  {
    error: {
      code: 503,
      message: "The model is overloaded. Please try again later.",
      status: "UNAVAILABLE",
    },
  },
  null,
  2,
);

// ---------------------------------------------------------------------------------------------
// Requests

Deno.test("gemini: the request streams generateContent as SSE with the key header", () => {
  const spec = geminiDialect().chatRequest({ baseUrl: BASE, apiKey: "AIza-test" }, request());
  assert.equal(
    spec.url,
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
  );
  assert.equal(spec.method, "POST");
  assert.deepEqual(spec.headers, {
    "content-type": "application/json",
    "x-goog-api-key": "AIza-test",
  });
  assert.deepEqual(JSON.parse(spec.body!), {
    contents: [{ role: "user", parts: [{ text: "Hi" }] }],
  });
});

Deno.test("gemini: no key, or an empty one, sends no x-goog-api-key header", () => {
  for (const apiKey of [undefined, ""]) {
    const spec = geminiDialect().chatRequest({ baseUrl: BASE, apiKey }, request());
    assert.equal("x-goog-api-key" in spec.headers, false);
  }
});

Deno.test("gemini: base URL slashes, /v1beta and a models/ prefix are not doubled", () => {
  const dialect = geminiDialect();
  const expected =
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
  for (const baseUrl of [BASE, `${BASE}/`, `${BASE}/v1beta`, `${BASE}/v1beta/`]) {
    for (const model of ["gemini-2.5-pro", "models/gemini-2.5-pro"]) {
      assert.equal(dialect.chatRequest({ baseUrl }, request({ model })).url, expected);
    }
  }
});

Deno.test("gemini: system messages become systemInstruction, roles are user and model", () => {
  const sent = body({
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello.", reasoning: "Greet back." },
      { role: "system", content: "Tools are available.", source: "tools" },
      { role: "user", content: "" },
      { role: "user", content: "Bye" },
      { role: "user", content: "Really." },
    ],
  });
  assert.deepEqual(sent.systemInstruction, {
    parts: [{ text: "You are terse.\n\nTools are available." }],
  });
  assert.deepEqual(sent.contents, [
    { role: "user", parts: [{ text: "Hi" }] },
    { role: "model", parts: [{ text: "Hello." }] },
    { role: "user", parts: [{ text: "Bye" }, { text: "Really." }] },
  ]);
});

Deno.test("gemini: tool calls replay as functionCall parts, results as merged functionResponses", () => {
  const messages: Message[] = [
    { role: "user", content: "Read two files" },
    {
      role: "assistant",
      content: "",
      toolCalls: [
        { id: "call_7", name: "read", arguments: '{"path":"a.ts"}' },
        { id: "fc-gemini-issued", name: "read", arguments: "{broken" },
        { id: "call_8", name: "", arguments: "{}" },
      ],
    },
    { role: "tool", toolCallId: "call_7", name: "read", content: "export {}" },
    {
      role: "tool",
      toolCallId: "fc-gemini-issued",
      name: "read",
      content: "no such file",
      isError: true,
    },
  ];
  assert.deepEqual(body({ messages }).contents, [
    { role: "user", parts: [{ text: "Read two files" }] },
    {
      role: "model",
      parts: [
        {
          functionCall: { name: "read", args: { path: "a.ts" } },
          thoughtSignature: "skip_thought_signature_validator",
        },
        {
          functionCall: { name: "read", args: {}, id: "fc-gemini-issued" },
          thoughtSignature: "skip_thought_signature_validator",
        },
      ],
    },
    {
      role: "user",
      parts: [
        { functionResponse: { name: "read", response: { output: "export {}" } } },
        {
          functionResponse: {
            name: "read",
            response: { error: "no such file" },
            id: "fc-gemini-issued",
          },
        },
      ],
    },
  ]);
});

Deno.test("gemini: tools become functionDeclarations with converted parameters", () => {
  const sent = body({
    tools: [TOOL, { name: "now", description: "The time.", parameters: { type: "object" } }],
  });
  assert.deepEqual(sent.tools, [{
    functionDeclarations: [
      {
        name: "read",
        description: "Reads a file.",
        parameters: {
          type: "object",
          properties: { path: { type: "string" } },
          required: ["path"],
        },
      },
      // Gemini wants no parameters at all for a tool that takes none.
      { name: "now", description: "The time." },
    ],
  }]);
});

Deno.test("gemini: generationConfig carries max tokens, temperature and thinking", () => {
  assert.deepEqual(body({ maxTokens: 1000, temperature: 0.2 }).generationConfig, {
    maxOutputTokens: 1000,
    temperature: 0.2,
  });
  const cases: [string, number][] = [
    ["minimal", 512],
    ["low", 2048],
    ["Medium", 8192],
    ["high", 24576],
    ["3000", 3000],
    ["whatever", -1],
  ];
  for (const [effort, budget] of cases) {
    assert.deepEqual(body({ reasoningEffort: effort }).generationConfig, {
      thinkingConfig: { thinkingBudget: budget, includeThoughts: true },
    });
  }
  assert.equal("generationConfig" in body({ reasoningEffort: "none" }), false);
  assert.equal("generationConfig" in body(), false);
});

// ---------------------------------------------------------------------------------------------
// JSON Schema conversion

Deno.test("gemini schema: keywords Gemini rejects are dropped", () => {
  assert.deepEqual(
    toGeminiSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      $id: "x",
      type: "object",
      title: "Args",
      properties: {
        path: { type: "string", default: "a", examples: ["b"], minLength: 1, format: "uri" },
        when: { type: "string", format: "date-time" },
        n: { type: "integer", format: "int64", minimum: 0, exclusiveMaximum: 9 },
        x: { type: "number", format: "decimal", multipleOf: 2 },
        list: { type: "array", items: { type: "string" }, minItems: 1, uniqueItems: true },
      },
      required: ["path", "gone"],
      additionalProperties: false,
    }),
    {
      type: "object",
      title: "Args",
      properties: {
        path: { type: "string", minLength: 1 },
        when: { type: "string", format: "date-time" },
        n: { type: "integer", format: "int64", minimum: 0 },
        x: { type: "number" },
        list: { type: "array", items: { type: "string" }, minItems: 1 },
      },
      required: ["path"],
    },
  );
});

Deno.test("gemini schema: null in types, unions and enums becomes nullable", () => {
  const converted = toGeminiSchema({
    type: "object",
    properties: {
      a: { type: ["string", "null"] },
      b: { anyOf: [{ type: "integer" }, { type: "null" }], description: "B." },
      c: { enum: ["x", "y", null] },
      d: { type: ["string", "integer"] },
      e: { oneOf: [{ type: "string" }, { type: "boolean" }] },
      f: { type: "null" },
    },
  });
  assert.deepEqual(converted?.properties, {
    a: { type: "string", nullable: true },
    b: { type: "integer", description: "B.", nullable: true },
    c: { enum: ["x", "y"], type: "string", nullable: true },
    d: { anyOf: [{ type: "string" }, { type: "integer" }] },
    e: { anyOf: [{ type: "string" }, { type: "boolean" }] },
    f: { nullable: true },
  });
});

Deno.test("gemini schema: const becomes enum; non-string enums move to the description", () => {
  const converted = toGeminiSchema({
    type: "object",
    properties: {
      kind: { const: "file" },
      level: { type: "integer", enum: [1, 2, 3], description: "How deep." },
      flag: { const: true },
    },
  });
  assert.deepEqual(converted?.properties, {
    kind: { enum: ["file"], type: "string" },
    level: { type: "integer", description: "How deep. Allowed values: 1, 2, 3." },
    flag: { description: "Allowed values: true." },
  });
});

Deno.test("gemini schema: local refs are inlined, a recursive one stops", () => {
  const converted = toGeminiSchema({
    type: "object",
    properties: {
      point: { $ref: "#/$defs/Point", description: "Where." },
      legacy: { $ref: "#/definitions/Name" },
      tree: { $ref: "#/$defs/Node" },
      missing: { $ref: "#/$defs/Nope" },
    },
    $defs: {
      Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
      Node: {
        type: "object",
        properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } } },
      },
    },
    definitions: { Name: { type: "string" } },
  });
  assert.deepEqual(converted, {
    type: "object",
    properties: {
      point: {
        type: "object",
        properties: { x: { type: "number" } },
        required: ["x"],
        description: "Where.",
      },
      legacy: { type: "string" },
      tree: {
        type: "object",
        properties: {
          children: {
            type: "array",
            items: { type: "object", description: "(recursive #/$defs/Node)" },
          },
        },
      },
      missing: { type: "object" },
    },
  });
});

Deno.test("gemini schema: allOf merges, empty objects and itemless arrays stay valid", () => {
  assert.deepEqual(
    toGeminiSchema({
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { properties: { b: { type: "object" }, c: { type: "array" } }, required: ["b"] },
      ],
    }),
    {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "object" }, c: { type: "array", items: {} } },
      required: ["a", "b"],
    },
  );
  assert.equal(toGeminiSchema({}), undefined);
  assert.equal(toGeminiSchema({ type: "object", properties: {} }), undefined);
  assert.equal(toGeminiSchema({ type: "object", additionalProperties: true }), undefined);
});

Deno.test("gemini schema: a zod 4 schema converts to what Gemini accepts", () => {
  const schema = z.toJSONSchema(z.object({
    path: z.string().describe("The file"),
    limit: z.number().int().optional(),
    mode: z.enum(["a", "b"]).nullable(),
    tags: z.array(z.string()).default([]),
    url: z.url(),
  }));
  assert.deepEqual(toGeminiSchema(schema as Record<string, unknown>), {
    type: "object",
    properties: {
      path: { type: "string", description: "The file" },
      limit: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 },
      mode: { type: "string", enum: ["a", "b"], nullable: true },
      tags: { type: "array", items: { type: "string" } },
      url: { type: "string" },
    },
    required: ["path", "mode", "tags", "url"],
  });
});

// ---------------------------------------------------------------------------------------------
// Decoding

Deno.test("gemini: a recorded text stream decodes to text, usage, then one finish", () => {
  const events = decode(RECORDED_TEXT);
  assert.deepEqual(types(events), ["text", "text", "text", "usage", "finish"]);
  assert.equal(text(events), "Hello, world! é😀");
  assert.deepEqual(events.at(-2), {
    type: "usage",
    promptTokens: 12,
    completionTokens: 5,
    cachedTokens: 4,
    reasoningTokens: 0,
  });
  assert.deepEqual(events.at(-1), { type: "finish", reason: "stop", raw: "STOP" });
});

Deno.test("gemini: the same events come out however the bytes are split", () => {
  const whole = RECORDED_TEXT.join("");
  const expected = decode([whole]);
  for (let cut = 1; cut < whole.length; cut += 5) {
    assert.deepEqual(decode([whole.slice(0, cut), whole.slice(cut)]), expected, `cut at ${cut}`);
  }
  assert.deepEqual(decode([...whole]), expected);
  assert.deepEqual(decode([whole.replaceAll("\r\n", "\n")]), expected);
});

Deno.test("gemini: thought parts are reasoning; thoughts count as completion tokens", () => {
  const events = decode([
    chunk([{ text: "Let me ", thought: true }], undefined, { prompt: 5, thoughts: 10 }),
    chunk([{ text: "think.", thought: true }, { text: "" }], undefined, {
      prompt: 5,
      thoughts: 20,
    }),
    chunk([{ text: "Done.", thoughtSignature: "abc" }], "STOP", {
      prompt: 5,
      candidates: 2,
      thoughts: 20,
    }),
  ]);
  assert.equal(text(events, "reasoning"), "Let me think.");
  assert.equal(text(events), "Done.");
  assert.deepEqual(events.at(-2), {
    type: "usage",
    promptTokens: 5,
    completionTokens: 22,
    cachedTokens: 0,
    reasoningTokens: 20,
  });
});

Deno.test("gemini: a function call arrives whole and ends at once; STOP then means tool_calls", () => {
  const events = decode([
    chunk([{ text: "Reading." }]),
    chunk([{ functionCall: { id: "fc-1", name: "read", args: { path: "a.ts" } } }], "STOP"),
  ]);
  assert.deepEqual(events.filter((e) => e.type.startsWith("toolCall")), [
    { type: "toolCallStart", index: 0, id: "fc-1", name: "read" },
    { type: "toolCallDelta", index: 0, delta: '{"path":"a.ts"}' },
    { type: "toolCallEnd", index: 0, id: "fc-1", name: "read", arguments: '{"path":"a.ts"}' },
  ]);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "tool_calls", raw: "STOP" });
});

Deno.test("gemini: parallel calls get indexes and unique made-up ids; nameless ones drop", () => {
  const stream = [
    chunk([
      { functionCall: { name: "read", args: { path: "a" } } },
      { functionCall: { name: "now" } },
      { functionCall: { name: "", args: {} } },
    ]),
    chunk([{ functionCall: { name: "read", args: { path: "b" } } }], "STOP"),
  ];
  const first = ends(decode(stream));
  const second = ends(decode(stream));
  assert.deepEqual(first.map((c) => [c.index, c.name, c.arguments]), [
    [0, "read", '{"path":"a"}'],
    [1, "now", "{}"],
    [2, "read", '{"path":"b"}'],
  ]);
  const ids = [...first, ...second].map((c) => c.id);
  for (const id of ids) assert.match(id, /^call_\d+$/);
  assert.equal(new Set(ids).size, 6);
});

Deno.test("gemini: finish reasons map to the neutral names, raw kept", () => {
  const cases: [string, string][] = [
    ["STOP", "stop"],
    ["MAX_TOKENS", "length"],
    ["SAFETY", "content_filter"],
    ["RECITATION", "content_filter"],
    ["BLOCKLIST", "content_filter"],
    ["PROHIBITED_CONTENT", "content_filter"],
    ["SPII", "content_filter"],
    ["OTHER", "other"],
    ["LANGUAGE", "other"],
  ];
  for (const [raw, reason] of cases) {
    assert.deepEqual(decode([chunk([{ text: "x" }], raw)]).at(-1), {
      type: "finish",
      reason,
      raw,
    });
  }
  // A blocked prompt has no candidate at all.
  const blocked = decode([data({ promptFeedback: { blockReason: "SAFETY" } })]);
  assert.deepEqual(blocked, [{ type: "finish", reason: "content_filter", raw: "SAFETY" }]);
});

Deno.test("gemini: a usage-only chunk after the finish reason still counts", () => {
  const events = decode([
    chunk([{ text: "Hi" }], "STOP", { prompt: 4, candidates: 1 }),
    data({ usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2 } }),
  ]);
  assert.deepEqual(types(events), ["text", "usage", "finish"]);
  assert.equal((events[1] as { completionTokens: number }).completionTokens, 2);
});

Deno.test("gemini: MALFORMED_FUNCTION_CALL is an error, then finish error", () => {
  const events = decode([
    chunk([{ text: "Calling." }], undefined, { prompt: 3, candidates: 1 }),
    data({
      candidates: [{
        content: { parts: [], role: "model" },
        finishReason: "MALFORMED_FUNCTION_CALL",
        finishMessage: "Malformed function call: read(path=)",
      }],
    }),
  ]);
  assert.equal(text(events), "Calling.");
  const error = errorOf(events);
  assert.equal(error.message, "MALFORMED_FUNCTION_CALL: Malformed function call: read(path=)");
  assert.equal(error.retryable, true);
  assert.deepEqual(types(events), ["text", "error", "usage", "finish"]);
  assertFinish(events, "error");
});

Deno.test("gemini: an error object in a data chunk is an error with its status", () => {
  const events = decode([
    chunk([{ text: "Hal" }]),
    data({ error: { code: 500, message: "Internal error encountered.", status: "INTERNAL" } }),
    chunk([{ text: "ignored" }], "STOP"),
  ]);
  assert.equal(text(events), "Hal");
  assert.deepEqual(errorOf(events), {
    type: "error",
    message: "INTERNAL: Internal error encountered.",
    retryable: true,
    status: 500,
  });
  assertFinish(events, "error");
});

Deno.test("gemini: a raw error written mid-stream over several lines is collected and reported", () => {
  const events = decode([chunk([{ text: "Hal" }]), `${PRETTY_ERROR}\r\n`]);
  assert.equal(text(events), "Hal");
  assert.deepEqual(errorOf(events), {
    type: "error",
    message: "UNAVAILABLE: The model is overloaded. Please try again later.",
    retryable: true,
    status: 503,
  });
  assertFinish(events, "error");
  // The list form of the non-SSE stream, split anywhere, and with a retry delay.
  const listed = `[${
    JSON.stringify(
      {
        error: {
          code: 429,
          message: 'Resource has been exhausted (e.g. check quota). {"nested": [1]}',
          status: "RESOURCE_EXHAUSTED",
          details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "34.4s" }],
        },
      },
      null,
      2,
    )
  }\n]\n`;
  for (let cut = 1; cut < listed.length; cut += 13) {
    const split = decode([chunk([{ text: "a" }]), listed.slice(0, cut), listed.slice(cut)]);
    const error = errorOf(split);
    assert.equal(error.status, 429, `cut at ${cut}`);
    assert.equal(error.retryAfterMs, 34400);
    assert.match(error.message, /^RESOURCE_EXHAUSTED: Resource has been exhausted/);
    assertFinish(split, "error");
  }
});

Deno.test("gemini: a raw error cut short by the end of the stream is still an error", () => {
  const cut = PRETTY_ERROR.slice(0, PRETTY_ERROR.indexOf("Please"));
  const events = decode([chunk([{ text: "a" }]), cut]);
  const error = errorOf(events);
  assert.match(error.message, /The model is overloaded/);
  assertFinish(events, "error");
  // Stray text that is not JSON is not an error by itself.
  assert.deepEqual(
    types(decode(["garbage line\r\n", ...RECORDED_TEXT])),
    types(decode(RECORDED_TEXT)),
  );
});

Deno.test("gemini: a malformed chunk is an error and nothing after it is trusted", () => {
  const events = decode([
    chunk([{ text: "ok" }]),
    'data: {"choices": [{\n\n',
    chunk([{ text: "after" }], "STOP"),
  ]);
  assert.equal(text(events), "ok");
  const error = errorOf(events);
  assert.match(error.message, /^malformed chunk from the provider: \{"choices": \[\{/);
  assert.equal(error.retryable, true);
  assertFinish(events, "error");
});

Deno.test("gemini: a stream cut before its finish reason ends in an error", () => {
  const events = decode(RECORDED_TEXT.slice(0, 2));
  assert.equal(text(events), "Hello, wor");
  const error = errorOf(events);
  assert.match(error.message, /ended before/);
  assert.equal(error.retryable, true);
  assert.deepEqual(types(events).slice(-3), ["error", "usage", "finish"]);
  assertFinish(events, "error");
});

Deno.test("gemini: the decoder ignores everything after its finish, end included", () => {
  const events: StreamEvent[] = [];
  const sink = (event: StreamEvent): void => {
    events.push(event);
  };
  const decoder = geminiDialect().decoder();
  decoder.event(undefined, "{not json", sink);
  decoder.event(undefined, '{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}', sink);
  decoder.unframed?.("{", sink);
  decoder.end(sink);
  decoder.end(sink);
  assert.deepEqual(types(events), ["error", "finish"]);
});

// ---------------------------------------------------------------------------------------------
// Errors and models

const QUOTA_BODY = JSON.stringify({
  error: {
    code: 429,
    message: "You exceeded your current quota.\nPlease retry in 34.4s.",
    status: "RESOURCE_EXHAUSTED",
    details: [
      { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [] },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "34.4s" },
    ],
  },
});

Deno.test("gemini: error messages quote the provider with status and status name", () => {
  const dialect = geminiDialect();
  assert.equal(
    dialect.errorMessage(429, QUOTA_BODY),
    "429 RESOURCE_EXHAUSTED: You exceeded your current quota. Please retry in 34.4s.",
  );
  assert.equal(
    dialect.errorMessage(400, '[{"error":{"code":400,"message":"API key not valid."}}]'),
    "400 INVALID_ARGUMENT: API key not valid.",
  );
  assert.equal(
    dialect.errorMessage(502, "<html>Bad Gateway</html>"),
    "502: <html>Bad Gateway</html>",
  );
  assert.equal(dialect.errorMessage(503, ""), "503: empty response body");
});

Deno.test("gemini: 408, 429 and 5xx are retryable; the body's RetryInfo gives the delay", () => {
  const dialect = geminiDialect();
  for (const status of [408, 429, 500, 503, 504]) {
    assert.equal(dialect.isRetryable(status, ""), true);
  }
  for (const status of [400, 401, 403, 404]) assert.equal(dialect.isRetryable(status, ""), false);
  assert.equal(dialect.retryDelayMs!(429, QUOTA_BODY), 34400);
  assert.equal(
    dialect.retryDelayMs!(
      429,
      '{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":2,"nanos":500000000}}]}}',
    ),
    2500,
  );
  assert.equal(dialect.retryDelayMs!(429, '{"error":{"code":429}}'), undefined);
  assert.equal(dialect.retryDelayMs!(503, "not json"), undefined);
});

Deno.test("gemini: a context overflow is recognised by its message", () => {
  const dialect = geminiDialect();
  const error = (message: string) => JSON.stringify({ error: { code: 400, message } });
  assert.equal(
    dialect.isContextOverflow(
      400,
      error(
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
      ),
    ),
    true,
  );
  assert.equal(dialect.isContextOverflow(400, error("API key not valid.")), false);
  assert.equal(dialect.isContextOverflow(429, error("token count exceeds")), false);
});

Deno.test("gemini: models are listed with the key header and read without models/", () => {
  const dialect = geminiDialect();
  const spec = dialect.modelsRequest!({ baseUrl: BASE, apiKey: "AIza" });
  assert.equal(spec.method, "GET");
  assert.equal(spec.url, `${BASE}/v1beta/models?pageSize=1000`);
  assert.deepEqual(spec.headers, { "x-goog-api-key": "AIza" });
  assert.deepEqual(dialect.modelsRequest!({ baseUrl: BASE, apiKey: "" }).headers, {});
  assert.deepEqual(
    dialect.parseModels!(JSON.stringify({
      models: [
        { name: "models/gemini-2.5-pro", supportedGenerationMethods: ["generateContent"] },
        { name: "models/text-embedding-004", supportedGenerationMethods: ["embedContent"] },
        { name: "models/gemini-2.5-flash" },
        { displayName: "no name" },
      ],
    })),
    ["gemini-2.5-flash", "gemini-2.5-pro"],
  );
  assert.throws(() => dialect.parseModels!("{}"), /no models/);
});

// ---------------------------------------------------------------------------------------------
// The encoder

Deno.test("gemini encoder: frames, error bodies and the models listing look like the API", () => {
  const frames = geminiEncoder.frames({
    reasoning: "Hmm, ok.",
    text: "Hi there",
    toolCalls: [{ name: "read", arguments: { path: "a" } }, {
      id: "fc-2",
      name: "now",
      arguments: "",
    }],
    usage: { promptTokens: 3, completionTokens: 9 },
    chunkSize: 4,
  }, "gemini-test");
  assert.equal(frames.length, 5);
  const chunks = frames.map((frame) => {
    assert.ok(frame.startsWith("data: ") && frame.endsWith("}\r\n\r\n"));
    return JSON.parse(frame.slice(6));
  });
  assert.deepEqual(chunks[0].candidates[0].content.parts, [{ text: "Hmm,", thought: true }]);
  assert.deepEqual(chunks[4].candidates[0].content.parts, [
    { functionCall: { name: "read", args: { path: "a" } } },
    { functionCall: { name: "now", args: {}, id: "fc-2" } },
  ]);
  assert.equal(chunks[4].candidates[0].finishReason, "STOP");
  assert.equal(chunks[3].candidates[0].finishReason, undefined);
  const counts = chunks.map((c) => c.usageMetadata.candidatesTokenCount);
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b));
  assert.equal(counts.at(-1), 9);
  const quota = JSON.parse(geminiEncoder.errorBody(429, "Quota exceeded"));
  assert.equal(quota.error.status, "RESOURCE_EXHAUSTED");
  assert.equal(geminiDialect().retryDelayMs!(429, geminiEncoder.errorBody(429, "x")), 1000);
  assert.deepEqual(JSON.parse(geminiEncoder.errorBody(404, "No model")), {
    error: { code: 404, message: "No model", status: "NOT_FOUND" },
  });
  const streamError = geminiEncoder.streamErrorFrame("Boom");
  assert.ok(!streamError.startsWith("data:"));
  assert.ok(streamError.split("\n").length > 4);
  assert.equal(JSON.parse(streamError).error.message, "Boom");
  assert.deepEqual(JSON.parse(geminiEncoder.modelsBody(["g-1"])).models[0], {
    name: "models/g-1",
    displayName: "g-1",
    supportedGenerationMethods: ["generateContent", "countTokens"],
  });
});

// ---------------------------------------------------------------------------------------------
// End to end: ProviderClient against the fake provider

function harness(key: { apiKey?: string } = { apiKey: "AIza-fake" }): Promise<Harness> {
  return startHarness({ dialect: geminiDialect, encoder: geminiEncoder, request }, key);
}

Deno.test("gemini e2e: text and usage stream through the client", async () => {
  await using h = await harness();
  h.server.script({
    text: "Hello from the fake Gemini, with ünïcödé 😀.",
    usage: { promptTokens: 21, completionTokens: 9 },
    chunkSize: 5,
  });
  const { events, attempts, status } = await h.run(request({ tools: [TOOL] }));
  assert.equal(status, 200);
  assert.equal(attempts, 1);
  assert.equal(text(events), "Hello from the fake Gemini, with ünïcödé 😀.");
  assert.ok(events.filter((e) => e.type === "text").length > 5);
  assert.deepEqual(events.at(-2), {
    type: "usage",
    promptTokens: 21,
    completionTokens: 9,
    cachedTokens: 0,
    reasoningTokens: 0,
  });
  assert.deepEqual(events.at(-1), { type: "finish", reason: "stop", raw: "STOP" });
  const sent = h.server.chats[0];
  assert.equal(sent.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  assert.equal(sent.flavor, "gemini");
  assert.equal(sent.headers["x-goog-api-key"], "AIza-fake");
  assert.ok(Array.isArray((sent.body as { contents: unknown }).contents));
});

Deno.test("gemini e2e: no key, or an empty one, reaches the server as no header", async () => {
  for (const key of [{}, { apiKey: "" }]) {
    await using h = await harness(key);
    h.server.script({ text: "ok" });
    const { events } = await h.run();
    assertFinish(events, "stop");
    assert.equal("x-goog-api-key" in h.server.chats[0].headers, false);
  }
});

Deno.test("gemini e2e: thoughts stream as reasoning before the text", async () => {
  await using h = await harness();
  h.server.script({ reasoning: "The user greets me; greet back.", text: "Hi!" });
  const { events } = await h.run(request({ reasoningEffort: "low" }));
  assert.equal(text(events, "reasoning"), "The user greets me; greet back.");
  assert.equal(text(events), "Hi!");
  assert.ok(
    events.findIndex((e) => e.type === "reasoning") < events.findIndex((e) => e.type === "text"),
  );
  assertFinish(events, "stop");
});

Deno.test("gemini e2e: a single function call comes back whole, ending as tool_calls", async () => {
  await using h = await harness();
  h.server.script({
    text: "Let me read it.",
    toolCalls: [{ name: "read", arguments: { path: "src/main.ts", lines: [1, 20] } }],
    usage: { promptTokens: 40, completionTokens: 12 },
  });
  const { events } = await h.run(request({ tools: [TOOL] }));
  const [call] = ends(events);
  assert.equal(call.name, "read");
  assert.equal(call.arguments, '{"path":"src/main.ts","lines":[1,20]}');
  assert.match(call.id, /^call_\d+$/);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "tool_calls", raw: "STOP" });
});

Deno.test("gemini e2e: parallel function calls come back in order", async () => {
  await using h = await harness();
  h.server.script({
    toolCalls: [
      { id: "fc-a", name: "read", arguments: { path: "a" } },
      { name: "read", arguments: "{}" },
      { name: "now", arguments: "" },
    ],
  });
  const { events } = await h.run(request({ tools: [TOOL] }));
  const calls = ends(events);
  assert.deepEqual(calls.map((c) => [c.index, c.name, c.arguments]), [
    [0, "read", '{"path":"a"}'],
    [1, "read", "{}"],
    [2, "now", "{}"],
  ]);
  assert.equal(calls[0].id, "fc-a");
  assert.equal(new Set(calls.map((c) => c.id)).size, 3);
  assertFinish(events, "tool_calls");
});

Deno.test("gemini e2e: a 429 with retry-after-ms is retried after that wait", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 429, retryAfterMs: 1234, message: "Slow down" } },
    { text: "second time lucky" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 2);
  assert.deepEqual(h.sleeps, [1234]);
  assert.equal(text(events), "second time lucky");
  assertFinish(events, "stop");
});

Deno.test("gemini e2e: a 429 without headers waits for the body's RetryInfo delay", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 429, message: "Quota exceeded" } },
    { text: "later" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 2);
  assert.deepEqual(h.sleeps, [1000]);
  assertFinish(events, "stop");
});

Deno.test("gemini e2e: 500 and 503 are retried with backoff", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 500 } },
    { fault: { kind: "status", status: 503, message: "The model is overloaded." } },
    { text: "up again" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 3);
  assert.equal(h.sleeps.length, 2);
  assert.equal(text(events), "up again");
  assertFinish(events, "stop");
});

Deno.test("gemini e2e: a 400 is not retried and reads clearly", async () => {
  await using h = await harness();
  h.server.script(
    {
      fault: {
        kind: "status",
        status: 400,
        message: "API key not valid. Please pass a valid API key.",
      },
    },
    { text: "never sent" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 1);
  assert.equal(h.server.pending, 1);
  const error = errorOf(events);
  assert.equal(
    error.message,
    "400 INVALID_ARGUMENT: API key not valid. Please pass a valid API key.",
  );
  assert.equal(error.retryable, false);
  assert.equal(error.status, 400);
  assertFinish(events, "error");
});

Deno.test("gemini e2e: a dropped connection is one error and one finish", async () => {
  await using h = await harness();
  h.server.script({
    text: "This answer will be cut off halfway through.",
    chunkSize: 4,
    fault: { kind: "drop", afterEvents: 3 },
  });
  const { events } = await h.run();
  assert.equal(text(events), "This answer ");
  assert.equal(errorOf(events).retryable, true);
  assertFinish(events, "error");
});

Deno.test("gemini e2e: a malformed chunk is reported as such", async () => {
  await using h = await harness();
  h.server.script({ text: "abcdefgh", chunkSize: 2, fault: { kind: "malformed", afterEvents: 1 } });
  const { events } = await h.run();
  assert.equal(text(events), "ab");
  assert.match(errorOf(events).message, /^malformed chunk from the provider/);
  assertFinish(events, "error");
});

Deno.test("gemini e2e: an unframed mid-stream error carries Gemini's message", async () => {
  await using h = await harness();
  h.server.script({
    text: "abcdefgh",
    chunkSize: 2,
    fault: { kind: "streamError", afterEvents: 2, message: "Internal error encountered." },
  });
  const { events } = await h.run();
  assert.equal(text(events), "abcd");
  const error = errorOf(events);
  assert.equal(error.message, "INTERNAL: Internal error encountered.");
  assert.equal(error.retryable, true);
  assert.equal(error.status, 500);
  assertFinish(events, "error");
});

Deno.test("gemini e2e: a slow first byte is waited for", async () => {
  await using h = await harness();
  h.server.script({ text: "eventually", fault: { kind: "slowFirstByte", delayMs: 150 } });
  const started = performance.now();
  const { events } = await h.run();
  assert.ok(performance.now() - started >= 140);
  assert.equal(text(events), "eventually");
  assertFinish(events, "stop");
});

Deno.test("gemini e2e: models() lists the server's chat models", async () => {
  await using h = await harness();
  h.server.models = ["gemini-2.5-pro", "gemini-2.5-flash"];
  assert.deepEqual(await h.client.models(), ["gemini-2.5-flash", "gemini-2.5-pro"]);
  const listing = h.server.requests.at(-1)!;
  assert.equal(listing.method, "GET");
  assert.equal(listing.path, "/v1beta/models?pageSize=1000");
  assert.equal(listing.headers["x-goog-api-key"], "AIza-fake");
  assert.equal(listing.flavor, "gemini");
});
