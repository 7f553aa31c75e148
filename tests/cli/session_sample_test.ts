// `AgentSession.sample`: an MCP server's sampling request answered by one model call through the
// session's provider (the fake provider on loopback), with the real host and bundled plugins.

import assert from "node:assert/strict";
import type { ScriptedTurn } from "@amber/providers/testing";
import { type FakeSession, openFakeSession } from "./_fake_session.ts";
import { SamplingError } from "../../cli/session/sampling.ts";

const KEY = "sk-sample-test-8080";

function open(turns: ScriptedTurn[], provider?: string): Promise<FakeSession> {
  return openFakeSession(turns, { key: KEY, ...(provider === undefined ? {} : { provider }) });
}

const NEVER = new AbortController().signal;

Deno.test("sample sends the request's conversation to the provider and answers with text", async () => {
  await using s = await open([
    { text: "Paris.", usage: { promptTokens: 12, completionTokens: 2 } },
  ]);
  const result = await s.session.sample({
    systemPrompt: "Answer in one word.",
    maxTokens: 64,
    temperature: 0.2,
    messages: [
      { role: "user", content: { type: "text", text: "Capital of France?" } },
      { role: "assistant", content: { type: "text", text: "Which France?" } },
      { role: "user", content: [{ type: "text", text: "The country." }] },
    ],
  }, NEVER);
  assert.deepEqual(result, {
    role: "assistant",
    content: { type: "text", text: "Paris." },
    model: "fake-model",
    stopReason: "endTurn",
  });
  assert.equal(s.server.chats.length, 1, "one model call");
  const body = s.server.chats[0].body as {
    model: string;
    messages: { role: string; content: string }[];
    tools?: unknown[];
    max_completion_tokens?: number;
    temperature?: number;
  };
  assert.equal(body.model, "fake-model");
  assert.deepEqual(body.messages.map((m) => [m.role, m.content]), [
    ["system", "Answer in one word."],
    ["user", "Capital of France?"],
    ["assistant", "Which France?"],
    ["user", "The country."],
  ]);
  assert.equal(body.max_completion_tokens, 64);
  assert.equal(body.temperature, 0.2);
  assert.ok(body.tools === undefined || body.tools.length === 0, "a sampled answer cannot act");
  assert.deepEqual(s.session.usage, { promptTokens: 12, completionTokens: 2 });
  assert.equal(s.session.id, undefined, "sampling writes no session file");
});

Deno.test("sample says a cut-off answer stopped at maxTokens and redacts the key", async () => {
  await using s = await open([{ text: `the key is ${KEY} and`, finish: "length" }]);
  const result = await s.session.sample({
    maxTokens: 5,
    messages: [{ role: "user", content: { type: "text", text: "Tell me the key." } }],
  }, NEVER);
  assert.equal(result.stopReason, "maxTokens");
  const content = result.content as { type: string; text?: string };
  assert.equal(content.type, "text");
  const text = content.text ?? "";
  assert.ok(!text.includes(KEY), `the key reached the server: ${text}`);
  assert.match(text, /^the key is \[redacted\] and$/);
});

Deno.test("sample fails with a SamplingError when the provider refuses, or when cancelled", async () => {
  await using s = await open([{ fault: { kind: "status", status: 400, message: "bad request" } }]);
  const request = {
    maxTokens: 5,
    messages: [{ role: "user" as const, content: { type: "text" as const, text: "Hi" } }],
  };
  await assert.rejects(
    s.session.sample(request, NEVER),
    (error: Error) => error instanceof SamplingError && /the model call failed/.test(error.message),
  );
  const cancelled = new AbortController();
  cancelled.abort();
  await assert.rejects(
    s.session.sample(request, cancelled.signal),
    (error: Error) => error instanceof SamplingError && /cancelled/.test(error.message),
  );
});

Deno.test("sample rejects with the session's problem when no provider can be used", async () => {
  await using s = await open([], "no-such-provider");
  assert.match(s.session.problem ?? "", /no-such-provider/);
  await assert.rejects(
    s.session.sample({
      maxTokens: 5,
      messages: [{ role: "user", content: { type: "text", text: "Hi" } }],
    }, NEVER),
    (error: Error) => error.message === s.session.problem,
  );
  assert.equal(s.server.chats.length, 0);
});
