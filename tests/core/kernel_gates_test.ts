// The gate chain fails closed (issue 11): an outcome outside the closed set, a throw or a
// deadline overrun is a block naming the gate and its plugin; an earlier gate never skips a later
// plugin's block; a confirmation a gate asks for is always put to the user, whatever the policy.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { GateOutcome } from "@amber/core";
import { type ApprovalRequest, runAgent } from "@amber/core/kernel";
import {
  countingTool,
  runOptions,
  ScriptedModel,
  startRuntime,
  toolResults,
} from "./_kernel_script.ts";

const BAD_OUTCOMES: readonly [string, unknown][] = [
  ["an unknown kind", { kind: "bogus" }],
  ["undefined", undefined],
  ["null", null],
  ["a number", 42],
  ["a bare string", "allow"],
  ["requireConfirmation without a correlationId", { kind: "requireConfirmation" }],
  ["requireConfirmation with a numeric correlationId", {
    kind: "requireConfirmation",
    correlationId: 7,
  }],
  ["requireConfirmation with a reason that is not a string", {
    kind: "requireConfirmation",
    correlationId: "c1",
    reason: { text: "why" },
  }],
  ["schedule without a correlationId", { kind: "schedule" }],
  ["block without a reason", { kind: "block" }],
  ["setResult without a valid result", { kind: "setResult", result: { ok: "yes" } }],
];

for (const [label, outcome] of BAD_OUTCOMES) {
  Deno.test(`a gate returning ${label} blocks the call, naming the gate and its plugin`, async () => {
    const ran: string[] = [];
    const { runtime, diagnostics } = await startRuntime({
      tools: [{ kind: "tool", name: "bash", tools: [countingTool("bash", ran)] }],
      odd: [{ kind: "gate", name: "odd_gate", check: () => outcome as GateOutcome }],
    });
    const model = new ScriptedModel([{ calls: [{ name: "bash" }] }, { text: "done" }]);
    const asked: ApprovalRequest[] = [];
    const result = await runAgent({
      ...runOptions(runtime, model),
      ask: (request) => (asked.push(request), Promise.resolve("once")),
    });
    deepStrictEqual(ran, [], "the tool did not run");
    deepStrictEqual(asked, [], "nobody was asked to approve a malformed outcome");
    strictEqual(result.cause.kind, "completed", "the run went on");
    match(toolResults(result.messages)[0], /tool gate 'odd_gate' of plugin 'odd'/);
    match(toolResults(result.messages)[0], /blocked/);
    ok(diagnostics.some((d) => d.startsWith("odd: tool gate 'odd_gate'")), diagnostics.join("\n"));
    await runtime.stop();
  });
}

Deno.test("a gate that throws or overruns its deadline blocks, naming the gate", async () => {
  const ran: string[] = [];
  const { runtime } = await startRuntime({
    tools: [{ kind: "tool", name: "bash", tools: [countingTool("bash", ran)] }],
    thrower: [{
      kind: "gate",
      name: "thrower",
      check: (input) => {
        if ((input.args as { n?: number }).n === 1) throw new Error("gate bug");
        return { kind: "allow" };
      },
    }],
    sleeper: [{
      kind: "gate",
      name: "sleeper",
      check: (input) =>
        (input.args as { n?: number }).n === 2 ? new Promise(() => {}) : { kind: "allow" },
    }],
  }, { plugins: {}, timeouts: { gate: 20_000, plugins: { sleeper: { gate: 30 } } } });
  const model = new ScriptedModel([
    { calls: [{ name: "bash", args: { n: 1 } }, { name: "bash", args: { n: 2 } }] },
    { text: "done" },
  ]);
  const started = performance.now();
  const result = await runAgent(runOptions(runtime, model));
  ok(performance.now() - started < 5_000, "the per-plugin gate deadline applied");
  deepStrictEqual(ran, []);
  const [thrown, hung] = toolResults(result.messages);
  match(thrown, /tool gate 'thrower' of plugin 'thrower' failed: gate bug, so the call is blocked/);
  match(hung, /tool gate 'sleeper' of plugin 'sleeper' did not finish within 30 ms, so the call/);
  await runtime.stop();
});

for (
  const [label, first] of [
    ["a confirmation", { kind: "requireConfirmation", correlationId: "c1" }],
    ["a supplied result", { kind: "setResult", result: { ok: true, output: "cached" } }],
    ["a schedule", { kind: "schedule", correlationId: "s1" }],
  ] as const
) {
  Deno.test(`${label} from an earlier gate never skips a later plugin's block`, async () => {
    const ran: string[] = [];
    const { runtime } = await startRuntime({
      tools: [{ kind: "tool", name: "bash", tools: [countingTool("bash", ran)] }],
      early: [{ kind: "gate", name: "early", check: () => first }],
      late: [{ kind: "gate", name: "wall", check: () => ({ kind: "block", reason: "never" }) }],
    });
    // The dependency order is registration order here: early before late.
    const model = new ScriptedModel([{ calls: [{ name: "bash" }] }, { text: "done" }]);
    let asked = 0;
    const result = await runAgent({
      ...runOptions(runtime, model),
      approval: "ask",
      ask: () => (asked++, Promise.resolve("once")),
    });
    deepStrictEqual(ran, []);
    strictEqual(asked, 0);
    match(toolResults(result.messages)[0], /blocked by tool gate 'wall' of plugin 'late': never/);
    await runtime.stop();
  });
}

