// The Anthropic dialect and its prompt cache: where the breakpoints land, the cache reads and
// writes in usage, and requests too long for the model's window.

import assert from "node:assert/strict";
import type { ChatRequest, Message, StreamEvent, ToolDefinition } from "@amber/core";
import { anthropicBody, anthropicDialect } from "../../providers/anthropic.ts";
import { anthropicEncoder } from "../../providers/testing/anthropic.ts";
import { assertFinish, decodeWith, ends, errorOf, startHarness, text } from "./_e2e.ts";

const MARK = { type: "ephemeral" };

const TOOLS: ToolDefinition[] = ["read", "write", "bash"].map((name) => ({
  name,
  description: `The ${name} tool.`,
  parameters: { type: "object", properties: { path: { type: "string" } } },
}));

/** An agent loop's history: a prompt, then `steps` rounds of a tool call and its result. */
function loop(steps: number, system = true): Message[] {
  const messages: Message[] = system ? [{ role: "system", content: "You are amber." }] : [];
  messages.push({ role: "user", content: "Fix the tests." });
  for (let i = 0; i < steps; i++) {
    messages.push({
      role: "assistant",
      content: "",
      toolCalls: [
        { id: `toolu_${i}a`, name: "read", arguments: `{"path":"a${i}.ts"}` },
        { id: `toolu_${i}b`, name: "read", arguments: `{"path":"b${i}.ts"}` },
      ],
    });
    messages.push({ role: "tool", toolCallId: `toolu_${i}a`, name: "read", content: `a${i}` });
    messages.push({ role: "tool", toolCallId: `toolu_${i}b`, name: "read", content: `b${i}` });
  }
  return messages;
}

function request(messages: Message[], tools: ToolDefinition[] = TOOLS): ChatRequest {
  return { model: "claude-sonnet-4-5", messages, tools };
}

type Wire = {
  system?: { cache_control?: unknown }[];
  tools?: { name: string; cache_control?: unknown }[];
  messages: { role: string; content: { type: string; cache_control?: unknown }[] }[];
};

/** The body the dialect sends, parsed. */
function sent(req: ChatRequest): Wire {
  return JSON.parse(anthropicDialect().chatRequest({ baseUrl: "https://x" }, req).body!);
}

/** Where the breakpoints are: `tools[i]`, `system[i]`, `messages[i][j]`. */
function marks(wire: Wire): string[] {
  const found: string[] = [];
  wire.tools?.forEach((tool, i) => tool.cache_control && found.push(`tools[${i}]`));
  wire.system?.forEach((block, i) => block.cache_control && found.push(`system[${i}]`));
  wire.messages.forEach((turn, i) =>
    turn.content.forEach((block, j) => {
      if (block.cache_control === undefined) return;
      assert.deepEqual(block.cache_control, MARK);
      found.push(`messages[${i}][${j}]`);
    })
  );
  return found;
}

// ---------------------------------------------------------------------------------------------
// Breakpoints

Deno.test("anthropic cache: tools, system, and the last two user turns carry the breakpoints", () => {
  const wire = sent(request(loop(2)));
  // user, assistant, user (2 results), assistant, user (2 results)
  assert.deepEqual(wire.messages.map((turn) => turn.role), [
    "user",
    "assistant",
    "user",
    "assistant",
    "user",
  ]);
  assert.deepEqual(marks(wire), ["tools[2]", "system[0]", "messages[2][1]", "messages[4][1]"]);
  assert.equal(wire.messages[4].content[1].type, "tool_result");
});

Deno.test("anthropic cache: the next request marks where the last one wrote the cache", () => {
  const first = sent(request(loop(1)));
  const second = sent(request(loop(2)));
  // The last request's final breakpoint is the block this request reads from, exactly.
  assert.deepEqual(marks(first).at(-1), "messages[2][1]");
  assert.ok(marks(second).includes("messages[2][1]"));
  // Everything up to that block is the same in both requests (markers aside: where they sit
  // is no part of the cached prefix), so the second request reads what the first one wrote.
  const upTo = (wire: Wire) =>
    JSON.stringify([wire.tools, wire.system, wire.messages.slice(0, 3)])
      .replaceAll(',"cache_control":{"type":"ephemeral"}', "");
  assert.equal(upTo(first), upTo(second));
});

Deno.test("anthropic cache: requests without system or tools are marked all the same", () => {
  assert.deepEqual(marks(sent(request(loop(0, false), []))), ["messages[0][0]"]);
  assert.deepEqual(marks(sent(request(loop(1, false), []))), [
    "messages[0][0]",
    "messages[2][1]",
  ]);
  assert.deepEqual(marks(sent(request(loop(3, true), []))), [
    "system[0]",
    "messages[4][1]",
    "messages[6][1]",
  ]);
  assert.deepEqual(marks(sent(request(loop(3, false)))), [
    "tools[2]",
    "messages[4][1]",
    "messages[6][1]",
  ]);
  assert.deepEqual(marks(sent(request([], []))), []);
});

Deno.test("anthropic cache: only user turns are marked, never a thinking block", () => {
  const messages: Message[] = [
    { role: "user", content: "Plan it." },
    { role: "assistant", content: "", reasoning: "Thinking hard.", reasoningSignature: "c2ln" },
  ];
  // A trailing assistant turn (a prefill): its only block is thinking, which takes no marker.
  const wire = sent(request(messages, []));
  assert.deepEqual(marks(wire), ["messages[0][0]"]);
  assert.equal(wire.messages[1].content[0].type, "thinking");
});

