// Compaction inside a run: before a request that would pass the share of the window, after the
// provider's context-overflow error (compacted and retried once), never without a window but
// for an overflow; the record in the session file, a resume from it, and the cost of a run.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { Capability, HookCapability, Message } from "@amber/core";
import {
  compactConversation,
  listSessions,
  runAgent,
  type RunEvent,
  type RunOptions,
  SessionFile,
} from "@amber/core/kernel";
import { countingTool, startRuntime } from "./_kernel_script.ts";
import {
  type Answer,
  calling,
  longHistory,
  overflow,
  text,
  TwoQueueModel,
} from "./_compaction_script.ts";
import { tempDir } from "../_helpers.ts";

async function run(
  turns: readonly Answer[],
  options: Partial<RunOptions> = {},
  plugins: Record<string, readonly Capability[]> = {},
) {
  const { runtime, diagnostics } = await startRuntime({
    tools: [{ kind: "tool", name: "tools", tools: [countingTool("read", [])] }],
    ...plugins,
  });
  const model = new TwoQueueModel(turns);
  const events: RunEvent[] = [];
  const result = await runAgent({
    runtime,
    model,
    modelName: "m",
    prompt: "What do the files hold?",
    approval: "auto",
    history: longHistory(6),
    onEvent: (e) => events.push(e),
    ...options,
  });
  await runtime.stop();
  return { result, events, model, diagnostics };
}

const ofType = <T extends RunEvent["type"]>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

const allText = (messages: readonly Message[]) => messages.map((m) => m.content).join("\n");

