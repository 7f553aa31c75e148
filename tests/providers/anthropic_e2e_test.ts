// The Anthropic wire end to end: the fake provider's encoder, and ProviderClient talking to it.

import assert from "node:assert/strict";
import type { ChatRequest } from "@amber/core";
import { anthropicDialect } from "../../providers/anthropic.ts";
import { anthropicEncoder } from "../../providers/testing/anthropic.ts";
import { assertFinish, ends, errorOf, type Harness, startHarness, text } from "./_e2e.ts";

const TOOL = {
  name: "read",
  description: "Reads a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "claude-sonnet-4-5",
    messages: [{ role: "user", content: "Hi" }],
    tools: [],
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------
// The encoder

Deno.test("anthropic encoder: frames, error bodies and the models listing look like the API", () => {
  const frames = anthropicEncoder.frames({
    reasoning: "Hmm.",
    text: "Hi",
    toolCalls: [{ name: "read", arguments: { path: "a" } }],
    usage: { promptTokens: 3, completionTokens: 9 },
  }, "claude-test");
  const names = frames.map((frame) => frame.slice(7, frame.indexOf("\n")));
  assert.deepEqual(names, [
    "message_start",
    "content_block_start",
    "ping",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  for (const frame of frames) {
    assert.ok(frame.endsWith("\n\n"));
    const data = JSON.parse(frame.split("\n")[1].slice(6));
    assert.equal(data.type, frame.slice(7, frame.indexOf("\n")));
  }
  assert.deepEqual(JSON.parse(anthropicEncoder.errorBody(529, "Overloaded")), {
    type: "error",
    error: { type: "overloaded_error", message: "Overloaded" },
    request_id: "req_fake_01",
  });
  assert.equal(JSON.parse(anthropicEncoder.errorBody(429, "x")).error.type, "rate_limit_error");
  assert.equal(
    JSON.parse(anthropicEncoder.errorBody(400, "x")).error.type,
    "invalid_request_error",
  );
  assert.equal(JSON.parse(anthropicEncoder.errorBody(500, "x")).error.type, "api_error");
  assert.equal(
    anthropicEncoder.streamErrorFrame("Overloaded"),
    'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
  );
  assert.deepEqual(JSON.parse(anthropicEncoder.modelsBody(["a", "b"])).data[1], {
    type: "model",
    id: "b",
    display_name: "b",
    created_at: "2025-01-01T00:00:00Z",
  });
});

// ---------------------------------------------------------------------------------------------
// End to end: ProviderClient against the fake provider

function harness(): Promise<Harness> {
  return startHarness({ dialect: anthropicDialect, encoder: anthropicEncoder, request }, {
    apiKey: "sk-ant-fake",
  });
}

Deno.test("anthropic e2e: text and usage stream through the client", async () => {
  await using h = await harness();
  h.server.script({
    text: "Hello from the fake Claude, with ünïcödé 😀.",
    usage: { promptTokens: 21, completionTokens: 9 },
    chunkSize: 5,
  });
  const { events, attempts, status } = await h.run(request({ tools: [TOOL] }));
  assert.equal(status, 200);
  assert.equal(attempts, 1);
  assert.equal(text(events), "Hello from the fake Claude, with ünïcödé 😀.");
  assert.ok(events.filter((e) => e.type === "text").length > 5);
  assert.deepEqual(events.at(-2), {
    type: "usage",
    promptTokens: 21,
    completionTokens: 9,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  });
  assert.deepEqual(events.at(-1), { type: "finish", reason: "stop", raw: "end_turn" });
  const sent = h.server.chats[0];
  assert.equal(sent.path, "/v1/messages");
  assert.equal(sent.flavor, "anthropic");
  assert.equal(sent.headers["x-api-key"], "sk-ant-fake");
  assert.equal(sent.headers["anthropic-version"], "2023-06-01");
  const sentBody = sent.body as Record<string, unknown>;
  assert.equal(sentBody.stream, true);
  assert.equal(sentBody.max_tokens, 8192);
});

Deno.test("anthropic e2e: thinking streams as reasoning before the text", async () => {
  await using h = await harness();
  h.server.script({ reasoning: "The user greets me; greet back.", text: "Hi!" });
  const { events } = await h.run(request({ reasoningEffort: "low" }));
  assert.equal(text(events, "reasoning"), "The user greets me; greet back.");
  assert.equal(text(events), "Hi!");
  assert.ok(
    events.findIndex((e) => e.type === "reasoning") < events.findIndex((e) => e.type === "text"),
  );
  assertFinish(events, "stop");
  assert.deepEqual((h.server.chats[0].body as { thinking: unknown }).thinking, {
    type: "enabled",
    budget_tokens: 2048,
  });
});

Deno.test("anthropic e2e: a single tool call comes back whole", async () => {
  await using h = await harness();
  h.server.script({
    text: "Let me read it.",
    toolCalls: [{
      id: "toolu_01",
      name: "read",
      arguments: { path: "src/main.ts", lines: [1, 20] },
    }],
    usage: { promptTokens: 40, completionTokens: 12 },
    chunkSize: 3,
  });
  const { events } = await h.run(request({ tools: [TOOL] }));
  assert.deepEqual(ends(events), [{
    type: "toolCallEnd",
    index: 1,
    id: "toolu_01",
    name: "read",
    arguments: '{"path":"src/main.ts","lines":[1,20]}',
  }]);
  const deltas = events.filter((e) => e.type === "toolCallDelta");
  assert.ok(deltas.length > 5);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "tool_calls", raw: "tool_use" });
});

Deno.test("anthropic e2e: parallel tool calls come back in order, with made-up ids", async () => {
  await using h = await harness();
  h.server.script({
    toolCalls: [
      { name: "read", arguments: { path: "a" } },
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
  assert.equal(new Set(calls.map((c) => c.id)).size, 3);
  assertFinish(events, "tool_calls");
});

Deno.test("anthropic e2e: a transcript with tool results round-trips to the server", async () => {
  await using h = await harness();
  h.server.script({ text: "It exports nothing." });
  const { events } = await h.run(request({
    tools: [TOOL],
    messages: [
      { role: "system", content: "Be terse." },
      { role: "user", content: "What does a.ts export?" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "toolu_1", name: "read", arguments: '{"path":"a.ts"}' }],
      },
      { role: "tool", toolCallId: "toolu_1", name: "read", content: "export {}" },
    ],
  }));
  assertFinish(events, "stop");
  const sent = h.server.chats[0].body as { messages: { role: string }[]; system: unknown };
  assert.deepEqual(sent.messages.map((m) => m.role), ["user", "assistant", "user"]);
});

Deno.test("anthropic e2e: a 429 with retry-after-ms is retried after that wait", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 429, retryAfterMs: 1234, message: "Slow down" } },
    { text: "second time lucky" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 2);
  assert.deepEqual(h.sleeps, [1234]);
  assert.equal(text(events), "second time lucky");
  assert.equal(events.some((e) => e.type === "error"), false);
  assertFinish(events, "stop");
});