Deno.test("anthropic cache: never more than four breakpoints, whatever the conversation", () => {
  for (let steps = 0; steps < 12; steps++) {
    for (const system of [true, false]) {
      for (const tools of [TOOLS, []]) {
        const messages = loop(steps, system);
        // Interleave user remarks and mid-conversation system notes.
        if (steps % 3 === 1) messages.splice(3, 0, { role: "user", content: "Also lint." });
        if (steps % 4 === 2) messages.push({ role: "system", content: "Hurry." });
        const req = request(messages, tools);
        const count = marks(sent(req)).length;
        assert.ok(count <= 4, `${count} breakpoints at ${steps} steps`);
        assert.equal(marks(anthropicBody(req) as unknown as Wire).length, count);
      }
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Usage

function fixture(name: string): string {
  return Deno.readTextFileSync(new URL(`./fixtures/anthropic/${name}`, import.meta.url));
}

function decode(chunks: readonly string[]): StreamEvent[] {
  return decodeWith(anthropicDialect(), chunks);
}

Deno.test("anthropic cache: cache reads and writes are reported in usage", () => {
  const events = decode([fixture("cached_tool_use.sse")]);
  assert.equal(text(events, "reasoning"), "The test file is next; read it.");
  assert.equal(text(events), "Reading the tests.");
  assert.deepEqual(ends(events).map((call) => call.arguments), ['{"path": "tests/app_test.ts"}']);
  const usage = events.filter((event) => event.type === "usage");
  assert.deepEqual(usage, [{
    type: "usage",
    // input_tokens + cache_read_input_tokens + cache_creation_input_tokens
    promptTokens: 4 + 20480 + 1536,
    completionTokens: 87,
    cachedTokens: 20480,
    cacheWriteTokens: 1536,
  }]);
  assertFinish(events, "tool_calls");
});

Deno.test("anthropic cache: message_delta's cumulative counts replace message_start's", () => {
  const ev = (data: { type: string; [key: string]: unknown }) =>
    `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  const events = decode([
    ev({
      type: "message_start",
      message: {
        usage: {
          input_tokens: 9,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
        },
      },
    }),
    ev({
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: {
        input_tokens: 9,
        cache_creation_input_tokens: 300,
        cache_read_input_tokens: 4000,
        output_tokens: 12,
      },
    }),
    ev({ type: "message_stop" }),
  ]);
  assert.deepEqual(events.filter((event) => event.type === "usage"), [
    {
      type: "usage",
      promptTokens: 4309,
      completionTokens: 12,
      cachedTokens: 4000,
      cacheWriteTokens: 300,
    },
  ]);
});

// ---------------------------------------------------------------------------------------------
// Context overflow

Deno.test("anthropic cache: a full window mid-answer finishes with length, the reason kept", () => {
  const events = decode([fixture("window_exceeded.sse")]);
  assert.equal(events.some((event) => event.type === "error"), false);
  assert.deepEqual(events.at(-1), {
    type: "finish",
    reason: "length",
    raw: "model_context_window_exceeded",
  });
  assert.deepEqual(events.at(-2), {
    type: "usage",
    promptTokens: 190010,
    completionTokens: 9990,
    cachedTokens: 190000,
    cacheWriteTokens: 0,
  });
});

Deno.test("anthropic cache: an overflow error in the stream carries contextOverflow", () => {
  const ev = (error: Record<string, unknown>) =>
    `event: error\ndata: ${JSON.stringify({ type: "error", error })}\n\n`;
  const overflow = decode([
    ev({
      type: "invalid_request_error",
      message: "prompt is too long: 204131 tokens > 200000 maximum",
    }),
  ]);
  assert.equal(errorOf(overflow).contextOverflow, true);
  assert.equal(errorOf(overflow).retryable, false);
  assertFinish(overflow, "error");
  const other = decode([ev({ type: "invalid_request_error", message: "roles must alternate" })]);
  assert.equal("contextOverflow" in errorOf(other), false);
  const overloaded = decode([ev({ type: "overloaded_error", message: "Overloaded" })]);
  assert.equal("contextOverflow" in errorOf(overloaded), false);
});

Deno.test("anthropic cache: a 400 'prompt is too long' reaches the kernel as an overflow", async () => {
  await using h = await startHarness({
    dialect: anthropicDialect,
    encoder: anthropicEncoder,
    request: () => request(loop(1)),
  }, { apiKey: "sk-ant-fake" });
  h.server.script(
    {
      fault: {
        kind: "status",
        status: 400,
        message: "prompt is too long: 201544 tokens > 200000 maximum",
      },
    },
    {
      fault: {
        kind: "status",
        status: 400,
        message: "input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000, " +
          "decrease input length or `max_tokens` and try again",
      },
    },
    { fault: { kind: "status", status: 400, message: "messages: roles must alternate" } },
  );
  for (const expected of [true, true, undefined]) {
    const { events, attempts } = await h.run();
    assert.equal(attempts, 1);
    assert.equal(errorOf(events).contextOverflow, expected);
    assertFinish(events, "error");
  }
});
