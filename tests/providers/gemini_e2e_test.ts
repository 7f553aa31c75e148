// The Gemini wire end to end: the fake provider's encoder, and ProviderClient talking to it.

import assert from "node:assert/strict";
import type { ChatRequest, Message } from "@amber/core";
import { geminiDialect } from "../../providers/gemini.ts";
import { geminiEncoder } from "../../providers/testing/gemini.ts";
import { assertFinish, ends, errorOf, type Harness, startHarness, text } from "./_e2e.ts";

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

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "gemini-2.5-flash",
    messages: [{ role: "user", content: "Hi" }],
    tools: [],
    ...overrides,
  };
}

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

function harness(): Promise<Harness> {
  return startHarness({ dialect: geminiDialect, encoder: geminiEncoder, request }, {
    apiKey: "AIza-fake",
  });
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
  assert.match(call.id, /^call_[0-9a-f]{12}_\d+$/);
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

Deno.test("gemini e2e: made-up ids stay unique across steps and on resume", async () => {
  const call = { name: "read", arguments: { path: "a" } };
  await using h = await harness();
  h.server.script({ toolCalls: [call, call] }, { toolCalls: [call] });
  const messages: Message[] = [{ role: "user", content: "Hi" }];
  const ids: string[] = [];
  for (let step = 0; step < 2; step++) {
    const calls = ends((await h.run(request({ tools: [TOOL], messages }))).events);
    messages.push({ role: "assistant", content: "", toolCalls: calls });
    for (const c of calls) {
      ids.push(c.id);
      messages.push({ role: "tool", toolCallId: c.id, name: c.name, content: "x" });
    }
  }
  assert.equal(new Set(ids).size, 3);

  // A new client (a resumed session) makes none of the ids its transcript holds.
  await using resumed = await harness();
  resumed.server.script({ toolCalls: [call] });
  const { events } = await resumed.run(request({ tools: [TOOL], messages }));
  const [again] = ends(events);
  assert.ok(!ids.includes(again.id), `${again.id} is new`);
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
