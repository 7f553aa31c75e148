import assert from "node:assert/strict";
import type { ChatRequest, Dialect, StreamEvent } from "@amber/core";
import { openaiResponsesDialect } from "../../providers/openai_responses.ts";
import { openaiResponsesEncoder } from "../../providers/testing/openai_responses.ts";
import { assertFinish, decodeWith, ends, errorOf, text } from "./_e2e.ts";

// ---------------------------------------------------------------------------------------------
// Helpers

const TOOL = {
  name: "get_weather",
  description: "Get weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "gpt-5", messages: [{ role: "user", content: "Hi" }], tools: [], ...overrides };
}

/** Runs `chunks` through the SSE decoder into a fresh dialect decoder. */
function decode(
  chunks: readonly string[],
  dialect: Dialect = openaiResponsesDialect(),
): StreamEvent[] {
  return decodeWith(dialect, chunks);
}

let seq = 0;
/** One event as OpenAI frames it: `event: <type>` and the same type in the data. */
function ev(type: string, fields: Record<string, unknown> = {}): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: seq++ })}\n\n`;
}

function response(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "resp_1",
    object: "response",
    created_at: 1,
    status,
    error: null,
    incomplete_details: null,
    model: "gpt-5",
    output: [],
    usage: null,
    ...extra,
  };
}

const USAGE = {
  input_tokens: 45,
  input_tokens_details: { cache_write_tokens: 0, cached_tokens: 8 },
  output_tokens: 25,
  output_tokens_details: { reasoning_tokens: 11 },
  total_tokens: 70,
};

// Shaped after a recorded gpt-5.1 stream: reasoning summary, text, then a function call.
const RECORDED = [
  ev("response.created", { response: response("in_progress") }),
  ev("response.in_progress", { response: response("in_progress") }),
  ev("response.output_item.added", {
    item: { id: "rs_1", type: "reasoning", summary: [] },
    output_index: 0,
  }),
  ev("response.reasoning_summary_part.added", {
    item_id: "rs_1",
    output_index: 0,
    part: { type: "summary_text", text: "" },
    summary_index: 0,
  }),
  ev("response.reasoning_summary_text.delta", {
    delta: "**Weather**",
    item_id: "rs_1",
    output_index: 0,
    summary_index: 0,
  }),
  ev("response.reasoning_summary_part.added", {
    item_id: "rs_1",
    output_index: 0,
    part: { type: "summary_text", text: "" },
    summary_index: 1,
  }),
  ev("response.reasoning_summary_text.delta", {
    delta: "Call the tool.",
    item_id: "rs_1",
    output_index: 0,
    summary_index: 1,
  }),
  ev("response.output_item.done", {
    item: { id: "rs_1", type: "reasoning", summary: [] },
    output_index: 0,
  }),
  ev("response.output_item.added", {
    item: { id: "msg_1", type: "message", status: "in_progress", content: [], role: "assistant" },
    output_index: 1,
  }),
  ev("response.content_part.added", {
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    part: { type: "output_text", annotations: [], text: "" },
  }),
  ev("response.output_text.delta", {
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    delta: "Checking ",
  }),
  ev("response.output_text.delta", {
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    delta: "Beijing.",
  }),
  ev("response.output_text.done", {
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    text: "Checking Beijing.",
  }),
  ev("response.output_item.done", {
    item: { id: "msg_1", type: "message", status: "completed", content: [], role: "assistant" },
    output_index: 1,
  }),
  ev("response.output_item.added", {
    item: {
      id: "fc_1",
      type: "function_call",
      status: "in_progress",
      arguments: "",
      call_id: "call_2FQd",
      name: "get_weather",
    },
    output_index: 2,
  }),
  ev("response.function_call_arguments.delta", {
    delta: '{"',
    item_id: "fc_1",
    obfuscation: "H2d0",
    output_index: 2,
  }),
  ev("response.function_call_arguments.delta", {
    delta: 'city":"Beijing"}',
    item_id: "fc_1",
    output_index: 2,
  }),
  ev("response.function_call_arguments.done", {
    arguments: '{"city":"Beijing"}',
    item_id: "fc_1",
    output_index: 2,
  }),
  ev("response.output_item.done", {
    item: {
      id: "fc_1",
      type: "function_call",
      status: "completed",
      arguments: '{"city":"Beijing"}',
      call_id: "call_2FQd",
      name: "get_weather",
    },
    output_index: 2,
  }),
  ev("response.completed", { response: response("completed", { usage: USAGE }) }),
];

// ---------------------------------------------------------------------------------------------
// Requests

Deno.test("responses: the request carries instructions, input items, tools and options", () => {
  const spec = openaiResponsesDialect().chatRequest(
    { baseUrl: "https://api.openai.com/v1", apiKey: "sk-test" },
    request({
      messages: [
        { role: "system", content: "Be terse." },
        { role: "user", content: "Weather in Beijing?" },
        {
          role: "assistant",
          content: "",
          reasoning: "Use the tool.",
          toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Beijing"}' }],
        },
        { role: "tool", toolCallId: "call_1", name: "get_weather", content: "Sunny, 21 C" },
        { role: "assistant", content: "Sunny." },
        { role: "system", content: "Stay in the workspace.", source: "plugin" },
        { role: "user", content: "Thanks" },
        {
          role: "assistant",
          content: "Also:",
          toolCalls: [{ id: "c2", name: "now", arguments: "" }],
        },
      ],
      tools: [TOOL],
      maxTokens: 2048,
      temperature: 0.5,
      reasoningEffort: "high",
    }),
  );
  assert.equal(spec.url, "https://api.openai.com/v1/responses");
  assert.equal(spec.method, "POST");
  assert.deepEqual(spec.headers, {
    "content-type": "application/json",
    authorization: "Bearer sk-test",
  });
  assert.deepEqual(JSON.parse(spec.body!), {
    model: "gpt-5",
    instructions: "Be terse.\n\nStay in the workspace.",
    input: [
      { role: "user", content: "Weather in Beijing?" },
      {
        type: "function_call",
        call_id: "call_1",
        name: "get_weather",
        arguments: '{"city":"Beijing"}',
      },
      { type: "function_call_output", call_id: "call_1", output: "Sunny, 21 C" },
      { role: "assistant", content: "Sunny." },
      { role: "user", content: "Thanks" },
      { role: "assistant", content: "Also:" },
      { type: "function_call", call_id: "c2", name: "now", arguments: "{}" },
    ],
    tools: [{ type: "function", ...TOOL, strict: false }],
    stream: true,
    store: false,
    max_output_tokens: 2048,
    temperature: 0.5,
    reasoning: { effort: "high" },
  });
});

Deno.test("responses: no key sends no authorization; unset options are left out", () => {
  const dialect = openaiResponsesDialect();
  for (const apiKey of [undefined, ""]) {
    const spec = dialect.chatRequest({ baseUrl: "http://127.0.0.1:1/v1/", apiKey }, request());
    assert.deepEqual(spec.headers, { "content-type": "application/json" });
    assert.equal(spec.url, "http://127.0.0.1:1/v1/responses");
    assert.deepEqual(JSON.parse(spec.body!), {
      model: "gpt-5",
      input: [{ role: "user", content: "Hi" }],
      stream: true,
      store: false,
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Decoding

Deno.test("responses: a recorded stream decodes reasoning, text, a tool call, usage, finish", () => {
  const events = decode(RECORDED);
  assert.deepEqual(events, [
    { type: "reasoning", delta: "**Weather**" },
    { type: "reasoning", delta: "\n\n" },
    { type: "reasoning", delta: "Call the tool." },
    { type: "text", delta: "Checking " },
    { type: "text", delta: "Beijing." },
    { type: "toolCallStart", index: 2, id: "call_2FQd", name: "get_weather" },
    { type: "toolCallDelta", index: 2, delta: '{"' },
    { type: "toolCallDelta", index: 2, delta: 'city":"Beijing"}' },
    {
      type: "toolCallEnd",
      index: 2,
      id: "call_2FQd",
      name: "get_weather",
      arguments: '{"city":"Beijing"}',
    },
    { type: "usage", promptTokens: 45, completionTokens: 25, cachedTokens: 8, reasoningTokens: 11 },
    { type: "finish", reason: "tool_calls", raw: "completed" },
  ]);
});

Deno.test("responses: the same events come out however the bytes are split", () => {
  const whole = RECORDED.join("");
  const expected = decode([whole]);
  for (let at = 0; at <= whole.length; at += 3) {
    assert.deepEqual(decode([whole.slice(0, at), whole.slice(at)]), expected, `split at ${at}`);
  }
  const pieces: string[] = [];
  for (let i = 0; i < whole.length; i += 7) pieces.push(whole.slice(i, i + 7));
  assert.deepEqual(decode(pieces), expected);
});

Deno.test("responses: a text-only response finishes with stop", () => {
  const events = decode([
    ev("response.output_text.delta", { delta: "Hi", output_index: 0 }),
    ev("response.completed", { response: response("completed") }),
  ]);
  assert.deepEqual(events, [
    { type: "text", delta: "Hi" },
    { type: "finish", reason: "stop", raw: "completed" },
  ]);
});

Deno.test("responses: reasoning_text deltas are reasoning too", () => {
  const events = decode([
    ev("response.reasoning_text.delta", { delta: "raw thought", output_index: 0 }),
    ev("response.completed", { response: response("completed") }),
  ]);
  assert.equal(text(events, "reasoning"), "raw thought");
});

Deno.test("responses: parallel calls end in output order with their own arguments", () => {
  const added = (index: number, call: string, name: string) =>
    ev("response.output_item.added", {
      item: { id: `fc_${index}`, type: "function_call", arguments: "", call_id: call, name },
      output_index: index,
    });
  const delta = (index: number, d: string) =>
    ev("response.function_call_arguments.delta", {
      delta: d,
      item_id: `fc_${index}`,
      output_index: index,
    });
  const events = decode([
    added(0, "call_a", "read"),
    added(1, "call_b", "list"),
    delta(1, '{"dir":'),
    delta(0, '{"path":"a"}'),
    delta(1, '"."}'),
    // No done events: the completed response ends what is still open.
    ev("response.completed", { response: response("completed") }),
  ]);
  assert.deepEqual(ends(events).map((e) => [e.index, e.id, e.name, e.arguments]), [
    [0, "call_a", "read", '{"path":"a"}'],
    [1, "call_b", "list", '{"dir":"."}'],
  ]);
  assertFinish(events, "tool_calls");
});

Deno.test("responses: a call reported only by output_item.done still comes out whole", () => {
  const events = decode([
    ev("response.output_item.done", {
      item: { id: "fc_9", type: "function_call", arguments: "", call_id: "call_9", name: "now" },
      output_index: 0,
    }),
    ev("response.output_item.done", {
      item: { id: "fc_10", type: "function_call", arguments: '{"a":1}', call_id: "", name: "" },
      output_index: 1,
    }),
    ev("response.completed", { response: response("completed") }),
  ]);
  assert.deepEqual(events.filter((e) => e.type.startsWith("toolCall")), [
    { type: "toolCallStart", index: 0, id: "call_9", name: "now" },
    { type: "toolCallEnd", index: 0, id: "call_9", name: "now", arguments: "{}" },
  ]);
  assertFinish(events, "tool_calls");
});

Deno.test("responses: response.incomplete finishes with length or content_filter", () => {
  const cut = decode([
    ev("response.output_text.delta", { delta: "Once upon", output_index: 0 }),
    ev("response.incomplete", {
      response: response("incomplete", {
        incomplete_details: { reason: "max_output_tokens" },
        usage: USAGE,
      }),
    }),
  ]);
  assert.deepEqual(cut.slice(1), [
    { type: "usage", promptTokens: 45, completionTokens: 25, cachedTokens: 8, reasoningTokens: 11 },
    { type: "finish", reason: "length", raw: "max_output_tokens" },
  ]);
  const filtered = decode([
    ev("response.incomplete", {
      response: response("incomplete", { incomplete_details: { reason: "content_filter" } }),
    }),
  ]);
  assert.deepEqual(filtered, [{ type: "finish", reason: "content_filter", raw: "content_filter" }]);
});

Deno.test("responses: a recorded error event then response.failed is one error, one finish", () => {
  const message = "You exceeded your current quota, please check your plan and billing details.";
  const events = decode([
    ev("response.created", { response: response("in_progress") }),
    ev("error", {
      error: { type: "insufficient_quota", code: "insufficient_quota", message, param: null },
    }),
    ev("response.failed", {
      response: response("failed", { error: { code: "insufficient_quota", message } }),
    }),
  ]);
  assert.deepEqual(events, [
    { type: "error", message: `insufficient_quota: ${message}`, retryable: false },
    { type: "finish", reason: "error" },
  ]);
});

Deno.test("responses: the SDK's flat error event shape is read too", () => {
  const events = decode([
    ev("error", { code: "rate_limit_exceeded", message: "Slow down", param: null }),
  ]);
  assert.deepEqual(errorOf(events), {
    type: "error",
    message: "rate_limit_exceeded: Slow down",
    retryable: true,
  });
  assertFinish(events, "error");
});

Deno.test("responses: response.failed alone is an error with the provider's message", () => {
  const events = decode([
    ev("response.created", { response: response("in_progress") }),
    ev("response.failed", {
      response: response("failed", {
        error: { code: "rate_limit_exceeded", message: "Request too large for gpt-4o-mini" },
      }),
    }),
  ]);
  const error = errorOf(events);
  assert.equal(error.message, "rate_limit_exceeded: Request too large for gpt-4o-mini");
  assert.equal(error.retryable, true);
  assertFinish(events, "error");
});

Deno.test("responses: a malformed chunk, or a stream cut short, ends in an error", () => {
  const malformed = decode([
    ev("response.output_text.delta", { delta: "a" }),
    'event: response.output_text.delta\ndata: {"choices": [{\n\n',
    ev("response.output_text.delta", { delta: "b" }),
    ev("response.completed", { response: response("completed") }),
  ]);
  assert.deepEqual(malformed.map((e) => e.type), ["text", "error", "finish"]);
  assert.match(errorOf(malformed).message, /^malformed chunk from the provider/);

  const cut = decode([ev("response.output_text.delta", { delta: "a" })]);
  assert.deepEqual(cut.map((e) => e.type), ["text", "error", "finish"]);
  assert.equal(errorOf(cut).retryable, true);
  assertFinish(cut, "error");
});

Deno.test("responses: unknown events are ignored; nothing follows the finish", () => {
  const events = decode([
    ev("response.web_search_call.in_progress", { output_index: 0 }),
    ev("response.output_text.annotation.added", { output_index: 0 }),
    ev("response.completed", { response: response("completed") }),
    ev("response.output_text.delta", { delta: "late" }),
    ev("error", { code: "server_error", message: "late" }),
  ]);
  assert.deepEqual(events, [{ type: "finish", reason: "stop", raw: "completed" }]);
});

Deno.test("responses: errors, retries, overflow and models are OpenAI's", () => {
  const dialect = openaiResponsesDialect();
  assert.equal(
    dialect.errorMessage(400, openaiResponsesEncoder.errorBody(400, "Unknown parameter: 'foo'.")),
    "400 invalid_request_error: Unknown parameter: 'foo'.",
  );
  assert.equal(dialect.isRetryable(429, openaiResponsesEncoder.errorBody(429, "slow")), true);
  assert.equal(dialect.isRetryable(400, ""), false);
  assert.equal(
    dialect.isContextOverflow(
      400,
      '{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","code":"context_length_exceeded"}}',
    ),
    true,
  );
  assert.deepEqual(dialect.parseModels!(openaiResponsesEncoder.modelsBody(["b", "a"])), ["a", "b"]);
  assert.equal(dialect.modelsRequest!({ baseUrl: "http://h/v1" }).url, "http://h/v1/models");
});
