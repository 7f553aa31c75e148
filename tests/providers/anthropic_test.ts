import assert from "node:assert/strict";
import type { ChatRequest, Message, StreamEvent } from "@amber/core";
import { anthropicBody, anthropicDialect } from "../../providers/anthropic.ts";
import { assertFinish, decodeWith, ends, errorOf, text, types } from "./_e2e.ts";

// ---------------------------------------------------------------------------------------------
// Helpers

const TOOL = {
  name: "read",
  description: "Reads a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

const BASE = "https://api.anthropic.com";

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "claude-sonnet-4-5",
    messages: [{ role: "user", content: "Hi" }],
    tools: [],
    ...overrides,
  };
}

function body(overrides: Partial<ChatRequest> = {}): Record<string, unknown> {
  return anthropicBody(request(overrides));
}

/** Runs `chunks` through the SSE decoder into a fresh Anthropic decoder. */
function decode(chunks: readonly string[]): StreamEvent[] {
  return decodeWith(anthropicDialect(), chunks);
}

/** One frame as Anthropic writes it: `event:` named after the data's type. */
function ev(data: { type: string; [key: string]: unknown }): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

function messageStart(input = 12, cacheRead = 0, cacheWrite = 0): string {
  return ev({
    type: "message_start",
    message: {
      id: "msg_01",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: input,
        cache_creation_input_tokens: cacheWrite,
        cache_read_input_tokens: cacheRead,
        output_tokens: 1,
      },
    },
  });
}

function blockStart(index: number, block: Record<string, unknown>): string {
  return ev({ type: "content_block_start", index, content_block: block });
}

function delta(index: number, value: Record<string, unknown>): string {
  return ev({ type: "content_block_delta", index, delta: value });
}

function blockStop(index: number): string {
  return ev({ type: "content_block_stop", index });
}

function messageEnd(stopReason: string, output: number): string[] {
  return [
    ev({
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: output },
    }),
    ev({ type: "message_stop" }),
  ];
}

const PING = ev({ type: "ping" });

// A stream as Anthropic sends it: start, block, ping, deltas, stop, delta, stop.
const RECORDED_TEXT = [
  messageStart(12, 100, 7),
  blockStart(0, { type: "text", text: "" }),
  PING,
  delta(0, { type: "text_delta", text: "Hello" }),
  delta(0, { type: "text_delta", text: ", wor" }),
  delta(0, { type: "text_delta", text: "ld! é😀" }),
  blockStop(0),
  ...messageEnd("end_turn", 6),
];

// ---------------------------------------------------------------------------------------------
// Requests

Deno.test("anthropic: the request is a streaming Messages call with version and key headers", () => {
  const spec = anthropicDialect().chatRequest(
    { baseUrl: BASE, apiKey: "sk-ant-test" },
    request({ tools: [TOOL] }),
  );
  assert.equal(spec.url, "https://api.anthropic.com/v1/messages");
  assert.equal(spec.method, "POST");
  assert.deepEqual(spec.headers, {
    "content-type": "application/json",
    "anthropic-version": "2023-06-01",
    "x-api-key": "sk-ant-test",
  });
  const sent = JSON.parse(spec.body!);
  assert.equal(sent.model, "claude-sonnet-4-5");
  assert.equal(sent.max_tokens, 8192);
  assert.equal(sent.stream, true);
  assert.deepEqual(sent.tools, [{
    name: "read",
    description: "Reads a file.",
    input_schema: TOOL.parameters,
    cache_control: { type: "ephemeral" },
  }]);
});

Deno.test("anthropic: no key, or an empty one, sends no x-api-key header", () => {
  for (const apiKey of [undefined, ""]) {
    const spec = anthropicDialect().chatRequest({ baseUrl: BASE, apiKey }, request());
    assert.equal("x-api-key" in spec.headers, false);
    assert.equal(spec.headers["anthropic-version"], "2023-06-01");
  }
});

