// DeepSeek's thinking mode with tools (issue 14, faithful round trips): the reasoning of a turn
// that called tools goes back as `reasoning_content` in every later request (the API answers
// 400 without it), the reasoning of a turn without tool calls is left out (the API ignores it),
// and only a server that sent reasoning, in the field it used, ever gets it back.
//
// fixtures/deepseek/thinking_tool_call.sse is written from DeepSeek's documented stream format:
// a role chunk with an empty `reasoning_content`, reasoning deltas with `content: null`, one
// tool call streamed in fragments, and a last chunk with the finish reason and the usage
// (`prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`, reasoning tokens), then [DONE].

import assert from "node:assert/strict";
import type { Message, StreamEvent, ToolCall } from "@amber/core";
import { openaiDialect } from "../../providers/openai.ts";
import { decodeWith, text } from "./_e2e.ts";

const STREAM = await Deno.readTextFile(
  new URL("./fixtures/deepseek/thinking_tool_call.sse", import.meta.url),
);

type Assistant = Extract<Message, { role: "assistant" }>;

/** The assistant message a response makes, as the kernel records it. */
function assistantFrom(events: readonly StreamEvent[]): Assistant {
  let content = "";
  let reasoning = "";
  let field: string | undefined = undefined;
  const calls: ToolCall[] = [];
  for (const event of events) {
    if (event.type === "text") content += event.delta;
    else if (event.type === "reasoning") {
      reasoning += event.delta;
      field = event.field ?? field;
    } else if (event.type === "toolCallEnd") {
      calls.push({ id: event.id, name: event.name, arguments: event.arguments });
    }
  }
  return {
    role: "assistant",
    content,
    ...(reasoning === "" ? {} : { reasoning }),
    ...(field === undefined ? {} : { reasoningField: field }),
    ...(calls.length === 0 ? {} : { toolCalls: calls }),
  };
}

/** The wire messages of the request a fresh OpenAI-compatible dialect builds. */
function wireMessages(messages: readonly Message[]): Record<string, unknown>[] {
  const spec = openaiDialect().chatRequest(
    { baseUrl: "https://api.deepseek.com" },
    { model: "deepseek-reasoner", messages, tools: [] },
  );
  return JSON.parse(spec.body!).messages;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  const body = { id: "gen-1", object: "chat.completion.chunk", created: 1, model: "m" };
  return `data: ${
    JSON.stringify({ ...body, choices: [{ index: 0, delta, finish_reason: finish }] })
  }\n\n`;
}

Deno.test("deepseek: a thinking tool-call stream decodes reasoning with its field, the call, usage", () => {
  const events = decodeWith(openaiDialect(), [STREAM]);
  const reasoning = events.filter((event) => event.type === "reasoning");
  assert.equal(reasoning.length, 4);
  assert.ok(reasoning.every((event) => event.field === "reasoning_content"));
  assert.equal(
    text(events, "reasoning"),
    "The user wants the version from deno.json; I should read that file first.",
  );
  assert.deepEqual(events.slice(-3), [
    {
      type: "toolCallEnd",
      index: 0,
      id: "call_00_Vq3kX9mB2cT7aR1sLp4dN8eF",
      name: "read",
      arguments: '{"path":"deno.json"}',
    },
    {
      type: "usage",
      promptTokens: 1310,
      completionTokens: 58,
      cachedTokens: 1152,
      reasoningTokens: 31,
    },
    { type: "finish", reason: "tool_calls", raw: "tool_calls" },
  ]);
});

Deno.test("deepseek: the next request sends the tool-call turn's reasoning_content back", () => {
  const said = assistantFrom(decodeWith(openaiDialect(), [STREAM]));
  const wire = wireMessages([
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Which version is this?" },
    said,
    { role: "tool", toolCallId: "call_00_Vq3kX9mB2cT7aR1sLp4dN8eF", name: "read", content: "{}" },
  ]);
  assert.deepEqual(wire[2], {
    role: "assistant",
    content: null,
    reasoning_content: "The user wants the version from deno.json; I should read that file first.",
    tool_calls: [{
      id: "call_00_Vq3kX9mB2cT7aR1sLp4dN8eF",
      type: "function",
      function: { name: "read", arguments: '{"path":"deno.json"}' },
    }],
  });
});

Deno.test("deepseek: earlier turns keep their reasoning only when they called tools", () => {
  const thought = (reasoning: string, toolCalls?: ToolCall[]): Assistant => ({
    role: "assistant",
    content: toolCalls === undefined ? `answer after ${reasoning}` : "",
    reasoning,
    reasoningField: "reasoning_content",
    ...(toolCalls === undefined ? {} : { toolCalls }),
  });
  const call = (id: string): ToolCall[] => [{ id, name: "read", arguments: "{}" }];
  const wire = wireMessages([
    { role: "user", content: "One" },
    thought("R1"), // a turn without tool calls: left out
    { role: "user", content: "Two" },
    thought("R2", call("a")), // a turn with tool calls: kept, its last answer too
    { role: "tool", toolCallId: "a", name: "read", content: "x" },
    thought("R3"),
    { role: "user", content: "Three" },
    thought("R4", call("b")), // the turn under way: kept
    { role: "tool", toolCallId: "b", name: "read", content: "y" },
    thought("R5"),
  ]);
  const sent = wire.filter((m) => m.role === "assistant").map((m) => m.reasoning_content ?? null);
  assert.deepEqual(sent, [null, "R2", "R3", "R4", "R5"]);
});

Deno.test("deepseek: reasoning that records no field, or an unknown one, is never sent", () => {
  const wire = wireMessages([
    { role: "user", content: "Hi" },
    {
      role: "assistant",
      content: "",
      reasoning: "from another provider",
      toolCalls: [{ id: "a", name: "read", arguments: "{}" }],
    },
    { role: "tool", toolCallId: "a", name: "read", content: "x" },
    {
      role: "assistant",
      content: "",
      reasoning: "signed elsewhere",
      reasoningField: "thinking",
      toolCalls: [{ id: "b", name: "read", arguments: "{}" }],
    },
    { role: "tool", toolCallId: "b", name: "read", content: "y" },
  ]);
  for (const message of wire) {
    assert.deepEqual(
      Object.keys(message).filter((key) => key.includes("reasoning") || key === "thinking"),
      [],
    );
  }
});

Deno.test("openai: a server that streams `reasoning` gets it back in `reasoning`", () => {
  const events = decodeWith(openaiDialect(), [
    chunk({ role: "assistant", content: "" }),
    chunk({ reasoning: "Need the file." }),
    chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "read", arguments: "{}" } }] }),
    chunk({}, "tool_calls"),
    "data: [DONE]\n\n",
  ]);
  const said = assistantFrom(events);
  assert.equal(said.reasoningField, "reasoning");
  const wire = wireMessages([
    { role: "user", content: "Read it" },
    said,
    { role: "tool", toolCallId: "c1", name: "read", content: "x" },
  ]);
  assert.equal(wire[1].reasoning, "Need the file.");
  assert.equal("reasoning_content" in wire[1], false);
});
