// The OpenAI Chat Completions wire end to end: ProviderClient against the fake provider.

import assert from "node:assert/strict";
import type { ChatRequest } from "@amber/core";
import { openaiDialect } from "../../providers/openai.ts";
import { openaiEncoder } from "../../providers/testing/openai.ts";
import { assertFinish, ends, errorOf, type Harness, startHarness, text } from "./_e2e.ts";

const TOOL = {
  name: "read",
  description: "Reads a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "gpt-4.1", messages: [{ role: "user", content: "Hi" }], tools: [], ...overrides };
}

// ---------------------------------------------------------------------------------------------
// End to end: ProviderClient against the fake provider

function harness(): Promise<Harness> {
  return startHarness(
    { dialect: openaiDialect, encoder: openaiEncoder, basePath: "/v1", request },
    { apiKey: "sk-fake" },
  );
}

Deno.test("openai e2e: text and usage stream through the client", async () => {
  await using h = await harness();
  h.server.script({
    text: "Hello from the fake model, with ünïcödé 😀.",
    usage: { promptTokens: 21, completionTokens: 9 },
    chunkSize: 5,
  });
  const { events, attempts, status } = await h.run(request({ tools: [TOOL] }));
  assert.equal(status, 200);
  assert.equal(attempts, 1);
  assert.equal(text(events), "Hello from the fake model, with ünïcödé 😀.");
  assert.ok(events.filter((e) => e.type === "text").length > 5);
  assert.deepEqual(events.at(-2), {
    type: "usage",
    promptTokens: 21,
    completionTokens: 9,
    cachedTokens: 0,
    reasoningTokens: 0,
  });
  assertFinish(events, "stop");
  const sent = h.server.chats[0];
  assert.equal(sent.path, "/v1/chat/completions");
  assert.equal(sent.headers.authorization, "Bearer sk-fake");
  const body = sent.body as Record<string, unknown>;
  assert.equal(body.stream, true);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.deepEqual(body.tools, [{ type: "function", function: TOOL }]);
});

Deno.test("openai e2e: reasoning streams before the text", async () => {
  await using h = await harness();
  h.server.script({ reasoning: "The user greets me; greet back.", text: "Hi!" });
  const { events } = await h.run();
  assert.equal(text(events, "reasoning"), "The user greets me; greet back.");
  assert.equal(text(events), "Hi!");
  assert.ok(
    events.findIndex((e) => e.type === "reasoning") < events.findIndex((e) => e.type === "text"),
  );
  assertFinish(events, "stop");
});

Deno.test("openai e2e: a single tool call comes back whole", async () => {
  await using h = await harness();
  h.server.script({
    toolCalls: [{ id: "call_1", name: "read", arguments: { path: "src/main.ts", lines: [1, 20] } }],
    usage: { promptTokens: 40, completionTokens: 12 },
    chunkSize: 3,
  });
  const { events } = await h.run(request({ tools: [TOOL] }));
  assert.deepEqual(ends(events), [{
    type: "toolCallEnd",
    index: 0,
    id: "call_1",
    name: "read",
    arguments: '{"path":"src/main.ts","lines":[1,20]}',
  }]);
  assert.equal(
    events.filter((e) => e.type === "toolCallDelta").map((e) => (e as { delta: string }).delta)
      .join(""),
    '{"path":"src/main.ts","lines":[1,20]}',
  );
  assertFinish(events, "tool_calls");
});

Deno.test("openai e2e: parallel tool calls come back in order, with generated ids", async () => {
  await using h = await harness();
  h.server.script({
    text: "Reading both.",
    toolCalls: [
      { name: "read", arguments: { path: "a.ts" } },
      { name: "read", arguments: '{"path":"b.ts"}' },
      { id: "call_z", name: "list", arguments: {} },
    ],
  });
  const { events } = await h.run();
  const calls = ends(events);
  assert.deepEqual(calls.map((c) => [c.index, c.name, c.arguments]), [
    [0, "read", '{"path":"a.ts"}'],
    [1, "read", '{"path":"b.ts"}'],
    [2, "list", "{}"],
  ]);
  assert.ok(calls[0].id.startsWith("call_") && calls[0].id !== calls[1].id);
  assert.equal(calls[2].id, "call_z");
  assert.equal(text(events), "Reading both.");
  assertFinish(events, "tool_calls");
});

Deno.test("openai e2e: a 429 with retry-after-ms is retried after that wait", async () => {
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

Deno.test("openai e2e: 500 and 529 are retried with backoff", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 500 } },
    { fault: { kind: "status", status: 529 } },
    { text: "up again" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 3);
  assert.equal(h.sleeps.length, 2);
  assert.equal(text(events), "up again");
  assertFinish(events, "stop");
});

Deno.test("openai e2e: a 400 is not retried and reads clearly", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 400, message: "Invalid schema for function 'read'" } },
    { text: "never sent" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 1);
  assert.equal(h.server.pending, 1);
  const error = errorOf(events);
  assert.equal(error.message, "400 invalid_request_error: Invalid schema for function 'read'");
  assert.equal(error.retryable, false);
  assert.equal(error.status, 400);
  assertFinish(events, "error");
});

Deno.test("openai e2e: retries give up after the last attempt with the provider's message", async () => {
  await using h = await harness();
  for (let i = 0; i < 4; i++) {
    h.server.script({ fault: { kind: "status", status: 503, message: "Overloaded" } });
  }
  const { events, attempts } = await h.run();
  assert.equal(attempts, 4);
  const error = errorOf(events);
  assert.equal(error.message, "503 server_error: Overloaded");
  assert.equal(error.retryable, true);
  assertFinish(events, "error");
});
