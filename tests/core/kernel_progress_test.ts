// A tool's progress and an approval decided later (issue 12: a sandboxed plugin's tool answers
// across a process): `context.progress` becomes a `toolProgress` run event while the call runs,
// and a `requiresApproval` that returns a promise is awaited, failing closed when it rejects.

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { Tool } from "@amber/core";
import { type ApprovalRequest, runAgent, type RunEvent } from "@amber/core/kernel";
import { runOptions, ScriptedModel, startRuntime, toolResults } from "./_kernel_script.ts";

Deno.test("a tool's progress is a toolProgress event between its start and its end", async () => {
  const slow: Tool = {
    name: "index",
    description: "Indexes.",
    parameters: { type: "object" },
    execute: (_, context) => {
      context.progress?.("10 of 20 files");
      context.progress?.("20 of 20 files");
      return { ok: true, output: "indexed" };
    },
  };
  const { runtime } = await startRuntime({ idx: [{ kind: "tool", name: "t", tools: [slow] }] });
  const events: RunEvent[] = [];
  const model = new ScriptedModel([{ calls: [{ name: "index" }] }, { text: "done" }]);
  await runAgent({ ...runOptions(runtime, model), onEvent: (event) => events.push(event) });
  const around = events.filter((e) => e.type.startsWith("tool") && e.type !== "toolCallEnd")
    .map((e) => e.type === "toolProgress" ? `progress ${e.message}` : e.type);
  deepStrictEqual(around, [
    "toolStart",
    "progress 10 of 20 files",
    "progress 20 of 20 files",
    "toolEnd",
  ]);
  await runtime.stop();
});

Deno.test("a requiresApproval that answers later is awaited; a rejection asks the user", async () => {
  const ran: string[] = [];
  const tool = (name: string, answer: () => Promise<boolean>): Tool => ({
    name,
    description: name,
    parameters: { type: "object" },
    requiresApproval: answer,
    execute: () => (ran.push(name), { ok: true, output: `${name} ran` }),
  });
  const { runtime, diagnostics } = await startRuntime({
    later: [{
      kind: "tool",
      name: "t",
      tools: [
        tool("safe", () => Promise.resolve(false)),
        tool("risky", () => Promise.resolve(true)),
        tool("broken", () => Promise.reject(new Error("the process is gone"))),
      ],
    }],
  });
  const asked: ApprovalRequest[] = [];
  const model = new ScriptedModel([
    { calls: [{ name: "safe" }, { name: "risky" }, { name: "broken" }] },
    { text: "done" },
  ]);
  const run = await runAgent({
    ...runOptions(runtime, model),
    approval: "ask",
    ask: (request) => (asked.push(request), Promise.resolve("deny")),
  });
  deepStrictEqual(asked.map((a) => a.call.name), ["risky", "broken"]);
  deepStrictEqual(ran, ["safe"]);
  strictEqual(toolResults(run.messages)[1], "error: the user denied 'risky'");
  ok(diagnostics.some((d) => d.includes("requiresApproval of 'broken'")), diagnostics.join("\n"));
  await runtime.stop();
});