Deno.test("anthropic: a trailing slash or /v1 on the base URL is not doubled", () => {
  const dialect = anthropicDialect();
  for (const baseUrl of [BASE, `${BASE}/`, `${BASE}/v1`, `${BASE}/v1/`]) {
    assert.equal(
      dialect.chatRequest({ baseUrl }, request()).url,
      "https://api.anthropic.com/v1/messages",
    );
  }
  assert.equal(
    dialect.chatRequest({ baseUrl: "https://api.deepseek.com/anthropic" }, request()).url,
    "https://api.deepseek.com/anthropic/v1/messages",
  );
});

Deno.test("anthropic: optional fields are left out when unset", () => {
  const sent = body();
  assert.deepEqual(Object.keys(sent).sort(), ["max_tokens", "messages", "model", "stream"]);
  assert.deepEqual(body({ maxTokens: 100, temperature: 0.2 }).max_tokens, 100);
  assert.equal(body({ temperature: 0.2 }).temperature, 0.2);
});

Deno.test("anthropic: system messages anywhere are joined into one cached system block", () => {
  const sent = body({
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Hi" },
      { role: "system", content: "Tools are available.", source: "tools" },
      { role: "system", content: "" },
    ],
  });
  assert.deepEqual(sent.system, [{
    type: "text",
    text: "You are terse.\n\nTools are available.",
    cache_control: { type: "ephemeral" },
  }]);
  assert.deepEqual(sent.messages, [{
    role: "user",
    content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }],
  }]);
});

Deno.test("anthropic: tool calls become tool_use and results one merged user message", () => {
  const messages: Message[] = [
    { role: "user", content: "Read two files" },
    {
      role: "assistant",
      content: "Reading both.",
      reasoning: "Two reads in parallel.",
      toolCalls: [
        { id: "toolu_1", name: "read", arguments: '{"path":"a.ts"}' },
        { id: "toolu_2", name: "read", arguments: "" },
        { id: "toolu_3", name: "read", arguments: "{not json" },
        { id: "toolu_4", name: "read", arguments: "[1,2]" },
        { id: "toolu_5", name: "", arguments: "{}" },
      ],
    },
    { role: "tool", toolCallId: "toolu_1", name: "read", content: "export {}" },
    { role: "tool", toolCallId: "toolu_2", name: "read", content: "no such file", isError: true },
    { role: "tool", toolCallId: "toolu_3", name: "read", content: "" },
    { role: "user", content: "And now?" },
  ];
  const sent = body({ messages });
  assert.deepEqual(sent.messages, [
    {
      role: "user",
      content: [{ type: "text", text: "Read two files", cache_control: { type: "ephemeral" } }],
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Reading both." },
        { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.ts" } },
        { type: "tool_use", id: "toolu_2", name: "read", input: {} },
        { type: "tool_use", id: "toolu_3", name: "read", input: {} },
        { type: "tool_use", id: "toolu_4", name: "read", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "export {}" },
        { type: "tool_result", tool_use_id: "toolu_2", content: "no such file", is_error: true },
        { type: "tool_result", tool_use_id: "toolu_3" },
        { type: "text", text: "And now?", cache_control: { type: "ephemeral" } },
      ],
    },
  ]);
});

Deno.test("anthropic: same-role runs merge, empty messages drop out, roles alternate", () => {
  const sent = body({
    messages: [
      { role: "user", content: "one" },
      { role: "user", content: "" },
      { role: "assistant", content: "" },
      { role: "user", content: "two" },
      { role: "assistant", content: "a" },
      { role: "assistant", content: "b" },
    ],
  });
  const turns = sent.messages as { role: string; content: unknown[] }[];
  assert.deepEqual(turns.map((t) => t.role), ["user", "assistant"]);
  assert.equal(turns[0].content.length, 2);
  assert.equal(turns[1].content.length, 2);
});

Deno.test("anthropic: a tool schema without type object is made an object schema", () => {
  const sent = body({ tools: [{ name: "now", description: "The time.", parameters: {} }] });
  assert.deepEqual(sent.tools, [{
    name: "now",
    description: "The time.",
    input_schema: { type: "object", properties: {} },
    cache_control: { type: "ephemeral" },
  }]);
});

