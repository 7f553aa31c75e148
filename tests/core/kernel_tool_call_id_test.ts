// A running tool knows which of the model's calls it is running (`ToolCallContext.callId`): the
// kernel sets the id of the call, in process and across the sandbox's process boundary, so work
// a tool hands to a front end (a command in an editor's terminal) lands in that call's row even
// when a step runs several calls at once. Run outside a model's call, a tool gets no id.

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { Plugin, Tool, ToolCallContext, ToolResult } from "@amber/core";
import { runAgent, type RunEvent } from "@amber/core/kernel";
import { loadSandboxedPlugin } from "@amber/core/sandbox";
import { makeRuntime, OPEN_BOUND } from "../_helpers.ts";
import { runOptions, ScriptedModel, startRuntime } from "./_kernel_script.ts";
import { memoryProcesses } from "./_memory_connection.ts";

const OBJECT = { type: "object" } as const;

// A read-only tool that says which call it ran as, after a pause, so two calls of one step
// overlap when the kernel runs them together.
function reporter(name: string): Tool {
  return {
    name,
    description: "Says which call it ran as.",
    parameters: OBJECT,
    readOnly: true,
    async execute(_, context: ToolCallContext): Promise<ToolResult> {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { ok: true, output: `ran as ${context.callId ?? "no call"}` };
    },
  };
}

// The id of each started call beside what the call's tool said it ran as.
function pairs(events: readonly RunEvent[]): [string, string][] {
  const started = events.flatMap((e) => e.type === "toolStart" ? [e.call.id] : []);
  const said = new Map(
    events.flatMap((e) => e.type === "toolEnd" ? [[e.call.id, e.result.output] as const] : []),
  );
  return started.map((id) => [id, said.get(id) ?? "no result"]);
}

Deno.test("two calls in one step each run with their own call id", async () => {
  const { runtime } = await startRuntime({
    r: [{ kind: "tool", name: "t", tools: [reporter("look"), reporter("peek")] }],
  });
  const events: RunEvent[] = [];
  const model = new ScriptedModel([
    { calls: [{ name: "look" }, { name: "look" }, { name: "peek" }] },
    { calls: [{ name: "look" }] },
    { text: "done" },
  ]);
  await runAgent({ ...runOptions(runtime, model), onEvent: (event) => events.push(event) });
  deepStrictEqual(pairs(events), [
    ["call_1_0", "ran as call_1_0"],
    ["call_1_1", "ran as call_1_1"],
    ["call_1_2", "ran as call_1_2"],
    ["call_2_0", "ran as call_2_0"],
  ]);
  // Run outside a model's call, there is no id to give.
  const direct = await runtime.registries.tool.execute("look", {}, {
    signal: new AbortController().signal,
  });
  strictEqual(direct.output, "ran as no call");
  await runtime.stop();
});

function sandboxed(): Plugin {
  return {
    id: "reporter",
    version: "1.0.0",
    name: "Reporter",
    description: "Says which call it ran as.",
    bound: OPEN_BOUND,
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{ kind: "tool", name: "t", tools: [reporter("look")] }],
  };
}

Deno.test("a sandboxed tool gets its call id across the process boundary", async () => {
  const processes = memoryProcesses(sandboxed);
  const { runtime, registries } = makeRuntime({ config: { plugins: {} } });
  const plugin = await loadSandboxedPlugin({
    specifier: "file:///plugins/reporter/mod.ts",
    pluginId: "reporter",
    grant: {},
    workspace: "/ws",
    dataDir: "/cfg/plugins/reporter/data",
    readFolders: [],
    hostVersion: "1.0.0",
    importTimeoutMs: 2_000,
    connect: processes.connect,
    onFault: (fault) => runtime.fail(fault.pluginId, fault.where, fault.message),
  });
  try {
    runtime.register(plugin.plugin);
    await runtime.start();
    strictEqual(runtime.state("reporter").status, "active");
    const events: RunEvent[] = [];
    const model = new ScriptedModel([
      { calls: [{ name: "look" }, { name: "look" }] },
      { text: "done" },
    ]);
    await runAgent({ ...runOptions(runtime, model), onEvent: (event) => events.push(event) });
    deepStrictEqual(pairs(events), [
      ["call_1_0", "ran as call_1_0"],
      ["call_1_1", "ran as call_1_1"],
    ]);
    const direct = await registries.tool.execute("look", {}, {
      signal: new AbortController().signal,
    });
    strictEqual(direct.output, "ran as no call");
  } finally {
    await runtime.stop();
    await plugin.close();
  }
});
