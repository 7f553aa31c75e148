// The layout of @amber/core: the contracts form a leaf that reaches no engine, the main export
// is an explicit list without the kernel, and the kernel is its own export path.

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as core from "@amber/core";
import * as kernel from "@amber/core/kernel";
import { moduleGraph, projectModules } from "../../.ci/cycles.ts";

const CORE = fileURLToPath(new URL("../../core/", import.meta.url));

/** The contract modules: types, and the few pure helpers that go with them. */
const CONTRACTS = [
  "allowance.ts",
  "bound.ts",
  "capability.ts",
  "command.ts",
  "config.ts",
  "contribution.ts",
  "dialect.ts",
  "errors.ts",
  "events.ts",
  "execution_env.ts",
  "hooks.ts",
  "message.ts",
  "panel.ts",
  "plugin.ts",
  "prompt.ts",
  "provider.ts",
  "registries.ts",
  "registry.ts",
  "resolution_error.ts",
  "services.ts",
  "status.ts",
  "tool.ts",
  "ui.ts",
  "wallet.ts",
];

/** Whether a core module (relative path) is an engine: it does work, rather than describe it. */
function isEngine(path: string): boolean {
  return path.startsWith("kernel/") || path.startsWith("_") || path.startsWith("runtime") ||
    [
      "bound_check.ts",
      "dependency.ts",
      "event_bus.ts",
      "ledger.ts",
      "mod.ts",
      "plugin_config.ts",
      "plugin_module.ts",
      "plugin_state.ts",
      "plugin_validation.ts",
      "testing.ts",
    ].includes(path);
}

Deno.test("the contract modules import nothing from an engine, directly or through another", async () => {
  const files = await projectModules(CORE, ["."]);
  const graph = await moduleGraph(files, join(CORE, "..", "deno.json"));
  const relativeOf = (path: string) => path.slice(CORE.length);
  // The graph has the edges this test walks: the bus (an engine) imports its contract.
  ok(graph.get(join(CORE, "event_bus.ts"))?.includes(join(CORE, "events.ts")));
  const offending: string[] = [];
  for (const contract of CONTRACTS) {
    const start = join(CORE, contract);
    ok(graph.has(start), `${contract} is not a module of core`);
    const seen = new Set([start]);
    const queue = [start];
    while (queue.length > 0) {
      for (const next of graph.get(queue.shift()!) ?? []) {
        if (seen.has(next)) continue;
        seen.add(next);
        queue.push(next);
        if (isEngine(relativeOf(next))) offending.push(`${contract} -> ${relativeOf(next)}`);
      }
    }
  }
  deepStrictEqual(offending, []);
});

Deno.test("contribution.ts, the base of every registry contract, imports nothing", async () => {
  const path = join(CORE, "contribution.ts");
  const graph = await moduleGraph([path], join(CORE, "..", "deno.json"));
  deepStrictEqual(graph.get(path), []);
  const text = await Deno.readTextFile(path);
  strictEqual(/^import /m.test(text), false);
});

Deno.test("@amber/core names its exports one by one, and leaves the kernel to its own path", async () => {
  const text = await Deno.readTextFile(join(CORE, "mod.ts"));
  strictEqual(/export \*/.test(text), false);
  for (
    const name of ["runAgent", "runSelection", "resolveSelection", "SessionFile", "listSessions"]
  ) {
    ok(name in kernel, `${name} is missing from @amber/core/kernel`);
    ok(!(name in core), `${name} is still exported from @amber/core`);
  }
  for (const name of ["PluginRuntime", "PluginLedger", "EventBus", "ResolutionError", "exact"]) {
    ok(name in core, `${name} is missing from @amber/core`);
  }
  const config = JSON.parse(await Deno.readTextFile(join(CORE, "deno.json")));
  strictEqual(config.exports["./kernel"], "./kernel/mod.ts");
  strictEqual(config.exports["./testing"], "./testing.ts");
});