Deno.test("anthropic: reasoning effort enables thinking with a budget below max_tokens", () => {
  const cases: [string, number][] = [["low", 2048], ["medium", 8192], ["high", 16384]];
  for (const [effort, budget] of cases) {
    const sent = body({ reasoningEffort: effort, temperature: 0.3 });
    assert.deepEqual(sent.thinking, { type: "enabled", budget_tokens: budget });
    assert.equal(sent.max_tokens, 8192 + budget);
    // The API takes no temperature but 1 with thinking on.
    assert.equal("temperature" in sent, false);
  }
  assert.deepEqual(body({ reasoningEffort: "5000" }).thinking, {
    type: "enabled",
    budget_tokens: 5000,
  });
  assert.deepEqual(body({ reasoningEffort: "HIGH", maxTokens: 4000 }).thinking, {
    type: "enabled",
    budget_tokens: 3999,
  });
  assert.equal(body({ reasoningEffort: "high", maxTokens: 4000 }).max_tokens, 4000);
  assert.equal("thinking" in body({ reasoningEffort: "high", maxTokens: 1000 }), false);
  assert.equal("thinking" in body({ reasoningEffort: "none" }), false);
  assert.equal(body({ reasoningEffort: "none", temperature: 0 }).temperature, 0);
});

// ---------------------------------------------------------------------------------------------
// Decoding

Deno.test("anthropic: a recorded text stream decodes to text, usage, then one finish", () => {
  const events = decode(RECORDED_TEXT);
  assert.deepEqual(types(events), ["text", "text", "text", "usage", "finish"]);
  assert.equal(text(events), "Hello, world! é😀");
  assert.deepEqual(events.at(-2), {
    type: "usage",
    promptTokens: 119,
    completionTokens: 6,
    cachedTokens: 100,
    cacheWriteTokens: 7,
  });
  assert.deepEqual(events.at(-1), { type: "finish", reason: "stop", raw: "end_turn" });
});

Deno.test("anthropic: the same events come out however the bytes are split", () => {
  const whole = RECORDED_TEXT.join("");
  const expected = decode([whole]);
  for (let cut = 1; cut < whole.length; cut += 7) {
    assert.deepEqual(decode([whole.slice(0, cut), whole.slice(cut)]), expected, `cut at ${cut}`);
  }
  assert.deepEqual(decode([...whole]), expected);
  assert.deepEqual(decode([whole.replaceAll("\n", "\r\n")]), expected);
});

Deno.test("anthropic: thinking streams as reasoning, then its signature", () => {
  const events = decode([
    messageStart(),
    blockStart(0, { type: "thinking", thinking: "", signature: "" }),
    delta(0, { type: "thinking_delta", thinking: "Let me " }),
    delta(0, { type: "thinking_delta", thinking: "think." }),
    delta(0, { type: "signature_delta", signature: "EqQBCgIYAhIM" }),
    blockStop(0),
    blockStart(1, { type: "redacted_thinking", data: "opaque" }),
    blockStop(1),
    blockStart(2, { type: "text", text: "" }),
    delta(2, { type: "text_delta", text: "Done." }),
    blockStop(2),
    ...messageEnd("end_turn", 20),
  ]);
  assert.equal(text(events, "reasoning"), "Let me think.");
  assert.equal(text(events), "Done.");
  assert.deepEqual(types(events), [
    "reasoning",
    "reasoning",
    "reasoningSignature",
    "text",
    "usage",
    "finish",
  ]);
  assert.deepEqual(events.find((e) => e.type === "reasoningSignature"), {
    type: "reasoningSignature",
    signature: "EqQBCgIYAhIM",
  });
});