Deno.test("a gate's confirmation is put to the user under --approve auto, and 'always' does not cover it", async () => {
  const ran: string[] = [];
  const { runtime } = await startRuntime({
    tools: [{ kind: "tool", name: "bash", tools: [countingTool("bash", ran)] }],
    careful: [{
      kind: "gate",
      name: "careful",
      check: ({ call }) => ({ kind: "requireConfirmation", correlationId: `confirm-${call.id}` }),
    }],
  });
  const model = new ScriptedModel([
    { calls: [{ name: "bash" }] },
    { calls: [{ name: "bash" }] },
    { calls: [{ name: "bash" }] },
    { text: "done" },
  ]);
  const asked: string[] = [];
  const answers = ["always", "deny"] as const;
  const result = await runAgent({
    ...runOptions(runtime, model),
    approval: "auto",
    ask: (request) => {
      asked.push(request.correlationId ?? "(none)");
      return Promise.resolve(answers[asked.length - 1] ?? "once");
    },
  });
  deepStrictEqual(asked, ["confirm-call_1_0", "confirm-call_2_0", "confirm-call_3_0"]);
  deepStrictEqual(ran, ["bash", "bash"]);
  match(toolResults(result.messages)[1], /the user denied 'bash'/);

  // Headless (no one to ask) the answer is no, even under auto.
  const headless = await runAgent(
    runOptions(runtime, new ScriptedModel([{ calls: [{ name: "bash" }] }, { text: "done" }])),
  );
  match(toolResults(headless.messages)[0], /a tool gate asked to confirm 'bash'.*no one to ask/);
  strictEqual(ran.length, 2);
  await runtime.stop();
});

Deno.test("a gate's reason for asking reaches the approval prompt", async () => {
  const ran: string[] = [];
  const { runtime } = await startRuntime({
    tools: [{ kind: "tool", name: "bash", tools: [countingTool("bash", ran)] }],
    careful: [{
      kind: "gate",
      name: "careful",
      check: () => ({ kind: "requireConfirmation", correlationId: "c1", reason: "it is Friday" }),
    }],
  });
  const asked: ApprovalRequest[] = [];
  await runAgent({
    ...runOptions(runtime, new ScriptedModel([{ calls: [{ name: "bash" }] }, { text: "done" }])),
    approval: "auto",
    ask: (request) => {
      asked.push(request);
      return Promise.resolve("once");
    },
  });
  deepStrictEqual(asked.map((request) => [request.correlationId, request.reason]), [
    ["c1", "it is Friday"],
  ]);
  deepStrictEqual(ran, ["bash"]);
  await runtime.stop();
});

Deno.test("an approval prompt that throws or answers nonsense denies; the run goes on", async () => {
  const ran: string[] = [];
  const { runtime } = await startRuntime({
    tools: [{
      kind: "tool",
      name: "bash",
      tools: [countingTool("bash", ran, { requiresApproval: () => true })],
    }],
  });
  const model = new ScriptedModel([
    { calls: [{ name: "bash" }] },
    { calls: [{ name: "bash" }] },
    { text: "done" },
  ]);
  let calls = 0;
  const result = await runAgent({
    ...runOptions(runtime, model),
    approval: "ask",
    ask: () => {
      if (++calls === 1) throw new Error("the terminal went away");
      return Promise.resolve("maybe" as "once");
    },
  });
  strictEqual(result.cause.kind, "completed");
  deepStrictEqual(ran, []);
  const [thrown, nonsense] = toolResults(result.messages);
  match(thrown, /the approval prompt for 'bash' failed: .*the terminal went away/);
  match(nonsense, /the user denied 'bash'/);
  await runtime.stop();
});

Deno.test("a host gate that throws or returns nothing blocks too", async () => {
  const ran: string[] = [];
  const { runtime } = await startRuntime({
    tools: [{ kind: "tool", name: "bash", tools: [countingTool("bash", ran)] }],
  });
  for (
    const hostGate of [
      () => undefined as unknown as GateOutcome,
      (): GateOutcome => {
        throw new Error("host bug");
      },
    ]
  ) {
    const model = new ScriptedModel([{ calls: [{ name: "bash" }] }, { text: "done" }]);
    const result = await runAgent({ ...runOptions(runtime, model), hostGate });
    match(toolResults(result.messages)[0], /the host gate/);
  }
  deepStrictEqual(ran, []);
  await runtime.stop();
});
