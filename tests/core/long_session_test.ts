// A long session in a small context window, end to end over loopback (the fake provider speaking
// the OpenAI protocol, the real client and dialect): 40 files read one per step, each noting a
// fact, in a 4,000-token window. The conversation is compacted several times (old output stubbed
// first, then summarized), every request the server receives fits the window, the final answer
// still names the facts of the first steps (carried by the summaries) and the todo list survives;
// then the session is resumed from its file after a compaction and runs another turn.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { ChatRequest, Message, Tool } from "@amber/core";
import {
  type ModelPort,
  runAgent,
  type RunEvent,
  type RunOptions,
  SessionFile,
} from "@amber/core/kernel";
import { ProviderClient } from "@amber/providers";
import { openaiDialect } from "@amber/providers/openai";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { makePlugin, makeRuntime, tempDir } from "../_helpers.ts";
import { isSummaryRequest } from "./_compaction_script.ts";

const WINDOW = 4_000;
const FILES = 40;
const value = (i: number) => i * 7 + 3;
const path = (i: number) => `src/module_${i}.ts`;

// The same rule as the kernel's request estimate, written out again here so the
// test does not take the kernel's word for it: 16 characters a message and a call on top of
// their text, the tools' JSON, 3.5 characters a token when the provider reports no usage.
function estimate(request: ChatRequest): number {
  let chars = request.tools.length === 0 ? 0 : JSON.stringify(request.tools).length;
  for (const m of request.messages) {
    chars += 16 + m.content.length;
    if (m.role === "assistant") {
      chars += (m.reasoning?.length ?? 0) + (m.reasoningSignature?.length ?? 0);
      for (const c of m.toolCalls ?? []) {
        chars += 16 + c.name.length + c.arguments.length + c.id.length;
      }
    }
    if (m.role === "tool") chars += m.name.length + m.toolCallId.length;
  }
  return Math.ceil(chars / 3.5);
}

const readTool: Tool = {
  name: "read",
  description: "Reads a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  execute: (args) => {
    const i = Number(/module_(\d+)/.exec((args as { path: string }).path)?.[1]);
    const filler = `// ${"lorem ipsum dolor sit amet ".repeat(40)}\n`;
    return {
      ok: true,
      output: `${filler}export const FACT_${i} = ${value(i)}; // FACT-${i} = ${
        value(i)
      }\n${filler}`,
    };
  },
};
const todoTool: Tool = {
  name: "todowrite",
  description: "Writes the todo list.",
  parameters: { type: "object" },
  execute: () => ({ ok: true, output: "todo list updated" }),
};

function factsIn(text: string): Map<number, number> {
  const facts = new Map<number, number>();
  for (const [, i, v] of text.matchAll(/FACT-(\d+) = (\d+)/g)) facts.set(Number(i), Number(v));
  return facts;
}

const listFacts = (facts: Map<number, number>) =>
  [...facts].sort(([a], [b]) => a - b).map(([i, v]) => `FACT-${i} = ${v}`).join(", ");

// The model's side, decided per request: a summary request is answered with the facts it was
// shown; a task request with the task's next step, and the last one with every fact the
// request carries, so the answer says what the context kept.
function turnFor(request: ChatRequest, step: number): ScriptedTurn {
  const seen = JSON.stringify(request.messages);
  if (isSummaryRequest(request)) {
    return {
      text: `Progress: reading the modules one by one. Facts so far: ${listFacts(factsIn(seen))}.`,
      chunkSize: 500,
    };
  }
  if (step === 0) {
    return {
      toolCalls: [{
        name: "todowrite",
        arguments: {
          todos: [
            { content: "Read the 40 modules", status: "in_progress" },
            { content: "Report every fact", status: "pending" },
          ],
        },
      }],
    };
  }
  const file = step - 1;
  if (file < FILES) {
    const note = file === 0 ? "Starting." : `Noted FACT-${file - 1} = ${value(file - 1)}.`;
    return {
      text: note,
      toolCalls: [{ name: "read", arguments: { path: path(file) } }],
      chunkSize: 200,
    };
  }
  return { text: `All facts: ${listFacts(factsIn(seen))}.`, chunkSize: 500 };
}