Deno.test("anthropic e2e: 529 overloaded and 500 are retried with backoff", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 529, message: "Overloaded" } },
    { fault: { kind: "status", status: 500 } },
    { text: "up again" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 3);
  assert.equal(h.sleeps.length, 2);
  assert.equal(text(events), "up again");
  assertFinish(events, "stop");
});

Deno.test("anthropic e2e: a 400 is not retried and reads clearly", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 400, message: "messages: roles must alternate" } },
    { text: "never sent" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 1);
  assert.equal(h.server.pending, 1);
  const error = errorOf(events);
  assert.equal(
    error.message,
    "400 invalid_request_error: messages: roles must alternate (request req_fake_01)",
  );
  assert.equal(error.retryable, false);
  assert.equal(error.status, 400);
  assertFinish(events, "error");
});

Deno.test("anthropic e2e: retries give up after the last attempt with the provider's message", async () => {
  await using h = await harness();
  for (let i = 0; i < 4; i++) {
    h.server.script({ fault: { kind: "status", status: 529, message: "Overloaded" } });
  }
  const { events, attempts } = await h.run();
  assert.equal(attempts, 4);
  const error = errorOf(events);
  assert.equal(error.message, "529 overloaded_error: Overloaded (request req_fake_01)");
  assert.equal(error.retryable, true);
  assertFinish(events, "error");
});

Deno.test("anthropic e2e: quota headers on the response become an allowance", async () => {
  await using h = await harness();
  h.server.responseHeaders = {
    "anthropic-ratelimit-unified-5h-utilization": "0.25",
    "anthropic-ratelimit-unified-5h-reset": "1767225600",
  };
  h.server.script({ text: "ok" });
  const { headers } = await h.run();
  assert.deepEqual(anthropicDialect().allowanceFromHeaders!(headers), {
    windows: [{ label: "5h", percentUsed: 25, resetsAt: "2026-01-01T00:00:00.000Z" }],
  });
});
