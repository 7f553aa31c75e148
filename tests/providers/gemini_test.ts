import assert from "node:assert/strict";
import type { ChatRequest, Message, StreamEvent } from "@amber/core";
import { geminiBody, geminiDialect } from "../../providers/gemini.ts";
import { assertFinish, decodeWith, ends, errorOf, text, types } from "./_e2e.ts";

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

const MADE_UP = /^call_([0-9a-f]{12})_(\d+)$/;

Deno.test("gemini: parallel calls get indexes and made-up ids unique in the conversation", () => {
  const stream = [
    chunk([
      { functionCall: { name: "read", args: { path: "a" } } },
      { functionCall: { name: "now" } },
      { functionCall: { name: "", args: {} } },
    ]),
    chunk([{ functionCall: { name: "read", args: { path: "b" } } }], "STOP"),
  ];
  // Two steps of one conversation: one dialect (one client), a decoder per response.
  const dialect = geminiDialect();
  const first = ends(decodeWith(dialect, stream));
  const second = ends(decodeWith(dialect, stream));
  assert.deepEqual(first.map((c) => [c.index, c.name, c.arguments]), [
    [0, "read", '{"path":"a"}'],
    [1, "now", "{}"],
    [2, "read", '{"path":"b"}'],
  ]);
  const ids = [...first, ...second].map((c) => c.id);
  for (const id of ids) assert.match(id, MADE_UP);
  assert.equal(new Set(ids).size, 6);
});

Deno.test("gemini: made-up ids never repeat, whatever dialect or conversation makes them", () => {
  const stream = [
    chunk([{ functionCall: { name: "read" } }, { functionCall: { name: "now" } }], "STOP"),
  ];
  // Independent dialects (a new client, a resumed session) in one process share the tag and
  // go on counting, so neither a resume nor the interactive transcript sees an id twice.
  const ids = [geminiDialect(), geminiDialect(), geminiDialect()]
    .flatMap((dialect) => ends(decodeWith(dialect, stream)).map((c) => c.id));
  assert.equal(new Set(ids).size, 6);
  assert.equal(new Set(ids.map((id) => MADE_UP.exec(id)?.[1])).size, 1);
});

Deno.test("gemini: made-up ids differ between processes", async () => {
  // The ids another process (an earlier run, the session being resumed) made.
  const script = [
    'import { geminiDialect } from "@amber/providers/gemini";',
    "const decoder = geminiDialect().decoder();",
    "const ids = [];",
    "const sink = (e) => { if (e.type === 'toolCallEnd') ids.push(e.id); };",
    `decoder.event(undefined, ${
      JSON.stringify(JSON.stringify({
        candidates: [{
          content: { parts: [{ functionCall: { name: "read" } }] },
          finishReason: "STOP",
        }],
      }))
    }, sink);`,
    "decoder.end(sink);",
    "console.log(ids[0]);",
  ].join("\n");
  const run = async (): Promise<string> => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", script],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    assert.ok(output.success);
    return new TextDecoder().decode(output.stdout).trim();
  };
  const [a, b] = [await run(), await run()];
  const here = ends(decode([chunk([{ functionCall: { name: "read" } }], "STOP")]))[0].id;
  for (const id of [a, b, here]) assert.match(id, MADE_UP);
  assert.equal(new Set([a, b, here]).size, 3);
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
