// A sandboxed tool's streamed output (`ToolCallContext.output`) crosses the process boundary as
// `progress` does: in a run it becomes `toolOutput` events, in order and before the call's
// `toolEnd`, mixed with progress messages without confusing the two; a plugin flooding output is
// cut at a budget with one note, so the host's memory does not grow with it. The plugin
// "process" is in memory (`_memory_connection.ts`: the real JSON-RPC peers and `servePlugin`);
// the last test runs a real one.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { Plugin, ToolResult } from "@amber/core";
import { runAgent, type RunEvent } from "@amber/core/kernel";
import { loadSandboxedPlugin } from "@amber/core/sandbox";
import {
  MAX_FORWARDED_OUTPUT,
  OUTPUT_CHUNK_COST,
  OutputBudget,
} from "../../core/_output_budget.ts";
import { isOutputProgress, outputProgress } from "../../core/sandbox/_tool_output.ts";
import { makeRuntime, OPEN_BOUND } from "../_helpers.ts";
import { runOptions, ScriptedModel } from "./_kernel_script.ts";
import { memoryProcesses } from "./_memory_connection.ts";
import { fixtureProcess } from "./_fixture_process.ts";

const OBJECT = { type: "object" } as const;

// The plugin as its author writes it: a tool that streams lines with pauses between them, and
// one that floods.
function streamer(): Plugin {
  return {
    id: "streamer",
    version: "1.0.0",
    name: "Streamer",
    description: "Streams output.",
    bound: OPEN_BOUND,
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      kind: "tool",
      name: "streamer_tools",
      tools: [
        {
          name: "count",
          description: "Counts to three, slowly.",
          parameters: OBJECT,
          async execute(_, context): Promise<ToolResult> {
            for (const n of [1, 2, 3]) {
              context.output?.(`line ${n}\n`);
              if (n === 2) context.progress?.("two of three");
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
            return { ok: true, output: "line 1\nline 2\nline 3\n" };
          },
        },
        {
          name: "flood",
          description: "Streams far more than anyone should.",
          parameters: OBJECT,
          execute(_, context): ToolResult {
            const block = "x".repeat(64 * 1024);
            for (let i = 0; i < 20; i++) context.output?.(block);
            for (let i = 0; i < 2_000; i++) context.output?.("y");
            return { ok: true, output: "flooded" };
          },
        },
      ],
    }],
  };
}

async function scene() {
  const processes = memoryProcesses(streamer);
  const { runtime, registries } = makeRuntime({ config: { plugins: {} } });
  const sandboxed = await loadSandboxedPlugin({
    specifier: "file:///plugins/streamer/mod.ts",
    pluginId: "streamer",
    grant: {},
    workspace: "/ws",
    dataDir: "/cfg/plugins/streamer/data",
    readFolders: [],
    hostVersion: "1.0.0",
    importTimeoutMs: 2_000,
    connect: processes.connect,
    onFault: (fault) => runtime.fail(fault.pluginId, fault.where, fault.message),
  });
  runtime.register(sandboxed.plugin);
  await runtime.start();
  return {
    runtime,
    registries,
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await sandboxed.close();
    },
  };
}

Deno.test("a sandboxed tool's output arrives as toolOutput events, in order, before toolEnd", async () => {
  await using s = await scene();
  strictEqual(s.runtime.state("streamer").status, "active");
  const events: RunEvent[] = [];
  const model = new ScriptedModel([{ calls: [{ name: "count" }] }, { text: "done" }]);
  await runAgent({ ...runOptions(s.runtime, model), onEvent: (event) => events.push(event) });
  const seen = events.flatMap((event) =>
    event.type === "toolStart" || event.type === "toolEnd"
      ? [event.type]
      : event.type === "toolOutput"
      ? [`output ${event.chunk.trim()}`]
      : event.type === "toolProgress"
      ? [`progress ${event.message}`]
      : []
  );
  deepStrictEqual(seen, [
    "toolStart",
    "output line 1",
    "output line 2",
    "progress two of three",
    "output line 3",
    "toolEnd",
  ]);
});

