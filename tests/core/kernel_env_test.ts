// The environment resolved at a step's start is what the whole step uses (issue 11, seed 004):
// a plugin switched off mid-step keeps its tools, gates and hooks for the rest of that step, and
// the switch shows at the next step boundary (live refresh).

import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import type { PluginRuntime } from "@amber/core";
import { runAgent } from "@amber/core/kernel";
import {
  countingTool,
  runOptions,
  ScriptedModel,
  startRuntime,
  toolResults,
} from "./_kernel_script.ts";

Deno.test("a tool whose plugin is switched off mid-step still runs in that step, and is gone at the next", async () => {
  const ran: string[] = [];
  // The tool switches its neighbour off through the runtime it runs in, as /set would.
  const holder: { runtime?: PluginRuntime } = {};
  const gated: string[] = [];
  const { runtime } = await startRuntime({
    switcher: [{
      kind: "tool",
      name: "switch_off",
      tools: [countingTool("switch_off", ran, {
        execute: async () => {
          ran.push("switch_off");
          await holder.runtime!.setState("victim", false);
          return { ok: true, output: "victim is off" };
        },
      })],
    }],
    victim: [
      { kind: "tool", name: "victim_tool", tools: [countingTool("victim_tool", ran)] },
      {
        kind: "gate",
        name: "victim_gate",
        check: ({ call }) => (gated.push(call.name), { kind: "allow" }),
      },
    ],
  });
  holder.runtime = runtime;
  const model = new ScriptedModel([
    { calls: [{ name: "switch_off" }, { name: "victim_tool" }] },
    { calls: [{ name: "victim_tool" }] },
    { text: "done" },
  ]);
  const result = await runAgent(runOptions(runtime, model));
  const [switched, sameStep, nextStep] = toolResults(result.messages);
  strictEqual(switched, "victim is off");
  strictEqual(sameStep, "victim_tool ran", "the step ran the tool it resolved at its start");
  match(nextStep, /there is no tool 'victim_tool'/);
  deepStrictEqual(ran, ["switch_off", "victim_tool"]);
  deepStrictEqual(gated, ["switch_off", "victim_tool"], "its gate held for the rest of the step");
  const names = model.requests.map((r) => r.tools.map((t) => t.name).sort());
  deepStrictEqual(names, [
    ["switch_off", "victim_tool"],
    ["switch_off"],
    ["switch_off"],
  ]);
  await runtime.stop();
});