Deno.test("anthropic: signed reasoning goes back first as a thinking block; unsigned does not", () => {
  const body = anthropicBody({
    model: "claude",
    tools: [],
    messages: [
      { role: "user", content: "read it" },
      {
        role: "assistant",
        content: "",
        reasoning: "I should read it.",
        reasoningSignature: "EqQBCgIYAhIM",
        toolCalls: [{ id: "toolu_1", name: "read", arguments: '{"path":"a"}' }],
      },
      { role: "tool", toolCallId: "toolu_1", name: "read", content: "text" },
      { role: "assistant", content: "done", reasoning: "unsigned" },
    ],
  }) as { messages: { role: string; content: { type: string; [k: string]: unknown }[] }[] };
  assert.deepEqual(body.messages[1].content.map((b) => b.type), ["thinking", "tool_use"]);
  assert.equal(body.messages[1].content[0].signature, "EqQBCgIYAhIM");
  assert.equal(body.messages[1].content[0].thinking, "I should read it.");
  assert.deepEqual(body.messages[3].content.map((b) => b.type), ["text"]);
});

Deno.test("anthropic: a tool_use block starts, streams its JSON and ends whole", () => {
  const events = decode([
    messageStart(),
    blockStart(0, { type: "text", text: "" }),
    delta(0, { type: "text_delta", text: "Reading." }),
    blockStop(0),
    blockStart(1, { type: "tool_use", id: "toolu_01A", name: "read", input: {} }),
    delta(1, { type: "input_json_delta", partial_json: "" }),
    delta(1, { type: "input_json_delta", partial_json: '{"pa' }),
    PING,
    delta(1, { type: "input_json_delta", partial_json: 'th":"a.ts"}' }),
    blockStop(1),
    ...messageEnd("tool_use", 30),
  ]);
  assert.deepEqual(events.filter((e) => e.type.startsWith("toolCall")), [
    { type: "toolCallStart", index: 1, id: "toolu_01A", name: "read" },
    { type: "toolCallDelta", index: 1, delta: '{"pa' },
    { type: "toolCallDelta", index: 1, delta: 'th":"a.ts"}' },
    {
      type: "toolCallEnd",
      index: 1,
      id: "toolu_01A",
      name: "read",
      arguments: '{"path":"a.ts"}',
    },
  ]);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "tool_calls", raw: "tool_use" });
});

Deno.test("anthropic: parallel calls end in block order; empty input is {}", () => {
  const events = decode([
    messageStart(),
    blockStart(0, { type: "tool_use", id: "toolu_1", name: "now", input: {} }),
    delta(0, { type: "input_json_delta", partial_json: "" }),
    blockStop(0),
    blockStart(1, { type: "tool_use", id: "toolu_2", name: "read", input: {} }),
    delta(1, { type: "input_json_delta", partial_json: '{"path":"b"}' }),
    blockStop(1),
    // A server that sends the whole input up front and no deltas.
    blockStart(2, { type: "tool_use", id: "toolu_3", name: "read", input: { path: "c" } }),
    blockStop(2),
    // A nameless call cannot be answered and is dropped.
    blockStart(3, { type: "tool_use", id: "toolu_4", name: "", input: {} }),
    delta(3, { type: "input_json_delta", partial_json: "{}" }),
    blockStop(3),
    ...messageEnd("tool_use", 30),
  ]);
  assert.deepEqual(
    ends(events).map((e) => [e.index, e.id, e.name, e.arguments]),
    [[0, "toolu_1", "now", "{}"], [1, "toolu_2", "read", '{"path":"b"}'], [
      2,
      "toolu_3",
      "read",
      '{"path":"c"}',
    ]],
  );
  assert.equal(events.filter((e) => e.type === "toolCallStart").length, 3);
});

Deno.test("anthropic: stop reasons map to the neutral names, raw kept", () => {
  const cases: [string, string][] = [
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["pause_turn", "stop"],
    ["max_tokens", "length"],
    ["model_context_window_exceeded", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "content_filter"],
    ["something_new", "other"],
  ];
  for (const [raw, reason] of cases) {
    const events = decode([messageStart(), ...messageEnd(raw, 1)]);
    assert.deepEqual(events.at(-1), { type: "finish", reason, raw });
  }
});