async function session(server: FakeProvider) {
  const { runtime } = makeRuntime();
  runtime.register(
    makePlugin("tools", [{ kind: "tool", name: "tools", tools: [readTool, todoTool] }]),
  );
  await runtime.start();
  const client = new ProviderClient(openaiDialect(), { baseUrl: `${server.url}/v1`, apiKey: "k" });
  const sent: ChatRequest[] = [];
  let step = 0;
  const model: ModelPort = {
    stream(request, sink, signal) {
      sent.push(structuredClone(request));
      server.script(turnFor(request, isSummaryRequest(request) ? -1 : step++));
      return client.stream(request, sink, signal);
    },
  };
  const events: RunEvent[] = [];
  const options = (rest: Partial<RunOptions>): RunOptions => ({
    runtime,
    model,
    modelName: "fake-small",
    prompt: "Read every module and report its fact.",
    approval: "auto",
    contextWindow: WINDOW,
    maxSteps: 60,
    onEvent: (e) => events.push(e),
    ...rest,
  });
  return { runtime, sent, events, options, restart: () => (step = FILES + 1) };
}

Deno.test("a long session in a small window compacts several times, finishes, and resumes", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const { runtime, sent, events, options, restart } = await session(server);
  const file = await SessionFile.create(tmp.dir, { id: "long", workspace: "/w" });
  const result = await runAgent(options({ session: file }));
  file.close();

  deepStrictEqual(result.cause, { kind: "completed", detail: "stop" });
  strictEqual(result.steps, FILES + 2);
  ok(result.compactions >= 3, `${result.compactions} compactions`);
  const finished = events.filter((e) => e.type === "compactionFinished");
  strictEqual(finished.length, result.compactions);
  ok(
    finished.every((e) =>
      e.type === "compactionFinished" && e.success && e.tokensAfter < e.tokensBefore
    ),
  );
  const summaries = sent.filter(isSummaryRequest).length;
  ok(summaries >= 1, "some compactions needed a summary");
  ok(summaries < result.compactions, "some compactions only stubbed old output");

  // Every request the server received was one of these, and each fit the window.
  strictEqual(server.chats.length, sent.length);
  const sizes = sent.map(estimate);
  ok(Math.max(...sizes) <= WINDOW, `largest request ${Math.max(...sizes)} tokens`);
  const reported = events.flatMap((e) => e.type === "request" ? [e.tokens] : []);
  ok(Math.max(...reported) <= WINDOW * 0.85, `largest reported ${Math.max(...reported)} tokens`);
  strictEqual(reported.length, sent.length - summaries);

  // The final answer names every fact, the first ones carried only by the summaries.
  const answer = result.messages.at(-1)!;
  for (let i = 0; i < FILES; i++) match(answer.content, new RegExp(`FACT-${i} = ${value(i)}\\b`));
  const last = JSON.stringify(sent.at(-1)!.messages);
  ok(!last.includes(`FACT_0 = ${value(0)}`), "the first file's output itself is long gone");
  for (let i = 0; i < FILES; i++) ok(last.includes(path(i)), `${path(i)} is still named`);
  match(last, /\[~\] Read the 40 modules/);

  // Resumed from the file: the compacted context, then another turn.
  const { file: resumed, session: loaded } = await SessionFile.resume(tmp.dir, "long");
  strictEqual(loaded.compactions.length, result.compactions);
  deepStrictEqual(loaded.messages, result.messages);
  strictEqual(
    loaded.steps.reduce((n, s) => n + s.messages.length, 0) > loaded.messages.length,
    true,
  );
  restart();
  const before = sent.length;
  const eventsBefore = events.length;
  const prompt = "Which facts do you know?";
  const again = await runAgent(options({
    session: resumed,
    history: loaded.messages,
    firstStep: loaded.steps.at(-1)!.step + 1,
    prompt,
  }));
  resumed.close();
  await runtime.stop();
  strictEqual(again.cause.kind, "completed");
  // The resumed run starts from the compacted context (the whole history would fill several
  // windows): its first estimate is that of the file's conversation and the new prompt.
  const resumedContext: Message[] = [...loaded.messages, { role: "user", content: prompt }];
  const start = estimate({ ...sent[0], messages: resumedContext });
  ok(start < WINDOW, `${start} tokens to resume from`);
  const firstSeen = events.slice(eventsBefore).find((e) =>
    e.type === "compactionStarted" || e.type === "request"
  );
  ok(firstSeen?.type === "compactionStarted" || firstSeen?.type === "request");
  strictEqual(firstSeen.tokens, start);
  if (again.compactions === 0) {
    deepStrictEqual(sent[before].messages, resumedContext);
  }
  for (let i = 0; i < FILES; i++) {
    match(again.messages.at(-1)!.content, new RegExp(`FACT-${i} = ${value(i)}\\b`));
  }
  ok(estimate(sent[before]) <= WINDOW);
});
