import assert from "node:assert/strict";
import type { ChatRequest, Dialect, StreamEvent, SyncDialect } from "@amber/core";
import { openaiDialect } from "../../providers/openai.ts";
import { SseDecoder } from "../../providers/sse.ts";
import { openaiEncoder } from "../../providers/testing/openai.ts";
import { assertFinish, decodeWith, ends, errorOf, text, types } from "./_e2e.ts";

// ---------------------------------------------------------------------------------------------
// Helpers

const TOOL = {
  name: "read",
  description: "Reads a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "gpt-4.1", messages: [{ role: "user", content: "Hi" }], tools: [], ...overrides };
}

function bodyOf(dialect: SyncDialect, req: ChatRequest, apiKey?: string): Record<string, unknown> {
  const spec = dialect.chatRequest({ baseUrl: "https://api.openai.com/v1", apiKey }, req);
  return JSON.parse(spec.body!);
}

/** Runs `chunks` through the SSE decoder into a fresh dialect decoder. */
function decode(chunks: readonly string[], dialect: Dialect = openaiDialect()): StreamEvent[] {
  return decodeWith(dialect, chunks);
}

function data(value: unknown): string {
  return `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return data({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-4.1",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  });
}

function usageChunk(prompt: number, completion: number, cached = 0, reasoning = 0): string {
  return data({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-4.1",
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0 },
    },
  });
}

function finishes(events: readonly StreamEvent[]): StreamEvent[] {
  return events.filter((event) => event.type === "finish");
}

// A stream as OpenAI sends it: role chunk, text, finish reason, usage chunk, [DONE].
const RECORDED_TEXT = [
  chunk({ role: "assistant", content: "", refusal: null }),
  chunk({ content: "Hello" }),
  chunk({ content: ", wor" }),
  chunk({ content: "ld! é😀" }),
  chunk({}, "stop"),
  usageChunk(12, 5, 4, 2),
  data("[DONE]"),
];

// ---------------------------------------------------------------------------------------------
// Requests

Deno.test("openai: the request is a streaming chat completion with usage and a bearer key", () => {
  const dialect = openaiDialect();
  const spec = dialect.chatRequest(
    { baseUrl: "https://api.openai.com/v1", apiKey: "sk-test" },
    request({ tools: [TOOL], maxTokens: 1000, temperature: 0.2, reasoningEffort: "low" }),
  );
  assert.equal(spec.url, "https://api.openai.com/v1/chat/completions");
  assert.equal(spec.method, "POST");
  assert.deepEqual(spec.headers, {
    "content-type": "application/json",
    authorization: "Bearer sk-test",
  });
  assert.deepEqual(JSON.parse(spec.body!), {
    model: "gpt-4.1",
    messages: [{ role: "user", content: "Hi" }],
    stream: true,
    stream_options: { include_usage: true },
    tools: [{ type: "function", function: TOOL }],
    max_completion_tokens: 1000,
    temperature: 0.2,
    reasoning_effort: "low",
  });
});

Deno.test("openai: no key, or an empty one, sends no authorization header", () => {
  const dialect = openaiDialect();
  for (const apiKey of [undefined, ""]) {
    const spec = dialect.chatRequest({ baseUrl: "http://127.0.0.1:1/v1", apiKey }, request());
    assert.deepEqual(spec.headers, { "content-type": "application/json" });
    const models = dialect.modelsRequest!({ baseUrl: "http://127.0.0.1:1/v1", apiKey });
    assert.deepEqual(models.headers, {});
  }
});

Deno.test("openai: optional fields are left out when unset, tools when there are none", () => {
  const body = bodyOf(openaiDialect(), request());
  assert.deepEqual(Object.keys(body), ["model", "messages", "stream", "stream_options"]);
});

Deno.test("openai: maxTokensField selects the legacy max_tokens field", () => {
  const body = bodyOf(openaiDialect({ maxTokensField: "max_tokens" }), request({ maxTokens: 64 }));
  assert.equal(body.max_tokens, 64);
  assert.equal("max_completion_tokens" in body, false);
});

Deno.test("openai: messages map to the wire with system messages kept in place", () => {
  const body = bodyOf(
    openaiDialect(),
    request({
      messages: [
        { role: "system", content: "Be terse." },
        { role: "user", content: "Read the README" },
        {
          role: "assistant",
          content: "",
          reasoning: "They want a file.",
          toolCalls: [
            { id: "call_1", name: "read", arguments: '{"path":"README.md"}' },
            { id: "call_2", name: "list", arguments: "" },
          ],
        },
        { role: "tool", toolCallId: "call_1", name: "read", content: "# amber" },
        { role: "tool", toolCallId: "call_2", name: "list", content: "boom", isError: true },
        { role: "system", content: "Reminder: stay in the workspace.", source: "plugin" },
        { role: "assistant", content: "It says amber." },
      ],
    }),
  );
  assert.deepEqual(body.messages, [
    { role: "system", content: "Be terse." },
    { role: "user", content: "Read the README" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "read", arguments: '{"path":"README.md"}' },
        },
        { id: "call_2", type: "function", function: { name: "list", arguments: "{}" } },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: "# amber" },
    { role: "tool", tool_call_id: "call_2", content: "boom" },
    { role: "system", content: "Reminder: stay in the workspace." },
    { role: "assistant", content: "It says amber." },
  ]);
});

Deno.test("openai: an assistant message with text and tool calls keeps its text", () => {
  const body = bodyOf(
    openaiDialect(),
    request({
      messages: [{
        role: "assistant",
        content: "Let me look.",
        toolCalls: [{ id: "c", name: "read", arguments: "{}" }],
      }],
    }),
  );
  assert.equal((body.messages as { content: unknown }[])[0].content, "Let me look.");
});

Deno.test("openai: a trailing slash on the base URL is not doubled", () => {
  const dialect = openaiDialect();
  assert.equal(
    dialect.chatRequest({ baseUrl: "http://h/v1/" }, request()).url,
    "http://h/v1/chat/completions",
  );
  assert.equal(dialect.modelsRequest!({ baseUrl: "http://h/v1/" }).url, "http://h/v1/models");
});

// ---------------------------------------------------------------------------------------------
// Decoding

Deno.test("openai: a recorded text stream decodes to text, usage, then one finish", () => {
  const events = decode(RECORDED_TEXT);
  assert.deepEqual(events, [
    { type: "text", delta: "Hello" },
    { type: "text", delta: ", wor" },
    { type: "text", delta: "ld! é😀" },
    { type: "usage", promptTokens: 12, completionTokens: 5, cachedTokens: 4, reasoningTokens: 2 },
    { type: "finish", reason: "stop", raw: "stop" },
  ]);
});

Deno.test("openai: the same events come out however the bytes are split", () => {
  const whole = RECORDED_TEXT.join("");
  const expected = decode([whole]);
  for (let at = 0; at <= whole.length; at++) {
    assert.deepEqual(decode([whole.slice(0, at), whole.slice(at)]), expected, `split at ${at}`);
  }
  // And byte by byte, through pushBytes, with CRLF line endings.
  const crlf = whole.replaceAll("\n", "\r\n");
  const bytes = new TextEncoder().encode(crlf);
  const events: StreamEvent[] = [];
  const decoder = openaiDialect().decoder();
  const sse = new SseDecoder((name, d) => decoder.event(name, d, (e) => events.push(e)));
  for (let i = 0; i < bytes.length; i++) sse.pushBytes(bytes.subarray(i, i + 1));
  sse.end();
  decoder.end((e) => events.push(e));
  assert.deepEqual(events, expected);
});

Deno.test("openai: reasoning comes from reasoning_content or reasoning", () => {
  const events = decode([
    chunk({ role: "assistant", content: null, reasoning_content: "Think" }),
    chunk({ content: null, reasoning_content: "ing." }),
    chunk({ reasoning: " More." }),
    chunk({ reasoning_content: null, reasoning: null, content: "Done" }),
    chunk({}, "stop"),
    data("[DONE]"),
  ]);
  assert.equal(text(events, "reasoning"), "Thinking. More.");
  assert.equal(text(events), "Done");
  assertFinish(events, "stop");
});

Deno.test("openai: a streamed tool call starts, streams its arguments and ends whole", () => {
  const events = decode([
    chunk({ role: "assistant", content: null }),
    chunk({
      tool_calls: [{
        index: 0,
        id: "call_abc",
        type: "function",
        function: { name: "read", arguments: "" },
      }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: 'th":"a.md"}' } }] }),
    chunk({}, "tool_calls"),
    usageChunk(30, 9),
    data("[DONE]"),
  ]);
  assert.deepEqual(events, [
    { type: "toolCallStart", index: 0, id: "call_abc", name: "read" },
    { type: "toolCallDelta", index: 0, delta: '{"pa' },
    { type: "toolCallDelta", index: 0, delta: 'th":"a.md"}' },
    { type: "toolCallEnd", index: 0, id: "call_abc", name: "read", arguments: '{"path":"a.md"}' },
    { type: "usage", promptTokens: 30, completionTokens: 9, cachedTokens: 0, reasoningTokens: 0 },
    { type: "finish", reason: "tool_calls", raw: "tool_calls" },
  ]);
});

Deno.test("openai: interleaved parallel calls are tracked by index and end in index order", () => {
  const events = decode([
    chunk({
      tool_calls: [
        { index: 1, id: "call_b", type: "function", function: { name: "list", arguments: "" } },
      ],
    }),
    chunk({
      tool_calls: [
        { index: 0, id: "call_a", type: "function", function: { name: "read", arguments: '{"p' } },
      ],
    }),
    chunk({
      tool_calls: [
        { index: 1, function: { arguments: '{"dir":' } },
        { index: 0, function: { arguments: '":1}' } },
      ],
    }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: '"."}' } }] }),
    chunk({}, "tool_calls"),
    data("[DONE]"),
  ]);
  assert.deepEqual(ends(events), [
    { type: "toolCallEnd", index: 0, id: "call_a", name: "read", arguments: '{"p":1}' },
    { type: "toolCallEnd", index: 1, id: "call_b", name: "list", arguments: '{"dir":"."}' },
  ]);
  // Every delta follows its call's start.
  const started = new Set<number>();
  for (const event of events) {
    if (event.type === "toolCallStart") started.add(event.index);
    if (event.type === "toolCallDelta") assert.ok(started.has(event.index));
  }
  assertFinish(events, "tool_calls");
});

Deno.test("openai: a nameless call is dropped, empty arguments become {}", () => {
  const events = decode([
    chunk({ tool_calls: [{ index: 0, id: "call_x", function: { arguments: '{"a":1}' } }] }),
    chunk({ tool_calls: [{ index: 1, id: "call_y", function: { name: "now", arguments: "" } }] }),
    chunk({}, "tool_calls"),
    data("[DONE]"),
  ]);
  assert.deepEqual(events.filter((e) => e.type.startsWith("toolCall")), [
    { type: "toolCallStart", index: 1, id: "call_y", name: "now" },
    { type: "toolCallEnd", index: 1, id: "call_y", name: "now", arguments: "{}" },
  ]);
});

Deno.test("openai: calls from servers that omit index or id still come out whole", () => {
  const events = decode([
    chunk({ tool_calls: [{ id: "c1", function: { name: "a", arguments: '{"x":1}' } }] }),
    chunk({ tool_calls: [{ id: "c2", function: { name: "b", arguments: "{}" } }] }),
    chunk({ tool_calls: [{ index: 2, function: { name: "c", arguments: "{}" } }] }),
    // Some servers say "stop" for a turn that called tools.
    chunk({}, "stop"),
    data("[DONE]"),
  ]);
  assert.deepEqual(ends(events).map((e) => [e.index, e.id, e.name, e.arguments]), [
    [0, "c1", "a", '{"x":1}'],
    [1, "c2", "b", "{}"],
    [2, "call_2", "c", "{}"],
  ]);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "tool_calls", raw: "stop" });
});

Deno.test("openai: Gemini-compatible calls (no index, empty ids, one chunk) stay apart", () => {
  const events = decode([
    data({
      choices: [{
        delta: {
          role: "assistant",
          tool_calls: [
            { id: "", type: "function", function: { name: "read", arguments: '{"path":"a"}' } },
            { id: "", type: "function", function: { name: "read", arguments: '{"path":"b"}' } },
          ],
        },
        finish_reason: "stop",
      }],
    }),
    data("[DONE]"),
  ]);
  assert.deepEqual(ends(events).map((e) => [e.index, e.id, e.arguments]), [
    [0, "call_0", '{"path":"a"}'],
    [1, "call_1", '{"path":"b"}'],
  ]);
  assertFinish(events, "tool_calls");
});

Deno.test("openai: finish reasons map to the neutral names, raw kept", () => {
  const cases: [string, string][] = [
    ["stop", "stop"],
    ["length", "length"],
    ["tool_calls", "tool_calls"],
    ["content_filter", "content_filter"],
    ["function_call", "tool_calls"],
    ["something_new", "other"],
  ];
  for (const [raw, reason] of cases) {
    const events = decode([chunk({ content: "x" }, raw), data("[DONE]")]);
    assert.deepEqual(events.at(-1), { type: "finish", reason, raw }, raw);
    assert.equal(finishes(events).length, 1);
  }
});

Deno.test("openai: choices null or empty, and a usage total on every chunk, report usage once", () => {
  const events = decode([
    data({
      choices: [{ delta: { content: "a" } }],
      usage: { prompt_tokens: 5, completion_tokens: 1 },
    }),
    data({
      choices: [{ delta: { content: "b" } }],
      usage: { prompt_tokens: 5, completion_tokens: 2 },
    }),
    data({ choices: [{ delta: {}, finish_reason: "stop" }], usage: null }),
    data({ choices: null, usage: { prompt_tokens: 5, completion_tokens: 3 } }),
    data("[DONE]"),
  ]);
  assert.deepEqual(events, [
    { type: "text", delta: "a" },
    { type: "text", delta: "b" },
    { type: "usage", promptTokens: 5, completionTokens: 3 },
    { type: "finish", reason: "stop", raw: "stop" },
  ]);
});

Deno.test("openai: an error object inside a 200 stream is an error, then finish error", () => {
  const events = decode([
    chunk({ content: "partial" }),
    data({
      error: { message: "The server had an error", type: "server_error", param: null, code: null },
    }),
    chunk({ content: "ignored" }),
    data("[DONE]"),
  ]);
  assert.deepEqual(events, [
    { type: "text", delta: "partial" },
    { type: "error", message: "server_error: The server had an error", retryable: true },
    { type: "finish", reason: "error" },
  ]);
});

Deno.test("openai: in-stream errors are retryable by their type or code", () => {
  const quota = errorOf(decode([
    data({
      error: { message: "Out of quota", type: "insufficient_quota", code: "insufficient_quota" },
    }),
  ]));
  assert.equal(quota.retryable, false);
  assert.equal(quota.message, "insufficient_quota: Out of quota");
  // OpenRouter puts an HTTP-like code in the error object.
  const routed = errorOf(decode([data({ error: { code: 502, message: "Upstream failed" } })]));
  assert.equal(routed.retryable, true);
  assert.equal(routed.status, 502);
  const bad = errorOf(decode([data({ error: { code: 400, message: "Bad" } })]));
  assert.equal(bad.retryable, false);
});

Deno.test("openai: a raw JSON error line outside SSE framing is reported", () => {
  const events = decode([
    chunk({ content: "a" }),
    '{"error":{"message":"upstream overloaded","type":"overloaded_error"}}\n',
    data("[DONE]"),
  ]);
  assert.equal(errorOf(events).message, "overloaded_error: upstream overloaded");
  assertFinish(events, "error");
});

Deno.test("openai: a malformed chunk is an error and the stream is not trusted further", () => {
  const events = decode([
    chunk({ content: "a" }),
    'data: {"choices": [{\n\n',
    chunk({ content: "b" }),
    chunk({}, "stop"),
    data("[DONE]"),
  ]);
  assert.deepEqual(types(events), ["text", "error", "finish"]);
  assert.match(errorOf(events).message, /^malformed chunk from the provider: \{"choices": \[\{/);
  assertFinish(events, "error");
});

Deno.test("openai: a stream cut before its finish reason ends in an error", () => {
  const events = decode([chunk({ content: "a" })]);
  assert.deepEqual(types(events), ["text", "error", "finish"]);
  assert.equal(errorOf(events).retryable, true);
  assertFinish(events, "error");
});

Deno.test("openai: a finish reason without [DONE] still finishes cleanly, usage first", () => {
  const events = decode([chunk({ content: "a" }), chunk({}, "length"), usageChunk(1, 1)]);
  assert.deepEqual(types(events), ["text", "usage", "finish"]);
  assertFinish(events, "length");
});

Deno.test("openai: [DONE] without a finish reason is a clean stop; keep-alives are ignored", () => {
  const events = decode([": keep-alive\n\n", "data:\n\n", chunk({ content: "a" }), data("[DONE]")]);
  assert.deepEqual(events, [{ type: "text", delta: "a" }, { type: "finish", reason: "stop" }]);
});

Deno.test("openai: the decoder ignores everything after its finish, end included", () => {
  const dialect = openaiDialect();
  const decoder = dialect.decoder();
  const events: StreamEvent[] = [];
  const sink = (e: StreamEvent) => events.push(e);
  decoder.event(
    undefined,
    JSON.stringify({ choices: [{ delta: {}, finish_reason: "stop" }] }),
    sink,
  );
  decoder.event(undefined, "[DONE]", sink);
  decoder.event(undefined, "[DONE]", sink);
  decoder.event(undefined, "{not json", sink);
  decoder.end(sink);
  decoder.end(sink);
  assert.deepEqual(events, [{ type: "finish", reason: "stop", raw: "stop" }]);
});

// ---------------------------------------------------------------------------------------------
// Errors and models

Deno.test("openai: error messages quote the provider with status and code", () => {
  const dialect = openaiDialect();
  assert.equal(
    dialect.errorMessage(
      429,
      '{"error":{"message":"Rate limit reached for gpt-4.1","type":"requests","param":null,"code":"rate_limit_exceeded"}}',
    ),
    "429 rate_limit_exceeded: Rate limit reached for gpt-4.1",
  );
  assert.equal(
    dialect.errorMessage(
      400,
      '{"error":{"message":"Bad\\nthing","type":"invalid_request_error","param":null,"code":null}}',
    ),
    "400 invalid_request_error: Bad thing",
  );
  // vLLM's top-level shape, a plain string error, and Gemini's array.
  assert.equal(
    dialect.errorMessage(
      400,
      '{"object":"error","message":"no such model","type":"NotFoundError","code":404}',
    ),
    "400 NotFoundError: no such model",
  );
  assert.equal(dialect.errorMessage(500, '{"error":"boom"}'), "500: boom");
  assert.equal(
    dialect.errorMessage(
      429,
      '[{"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}}]',
    ),
    "429: Quota",
  );
});

Deno.test("openai: a body that is not an error object is shown clipped to 300 characters", () => {
  const dialect = openaiDialect();
  const text = `upstream said: ${"x".repeat(1000)}`;
  const message = dialect.errorMessage(502, text);
  assert.ok(message.startsWith("502: upstream said: xxx"), message);
  assert.equal(message.length, "502: ".length + 300 + "...".length);
  // An HTML page (a proxy's) is reduced to what it says of itself, its markup left out.
  const html = `<html>\n<body>${"x".repeat(1000)}</body></html>`;
  assert.equal(dialect.errorMessage(502, html), `502: ${"x".repeat(120)}… (an HTML page)`);
  assert.equal(dialect.errorMessage(503, ""), "503: empty response body");
  assert.equal(dialect.errorMessage(404, "Not Found"), "404: Not Found");
});

Deno.test("openai: 408, 409, 429 and 5xx are retryable, a 429 out of quota is not", () => {
  const dialect = openaiDialect();
  for (const status of [408, 409, 429, 500, 502, 503, 529]) {
    assert.equal(dialect.isRetryable(status, ""), true, String(status));
  }
  for (const status of [400, 401, 403, 404, 422]) {
    assert.equal(dialect.isRetryable(status, ""), false, String(status));
  }
  const quota = openaiEncoder.errorBody(429, "You exceeded your current quota")
    .replace("rate_limit_exceeded", "insufficient_quota");
  assert.equal(dialect.isRetryable(429, quota), false);
});

Deno.test("openai: a context overflow is recognised by code or message", () => {
  const dialect = openaiDialect();
  assert.equal(
    dialect.isContextOverflow(
      400,
      '{"error":{"message":"This model\'s maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}',
    ),
    true,
  );
  assert.equal(
    dialect.isContextOverflow(
      400,
      '{"object":"error","message":"This model\'s maximum context length is 8192 tokens."}',
    ),
    true,
  );
  assert.equal(
    dialect.isContextOverflow(400, openaiEncoder.errorBody(400, "bad tool schema")),
    false,
  );
});

Deno.test("openai: models are listed from data[].id, sorted; junk lists nothing", () => {
  const dialect = openaiDialect();
  assert.deepEqual(dialect.parseModels!(openaiEncoder.modelsBody(["o3", "gpt-4.1", "gpt-4o"])), [
    "gpt-4.1",
    "gpt-4o",
    "o3",
  ]);
  assert.deepEqual(dialect.parseModels!("<html>"), []);
  assert.deepEqual(dialect.parseModels!('{"data":[{"id":7},null,{"id":"a"}]}'), ["a"]);
  const spec = dialect.modelsRequest!({ baseUrl: "http://h/v1", apiKey: "k" });
  assert.deepEqual(spec, {
    url: "http://h/v1/models",
    method: "GET",
    headers: { authorization: "Bearer k" },
  });
});
