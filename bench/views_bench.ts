// What the read-only views a plugin gets cost where they sit on a path: the status bar composed
// from a fresh snapshot each frame (segments render from a sealed copy), an event delivered to a
// plugin's handler (a sealed payload), and a plugin reading its section and another plugin's tool.
// Run: deno task bench --filter views
// Before and after: deno run -A bench/compare.ts <before> <after> bench/views_bench.ts

import { emptyStatusSnapshot, type PluginContext, PluginRuntime } from "@amber/core";
import { createRegistries, createStatusRegistry } from "@amber/registries";
import { installSegments } from "./_status_segments.ts";

const status = createStatusRegistry();
installSegments(status);
const base = { ...emptyStatusSnapshot(), model: "gpt-5" };

let context: PluginContext | undefined;
let sink = 0;
const runtime = new PluginRuntime({
  registries: createRegistries(),
  config: { plugins: { watcher: { limit: 3 } } },
});
runtime.register({
  id: "watcher",
  version: "1.0.0",
  name: "Watcher",
  bound: { tools: { kind: "any" } },
  initialize(ctx) {
    context = ctx;
    ctx.events.subscribe("toolCompleted", (event) => {
      if (event.result.ok) sink++;
    });
    return true;
  },
  shutdown() {},
  capabilities: () => [{
    kind: "tool",
    name: "t",
    tools: [{
      name: "t",
      description: "t",
      parameters: { type: "object", properties: { a: { type: "string" } } },
      execute: () => ({ ok: true, output: "" }),
    }],
  }],
});
await runtime.start();

Deno.bench({
  name: "views: status compose, 40 segments, a fresh snapshot per frame",
  group: "views",
  fn() {
    status.compose(120, { ...base });
  },
});
Deno.bench({
  name: "views: publish toolCompleted (a fresh payload) to a plugin's handler",
  group: "views",
  fn() {
    runtime.events.publish("toolCompleted", {
      callId: "1",
      name: "t",
      result: { ok: true, output: "x" },
      durationMs: 1,
    });
  },
});
Deno.bench({
  name: "views: a plugin reads its section and a tool's description",
  group: "views",
  fn() {
    const section = context!.section() as { limit: number };
    sink += section.limit + context!.tools.get("t")!.tool.description.length;
  },
});