Deno.test("anthropic: an error event is an error, then finish error; overloaded is retryable", () => {
  const events = decode([
    messageStart(5),
    blockStart(0, { type: "text", text: "" }),
    delta(0, { type: "text_delta", text: "Hal" }),
    ev({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    delta(0, { type: "text_delta", text: "ignored" }),
  ]);
  assert.equal(text(events), "Hal");
  assert.deepEqual(errorOf(events), {
    type: "error",
    message: "overloaded_error: Overloaded",
    retryable: true,
    status: 529,
  });
  assertFinish(events, "error");
  // The input was billed: usage still comes, before the finish.
  assert.deepEqual(events.at(-2), {
    type: "usage",
    promptTokens: 5,
    completionTokens: 1,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  });
  const invalid = decode([
    ev({ type: "error", error: { type: "invalid_request_error", message: "bad" } }),
  ]);
  assert.equal(errorOf(invalid).retryable, false);
  assert.equal(errorOf(invalid).status, 400);
});

Deno.test("anthropic: a malformed chunk is an error and nothing after it is trusted", () => {
  const events = decode([
    messageStart(),
    blockStart(0, { type: "text", text: "" }),
    delta(0, { type: "text_delta", text: "ok" }),
    'data: {"choices": [{\n\n',
    delta(0, { type: "text_delta", text: "after" }),
    ...messageEnd("end_turn", 3),
  ]);
  assert.equal(text(events), "ok");
  const error = errorOf(events);
  assert.match(error.message, /^malformed chunk from the provider: \{"choices": \[\{/);
  assert.equal(error.retryable, true);
  assertFinish(events, "error");
});

Deno.test("anthropic: a stream cut before its stop_reason ends in an error", () => {
  const events = decode(RECORDED_TEXT.slice(0, 5));
  assert.equal(text(events), "Hello, wor");
  const error = errorOf(events);
  assert.match(error.message, /ended before/);
  assert.equal(error.retryable, true);
  assertFinish(events, "error");
  // A tool call cut off mid-arguments is not ended: it would run with half its JSON.
  const cut = decode([
    messageStart(),
    blockStart(0, { type: "tool_use", id: "t", name: "read", input: {} }),
    delta(0, { type: "input_json_delta", partial_json: '{"pa' }),
  ]);
  assert.equal(ends(cut).length, 0);
  assertFinish(cut, "error");
});

Deno.test("anthropic: a stream cut after message_delta still finishes cleanly", () => {
  const events = decode(RECORDED_TEXT.slice(0, -1));
  assert.deepEqual(types(events), ["text", "text", "text", "usage", "finish"]);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "stop", raw: "end_turn" });
});

Deno.test("anthropic: frames without event lines, pings, unknown events and [DONE] decode the same", () => {
  const bare = RECORDED_TEXT.map((frame) => frame.replace(/^event: [a-z_]+\n/, ""));
  const noisy = [
    PING,
    ...RECORDED_TEXT.slice(0, 4),
    ev({ type: "some_future_event", detail: 1 }),
    ...RECORDED_TEXT.slice(4),
  ];
  const expected = decode(RECORDED_TEXT);
  assert.deepEqual(decode(bare), expected);
  assert.deepEqual(decode(noisy), expected);
  assert.deepEqual(decode([...RECORDED_TEXT, "data: [DONE]\n\n"]), expected);
});

Deno.test("anthropic: the decoder ignores everything after its finish, end included", () => {
  const events: StreamEvent[] = [];
  const sink = (event: StreamEvent): void => {
    events.push(event);
  };
  const decoder = anthropicDialect().decoder();
  decoder.event(
    "message_delta",
    '{"type":"message_delta","delta":{"stop_reason":"end_turn"}}',
    sink,
  );
  decoder.event("message_stop", '{"type":"message_stop"}', sink);
  decoder.event("message_stop", '{"type":"message_stop"}', sink);
  decoder.event("content_block_delta", "{not json", sink);
  decoder.end(sink);
  decoder.end(sink);
  assert.deepEqual(events, [{ type: "finish", reason: "stop", raw: "end_turn" }]);
});