Deno.test("progress and output stay apart when only one of them is listened to", async () => {
  await using s = await scene();
  const progress: string[] = [];
  const result = await s.registries.tool.execute("count", {}, {
    signal: new AbortController().signal,
    progress: (message) => progress.push(message),
  });
  deepStrictEqual(progress, ["two of three"], "output is not shown as progress");
  strictEqual(result.output, "line 1\nline 2\nline 3\n");
  const chunks: string[] = [];
  await s.registries.tool.execute("count", {}, {
    signal: new AbortController().signal,
    output: (chunk) => chunks.push(chunk),
  });
  deepStrictEqual(chunks, ["line 1\n", "line 2\n", "line 3\n"]);
});

Deno.test("a sandboxed tool flooding output is cut at the budget with one note", async () => {
  await using s = await scene();
  const chunks: string[] = [];
  const result = await s.registries.tool.execute("flood", {}, {
    signal: new AbortController().signal,
    output: (chunk) => chunks.push(chunk),
  });
  deepStrictEqual(result, { ok: true, output: "flooded" }, "the result is the tool's own");
  const forwarded = chunks.reduce((sum, chunk) => sum + chunk.length + OUTPUT_CHUNK_COST, 0);
  ok(forwarded <= MAX_FORWARDED_OUTPUT + 200, `${forwarded} forwarded`);
  ok(forwarded >= MAX_FORWARDED_OUTPUT / 2, "everything up to the budget is forwarded");
  match(chunks.at(-1)!, /tool 'flood' of plugin 'streamer' streamed too much output/);
  strictEqual(chunks.filter((chunk) => chunk.includes("too much output")).length, 1);
  ok(!chunks.some((chunk) => chunk.includes("y")), "nothing after the note");
});

Deno.test("OutputBudget counts each chunk's cost, so tiny chunks run out too", () => {
  const sent: string[] = [];
  const budget = new OutputBudget((chunk) => sent.push(chunk), "tool 't'", 3 * OUTPUT_CHUNK_COST);
  budget.take("a");
  budget.take("");
  budget.take("b");
  budget.take("c");
  budget.take("d");
  deepStrictEqual(sent, [
    "a",
    "b",
    "\n[tool 't' streamed too much output; the rest is not shown]\n",
  ]);
  const long: string[] = [];
  new OutputBudget((chunk) => long.push(chunk), "tool 't'", OUTPUT_CHUNK_COST + 4).take("abcdefgh");
  deepStrictEqual(long[0], "abcd", "a chunk past the budget is forwarded up to it");
});

Deno.test("output progress values are told apart from progress messages", () => {
  strictEqual(isOutputProgress(outputProgress("x")), true);
  strictEqual(isOutputProgress("x"), false);
  strictEqual(isOutputProgress({ output: 3 }), false);
  strictEqual(isOutputProgress(null), false);
});

Deno.test("a real plugin process streams output to the host, and its flood is cut", async () => {
  const fixture = new URL("./_sandbox_output_fixtures/streamer.ts", import.meta.url);
  const workspace = await Deno.makeTempDir({ prefix: "amber_sandbox_output_" });
  const { runtime, registries } = makeRuntime({ config: { plugins: {} } });
  const sandboxed = await loadSandboxedPlugin({
    ...fixtureProcess(fixture, "streamer", workspace),
    onFault: (fault) => runtime.fail(fault.pluginId, fault.where, fault.message),
  });
  try {
    runtime.register(sandboxed.plugin);
    await runtime.start();
    strictEqual(runtime.state("streamer").status, "active");
    const chunks: string[] = [];
    const counted = await registries.tool.execute("count", {}, {
      signal: new AbortController().signal,
      output: (chunk) => chunks.push(chunk),
    });
    deepStrictEqual([counted.output, chunks], ["counted", ["line 1\n", "line 2\n", "line 3\n"]]);
    const flood: string[] = [];
    const flooded = await registries.tool.execute("flood", {}, {
      signal: new AbortController().signal,
      output: (chunk) => flood.push(chunk),
    });
    strictEqual(flooded.output, "flooded");
    const kept = flood.reduce((sum, chunk) => sum + chunk.length, 0);
    ok(kept <= MAX_FORWARDED_OUTPUT, `${kept} characters kept of 4 MB`);
    match(flood.at(-1)!, /streamed too much output; the rest is not shown/);
  } finally {
    await runtime.stop();
    await sandboxed.close();
    await Deno.remove(workspace, { recursive: true });
  }
});
