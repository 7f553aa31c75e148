// The OpenAI Responses wire end to end: ProviderClient against the fake provider.

import assert from "node:assert/strict";
import type { ChatRequest } from "@amber/core";
import { openaiResponsesDialect } from "../../providers/openai_responses.ts";
import { openaiResponsesEncoder } from "../../providers/testing/openai_responses.ts";
import { assertFinish, ends, errorOf, type Harness, startHarness, text } from "./_e2e.ts";

const TOOL = {
  name: "get_weather",
  description: "Get weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "gpt-5", messages: [{ role: "user", content: "Hi" }], tools: [], ...overrides };
}

// ---------------------------------------------------------------------------------------------
// End to end: ProviderClient against the fake provider

function harness(): Promise<Harness> {
  return startHarness({
    dialect: openaiResponsesDialect,
    encoder: openaiResponsesEncoder,
    basePath: "/v1",
    request,
  }, { apiKey: "sk-fake" });
}

Deno.test("responses e2e: reasoning, text and usage stream through the client", async () => {
  await using h = await harness();
  h.server.script({
    reasoning: "Short greeting needed.",
    text: "Hello there, 世界 😀!",
    usage: { promptTokens: 17, completionTokens: 6 },
    chunkSize: 4,
  });
  const { events, attempts } = await h.run();
  assert.equal(attempts, 1);
  assert.equal(text(events, "reasoning"), "Short greeting needed.");
  assert.equal(text(events), "Hello there, 世界 😀!");
  assert.deepEqual(events.at(-2), {
    type: "usage",
    promptTokens: 17,
    completionTokens: 6,
    cachedTokens: 0,
    reasoningTokens: 0,
  });
  assertFinish(events, "stop");
  const sent = h.server.chats[0];
  assert.equal(sent.path, "/v1/responses");
  assert.equal(sent.headers.authorization, "Bearer sk-fake");
  assert.equal((sent.body as { stream: boolean }).stream, true);
});

Deno.test("responses e2e: single and parallel tool calls come back whole", async () => {
  await using h = await harness();
  h.server.script(
    { toolCalls: [{ id: "call_1", name: "get_weather", arguments: { city: "Paris" } }] },
    {
      text: "Checking both.",
      toolCalls: [
        { name: "get_weather", arguments: { city: "Oslo" } },
        { id: "call_3", name: "get_weather", arguments: '{"city":"Lima"}' },
      ],
      chunkSize: 2,
    },
  );
  const first = await h.run(request({ tools: [TOOL] }));
  assert.deepEqual(ends(first.events), [{
    type: "toolCallEnd",
    index: 0,
    id: "call_1",
    name: "get_weather",
    arguments: '{"city":"Paris"}',
  }]);
  assertFinish(first.events, "tool_calls");

  const second = await h.run(request({ tools: [TOOL] }));
  const calls = ends(second.events);
  assert.deepEqual(calls.map((c) => c.arguments), ['{"city":"Oslo"}', '{"city":"Lima"}']);
  assert.ok(calls[0].id.startsWith("call_"));
  assert.equal(calls[1].id, "call_3");
  assert.equal(text(second.events), "Checking both.");
  assertFinish(second.events, "tool_calls");
});

Deno.test("responses e2e: finish length and error come from incomplete and failed", async () => {
  await using h = await harness();
  h.server.script({ text: "cut", finish: "length" }, { text: "bad", finish: "error" });
  assertFinish((await h.run()).events, "length");
  const failed = (await h.run()).events;
  assert.match(errorOf(failed).message, /server_error: The model failed/);
  assertFinish(failed, "error");
});

Deno.test("responses e2e: 429 then success is retried after retry-after-ms", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 429, retryAfterMs: 250 } },
    { text: "ok now" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 2);
  assert.deepEqual(h.sleeps, [250]);
  assert.equal(text(events), "ok now");
  assertFinish(events, "stop");
});

Deno.test("responses e2e: 500 and 529 are retried", async () => {
  await using h = await harness();
  h.server.script(
    { fault: { kind: "status", status: 500 } },
    { fault: { kind: "status", status: 529 } },
    { text: "back" },
  );
  const { events, attempts } = await h.run();
  assert.equal(attempts, 3);
  assert.equal(text(events), "back");
  assertFinish(events, "stop");
});

Deno.test("responses e2e: a 400 is one clear, non-retryable error", async () => {
  await using h = await harness();
  h.server.script({
    fault: { kind: "status", status: 400, message: "Unsupported parameter: 'temperature'." },
  });
  const { events, attempts } = await h.run();
  assert.equal(attempts, 1);
  const error = errorOf(events);
  assert.equal(error.message, "400 invalid_request_error: Unsupported parameter: 'temperature'.");
  assert.equal(error.retryable, false);
  assertFinish(events, "error");
});
