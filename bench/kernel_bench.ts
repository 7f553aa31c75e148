// Kernel overhead per step: 200 steps with one tool call each against the fake provider on
// loopback at zero latency, beside the AI SDK's generateText (and streamText) running the same
// 200 steps against the same server, and beside the floor: the same 200 HTTP round trips with
// nothing but reading the body. Overhead per step = (case - floor) / 200.
// Run: deno task bench bench/kernel_bench.ts   (or bench/separately.ts for one process per case)

import { createOpenAI } from "@ai-sdk/openai";
import { generateText, isStepCount, jsonSchema, streamText, tool } from "ai";
import type { Plugin } from "@amber/core";
import { runAgent } from "@amber/core/kernel";
import { ProviderClient } from "@amber/providers";
import { openaiDialect } from "@amber/providers/openai";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { makeRuntime, OPEN_BOUND } from "../tests/_helpers.ts";

const STEPS = 200;
const server = await FakeProvider.start({ encoders: [openaiEncoder] });
const baseUrl = `${server.url}/v1`;

function script(): void {
  const turns: ScriptedTurn[] = [];
  for (let i = 0; i < STEPS - 1; i++) {
    turns.push({
      toolCalls: [{ id: `call_${i}`, name: "echo", arguments: { text: `step ${i}` } }],
      usage: { promptTokens: 100 + i, completionTokens: 10 },
    });
  }
  turns.push({ text: "done", usage: { promptTokens: 400, completionTokens: 2 } });
  server.script(...turns);
}

const parameters = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
  additionalProperties: false,
} as const;

const echoPlugin: Plugin = {
  id: "echo",
  version: "1.0.0",
  name: "Echo",
  bound: OPEN_BOUND,
  initialize: () => true,
  shutdown: () => {},
  capabilities: () => [{
    kind: "tool",
    name: "echo",
    tools: [{
      name: "echo",
      description: "Echoes its text.",
      parameters,
      readOnly: true,
      execute: (args) => ({ ok: true, output: (args as { text: string }).text }),
    }],
  }],
};
const { runtime } = makeRuntime();
runtime.register(echoPlugin);
await runtime.start();
const client = new ProviderClient(openaiDialect(), { baseUrl, apiKey: "sk-bench" });

// The floor replays the very request bodies amber sends (they grow with the conversation), so
// what it measures is the HTTP round trips and the server's own work, and nothing else.
script();
await runAgent({
  runtime,
  model: client,
  modelName: "fake-small",
  prompt: "go",
  approval: "auto",
  maxSteps: STEPS + 1,
});
const recordedBodies = server.chats.map((request) => JSON.stringify(request.body));
server.requests.length = 0;

const openai = createOpenAI({ apiKey: "sk-bench", baseURL: baseUrl });
const aiTools = {
  echo: tool({
    description: "Echoes its text.",
    inputSchema: jsonSchema<{ text: string }>(parameters),
    execute: ({ text }) => Promise.resolve(text),
  }),
};

Deno.bench({
  name: "floor: the same 200 requests replayed, response bodies read, nothing else",
  group: "200 steps",
  baseline: true,
  async fn() {
    script();
    for (let i = 0; i < STEPS; i++) {
      const response = await fetch(`${baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
        body: recordedBodies[i],
      });
      await response.text();
    }
    server.requests.length = 0;
  },
});

Deno.bench({
  name: "amber: runAgent, 200 steps with one tool call each (streaming)",
  group: "200 steps",
  async fn() {
    script();
    const result = await runAgent({
      runtime,
      model: client,
      modelName: "fake-small",
      prompt: "go",
      approval: "auto",
      maxSteps: STEPS + 1,
    });
    if (result.steps !== STEPS || result.cause.kind !== "completed") {
      throw new Error(`amber ran ${result.steps} steps: ${result.cause.kind}`);
    }
    server.requests.length = 0;
  },
});

Deno.bench({
  name: "AI SDK: generateText, 200 steps with one tool call each",
  group: "200 steps",
  async fn() {
    script();
    const result = await generateText({
      model: openai.chat("fake-small"),
      tools: aiTools,
      prompt: "go",
      stopWhen: isStepCount(STEPS + 1),
    });
    if (result.steps.length !== STEPS) throw new Error(`AI SDK ran ${result.steps.length} steps`);
    server.requests.length = 0;
  },
});

Deno.bench({
  name: "AI SDK: streamText, 200 steps with one tool call each",
  group: "200 steps",
  async fn() {
    script();
    const result = streamText({
      model: openai.chat("fake-small"),
      tools: aiTools,
      prompt: "go",
      stopWhen: isStepCount(STEPS + 1),
    });
    await result.consumeStream();
    const steps = await result.steps;
    if (steps.length !== STEPS) throw new Error(`AI SDK streamed ${steps.length} steps`);
    server.requests.length = 0;
  },
});

addEventListener("unload", () => {
  server.close();
});