Deno.test("a request that would pass the threshold is compacted before it is sent", async () => {
  const { result, events, model } = await run([text("They hold facts.")], { contextWindow: 4_000 });
  strictEqual(result.cause.kind, "completed");
  strictEqual(result.compactions, 1);
  const types = events.map((e) => e.type).filter((t) => t !== "text" && t !== "finish");
  deepStrictEqual(types, [
    "stepStart",
    "compactionStarted",
    "compactionFinished",
    "request",
    "stepEnd",
    "end",
  ]);
  const [started] = ofType(events, "compactionStarted");
  deepStrictEqual([started.reason, started.budget, started.threshold], ["auto", 4_000, 3_400]);
  ok(started.tokens > 3_400);
  const [request] = ofType(events, "request");
  ok(request.tokens <= 2_000, `${request.tokens} tokens sent`);
  strictEqual(request.contextWindow, 4_000);
  // What the model got is what the run holds: the compacted conversation, then the answer.
  deepStrictEqual(model.requests[0].messages, result.messages.slice(0, -1));
  match(allText(result.messages), /\[tool output removed by compaction: read src\/file_0\.ts/);
  deepStrictEqual(result.messages.at(-2), { role: "user", content: "What do the files hold?" });
});

Deno.test("without a window nothing is compacted before a request", async () => {
  const { result, events } = await run([text("ok")]);
  strictEqual(result.compactions, 0);
  const [request] = ofType(events, "request");
  strictEqual(request.contextWindow, undefined);
  ok(request.tokens > 6_000);
  strictEqual(ofType(events, "compactionStarted").length, 0);
});

Deno.test("autoCompact false leaves a request over the threshold as it is", async () => {
  const { result, events } = await run([text("ok")], { contextWindow: 4_000, autoCompact: false });
  strictEqual(result.compactions, 0);
  ok(ofType(events, "request")[0].tokens > 3_400);
});

const vetoAll: HookCapability = {
  kind: "hook",
  name: "never",
  point: "BeforeCompaction",
  run: () => ({ compaction: { veto: "never" } }),
};

Deno.test("an overflow compacts and retries once; hooks and interceptors cannot veto it", async () => {
  const { runtime } = await startRuntime({ h: [vetoAll] });
  runtime.events.intercept("compression", () => false);
  const model = new TwoQueueModel([overflow, text("done")]);
  const events: RunEvent[] = [];
  const result = await runAgent({
    runtime,
    model,
    modelName: "m",
    prompt: "go",
    approval: "auto",
    history: longHistory(6),
    onEvent: (e) => events.push(e),
  });
  await runtime.stop();
  deepStrictEqual(result.cause, { kind: "completed", detail: "stop" });
  strictEqual(result.compactions, 1);
  strictEqual(model.requests.length, 2);
  ok(JSON.stringify(model.requests[1]).length < JSON.stringify(model.requests[0]).length / 2);
  strictEqual(ofType(events, "error").length, 0, "the mended overflow is not shown");
  strictEqual(ofType(events, "request").length, 2);
  strictEqual(ofType(events, "compactionStarted")[0].reason, "overflow");
  strictEqual(result.steps, 1);
});

Deno.test("a cancel during a compaction ends the turn at once, the conversation unchanged", async () => {
  // A compactor that ignores the signal: without the cancel it would hold the turn 2 s.
  let release = () => {};
  const hung = new Promise<never>((_, reject) => release = () => reject(new Error("late")));
  const stuck = { kind: "compactor" as const, name: "stuck", compact: () => hung };
  const { runtime } = await startRuntime({ p: [stuck] }, {
    plugins: {},
    timeouts: { compactor: 2_000 },
  });
  const controller = new AbortController();
  const events: RunEvent[] = [];
  const history = longHistory(6);
  const started = Date.now();
  const result = await runAgent({
    runtime,
    model: new TwoQueueModel([text("never asked")]),
    modelName: "m",
    prompt: "go",
    approval: "auto",
    history,
    contextWindow: 4_000,
    signal: controller.signal,
    onEvent: (e) => {
      events.push(e);
      if (e.type === "compactionStarted") setTimeout(() => controller.abort(), 10);
    },
  });
  const elapsed = Date.now() - started;
  release();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await runtime.stop();
  ok(elapsed < 1_000, `the cancelled turn took ${elapsed} ms`);
  strictEqual(result.cause.kind, "cancelled");
  strictEqual(result.compactions, 0);
  deepStrictEqual(result.messages.slice(0, history.length), history);
  const [finished] = ofType(events, "compactionFinished");
  deepStrictEqual([finished.success, finished.message], [false, "the turn was cancelled"]);
});

Deno.test("a second overflow ends the turn with the provider's error", async () => {
  const { result, events, model } = await run([overflow, overflow]);
  deepStrictEqual(result.cause, {
    kind: "error",
    failure: {
      kind: "provider",
      message: "400: prompt is too long",
      status: 400,
      retryable: false,
    },
  });
  strictEqual(result.compactions, 1);
  strictEqual(model.requests.length, 2);
  strictEqual(ofType(events, "error").length, 1);
});

Deno.test("a vetoed automatic compaction is not asked again at every step", async () => {
  const turns = [
    calling("read", { path: "a" }, "c1"),
    calling("read", { path: "b" }, "c2"),
    calling("read", { path: "c" }, "c3"),
    text("done"),
  ];
  const { result, events } = await run(turns, { contextWindow: 4_000 }, { h: [vetoAll] });
  strictEqual(result.cause.kind, "completed");
  strictEqual(result.compactions, 0);
  const finished = ofType(events, "compactionFinished");
  strictEqual(finished.length, 1);
  match(finished[0].message ?? "", /vetoed it: never/);
});

Deno.test("the session records the compaction; a resume continues from it, past a torn line", async () => {
  await using tmp = await tempDir();
  const history = longHistory(6);
  const file = await SessionFile.create(tmp.dir, { id: "s", workspace: "/w" });
  await file.append({ step: 0, messages: history });
  const first = await run([text("They hold facts.")], {
    contextWindow: 4_000,
    session: file,
    firstStep: 1,
    history,
  });
  file.close();
  await Deno.writeTextFile(SessionFile.pathOf(tmp.dir, "s"), '{"type":"step","step":2,"at', {
    append: true,
  });
  const { file: resumed, session, tornTo } = await SessionFile.resume(tmp.dir, "s");
  ok(tornTo !== undefined);
  strictEqual(session.compactions.length, 1);
  deepStrictEqual(session.messages, first.result.messages);
  // The full history stays: step 0's messages, then step 1's prompt and answer.
  deepStrictEqual(session.steps.map((s) => [s.step, s.messages.length]), [[0, 25], [1, 2]]);
  const second = await run([text("Still facts.")], {
    contextWindow: 4_000,
    session: resumed,
    firstStep: 2,
    history: session.messages,
    prompt: "And now?",
  });
  resumed.close();
  strictEqual(second.result.compactions, 0);
  const sent = allText(second.model.requests[0].messages);
  match(sent, /\[tool output removed by compaction: read src\/file_0\.ts/);
  ok(!sent.includes("// file 0\nxxxx"), "the compacted output is not sent again");
  const again = await SessionFile.load(tmp.dir, "s");
  deepStrictEqual(again.messages, second.result.messages);
});

Deno.test("costs: per step, per run, in the session, and unknown when a price is", async () => {
  await using tmp = await tempDir();
  const file = await SessionFile.create(tmp.dir, { id: "c", workspace: "/w" });
  const usage = {
    type: "usage",
    promptTokens: 1_000,
    completionTokens: 10,
    cachedTokens: 800,
  } as const;
  const { result, events } = await run(
    [[...calling("read", { path: "a" }, "c1"), usage], [...text("done"), usage]],
    { session: file, history: [], price: (u) => u.promptTokens / 1_000_000 },
  );
  file.close();
  deepStrictEqual(ofType(events, "stepEnd").map((e) => e.cost), [0.001, 0.001]);
  strictEqual(result.cost, 0.002);
  deepStrictEqual(result.usage, { promptTokens: 2_000, completionTokens: 20, cachedTokens: 1_600 });
  const loaded = await SessionFile.load(tmp.dir, "c");
  deepStrictEqual(loaded.steps.map((s) => s.cost), [0.001, 0.001]);
  deepStrictEqual(loaded.steps[0].usage, {
    promptTokens: 1_000,
    completionTokens: 10,
    cachedTokens: 800,
  });
  const [summary] = await listSessions(tmp.dir);
  deepStrictEqual([summary.cost, summary.compactions], [0.002, 0]);

  const unknown = await run([[...text("done"), usage]], { history: [], price: () => undefined });
  strictEqual(unknown.result.cost, undefined);
  strictEqual(ofType(unknown.events, "stepEnd")[0].cost, undefined);
});

Deno.test("a reply keeps what the provider attached: call and text signatures, the reasoning's field", async () => {
  const { result } = await run([
    [
      { type: "reasoning", delta: "Think", field: "reasoning_content" },
      { type: "reasoning", delta: "ing." },
      {
        type: "toolCallEnd",
        index: 0,
        id: "g1",
        name: "read",
        arguments: "{}",
        signature: "sig-A",
      },
    ],
    [...text("done"), { type: "textSignature", signature: "sig-T" }],
  ], { history: [] });
  const [call, answer] = result.messages.filter((m) => m.role === "assistant");
  deepStrictEqual(call, {
    role: "assistant",
    content: "",
    reasoning: "Thinking.",
    reasoningField: "reasoning_content",
    toolCalls: [{ id: "g1", name: "read", arguments: "{}", signature: "sig-A" }],
  });
  deepStrictEqual(answer, { role: "assistant", content: "done", textSignature: "sig-T" });
});

Deno.test("the estimate learns the provider's characters per token from the usage it reports", async () => {
  // A count of 0 (a local server that reports nothing useful) teaches nothing.
  const nothing = { type: "usage", promptTokens: 0, completionTokens: 1 } as const;
  const { events } = await run([
    [...calling("read", {}, "c1"), nothing],
    text("done"),
  ], { history: [] });
  const [a, b] = ofType(events, "request").map((e) => e.tokens);
  ok(a < b, "the estimate grows with the conversation");
  // A provider that counts twice the tokens the default ratio assumes.
  const calibrated = await run([
    [...calling("read", {}, "c1"), { type: "usage", promptTokens: a * 2, completionTokens: 1 }],
    text("done"),
  ], { history: [] });
  const [x, y] = ofType(calibrated.events, "request").map((e) => e.tokens);
  strictEqual(x, a);
  ok(y >= b * 1.9 && y <= b * 2.1, `${y} tokens after calibration, ${b} before`);
});

Deno.test("the request event names the first prompt block that changed", async () => {
  let turn = 0;
  const blocks: Capability[] = [
    { kind: "prompt", name: "rules", priority: 100, render: () => "Be terse." },
    { kind: "prompt", name: "clock", priority: 900, render: () => (turn < 2 ? "early" : "late") },
  ];
  const { events } = await run(
    [
      () => (turn++, calling("read", {}, "c1")),
      () => (turn++, calling("read", {}, "c2")),
      () => (turn++, text("done")),
    ],
    { history: [] },
    { blocks },
  );
  deepStrictEqual(ofType(events, "request").map((e) => e.firstChanged), [
    "rules",
    undefined,
    "clock",
  ]);
});

Deno.test("a compactor's summary may ask another model, without tools", async () => {
  const { runtime } = await startRuntime({
    p: [{
      kind: "compactor",
      name: "own_model",
      compact: async (input) => {
        const summary = await input.summarize({
          system: "Summarize briefly.",
          messages: [{ role: "user", content: "the conversation" }],
          model: "small-model",
        });
        return {
          strategy: "own_model",
          messages: [{ role: "user", content: summary }, ...input.messages.slice(-4)],
        };
      },
    }],
  });
  const model = new TwoQueueModel([text("in brief")]);
  const outcome = await compactConversation({
    runtime,
    model,
    modelName: "m",
    history: longHistory(3),
  });
  await runtime.stop();
  strictEqual(outcome.strategy, "own_model");
  strictEqual(outcome.messages[0].content, "in brief");
  deepStrictEqual([model.requests[0].model, model.requests[0].tools], ["small-model", []]);
  deepStrictEqual(model.requests[0].messages[0], { role: "system", content: "Summarize briefly." });
});
