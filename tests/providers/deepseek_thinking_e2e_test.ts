// DeepSeek's thinking mode end to end: the kernel runs a tool loop against the fake provider
// speaking Chat Completions (which streams reasoning as `reasoning_content`, as DeepSeek does),
// and the request after the tool call carries that reasoning back on the assistant message.
// This needs the kernel to keep the field the reasoning came in (`Message.reasoningField`, from
// the reasoning events' `field`).

import assert from "node:assert/strict";
import { runAgent } from "@amber/core/kernel";
import { ProviderClient } from "@amber/providers";
import { openaiDialect } from "@amber/providers/openai";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { makePlugin, makeRuntime } from "../_helpers.ts";

Deno.test("deepseek e2e: the tool-call step's reasoning_content goes back on the next request", async () => {
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(
    {
      reasoning: "The user wants an echo; call the tool.",
      toolCalls: [{ id: "call_00_e2e", name: "echo", arguments: { text: "hi" } }],
    },
    { reasoning: "Done; say so.", text: "Echoed." },
  );
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("tools", [{
    kind: "tool",
    name: "echo",
    tools: [{
      name: "echo",
      description: "Echoes its text.",
      parameters: { type: "object", properties: { text: { type: "string" } } },
      execute: (args) => ({ ok: true, output: String((args as { text: string }).text) }),
    }],
  }]));
  await runtime.start();
  const model = new ProviderClient(openaiDialect(), { baseUrl: `${server.url}/v1`, apiKey: "k" });
  const result = await runAgent({
    runtime,
    model,
    modelName: "deepseek-reasoner",
    prompt: "Echo hi",
    approval: "auto",
  });
  assert.equal(result.steps, 2);
  const second = server.chats[1].body as { messages: Record<string, unknown>[] };
  const assistant = second.messages.find((message) => message.role === "assistant");
  assert.deepEqual(assistant, {
    role: "assistant",
    content: null,
    reasoning_content: "The user wants an echo; call the tool.",
    tool_calls: [{
      id: "call_00_e2e",
      type: "function",
      function: { name: "echo", arguments: '{"text":"hi"}' },
    }],
  });
  await runtime.stop();
});
