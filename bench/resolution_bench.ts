// Plugin resolution's pure functions: dependency ordering of 500 plugins, and bound enforcement
// over 500 plugins x 10 tool ids, the work activation does once per selection.
// Run: deno bench -A bench/resolution_bench.ts

import { satisfies } from "semver";
import { admits, type CapabilityBound, exact } from "../core/bound.ts";
import { enforceBound } from "../core/bound_check.ts";
import { type DependencyNode, dependentsOf, orderPlugins } from "../core/dependency.ts";
import { makePlugin, makeRuntime } from "../tests/_helpers.ts";

// mulberry32: a fixed seed gives the same graph on every run, so figures compare across runs.
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PLUGINS = 500;
const random = prng(0xa3be5);
const nodes: DependencyNode[] = Array.from({ length: PLUGINS }, (_, i) => {
  const requires: { [id: string]: string } = {};
  const count = i === 0 ? 0 : Math.floor(random() * 4);
  for (let k = 0; k < count; k++) requires[`plugin_${Math.floor(random() * i)}`] = "^1.0.0";
  return { id: `plugin_${i}`, version: `1.${i % 7}.0`, requires };
});
// Reversed input: every plugin is listed before its requirements, the worst case for ordering.
const reversed = [...nodes].reverse();

const TOOLS = 10;
const plugins = Array.from({ length: PLUGINS }, (_, i) => {
  const ids = Array.from({ length: TOOLS }, (_, k) => `p${i}_tool_${k}`);
  const bound: CapabilityBound = { tools: exact(...ids) };
  return { id: `plugin_${i}`, bound, contributions: [{ kind: "tool" as const, ids }] };
});
const boundOne = exact(...plugins[0].contributions[0].ids);

let sink = 0;

Deno.bench({
  name: "orderPlugins: 500 plugins, up to 3 requirements each",
  group: "resolution",
  baseline: true,
  fn() {
    sink += orderPlugins(nodes, () => true).order.length;
  },
});

Deno.bench({
  name: "orderPlugins: 500 plugins, reversed input",
  group: "resolution",
  fn() {
    sink += orderPlugins(reversed, () => true).order.length;
  },
});

Deno.bench({
  name: "orderPlugins: 500 plugins, semver.satisfies",
  group: "resolution",
  fn() {
    sink += orderPlugins(nodes, satisfies).order.length;
  },
});

Deno.bench({
  name: "dependentsOf: plugin_0 of 500",
  group: "resolution",
  fn() {
    sink += dependentsOf(nodes, "plugin_0").length;
  },
});

Deno.bench({
  name: "enforceBound: 500 plugins x 10 tools, exact bounds",
  group: "resolution",
  fn() {
    for (const plugin of plugins) {
      sink += enforceBound(plugin.id, plugin.bound, plugin.contributions).length;
    }
  },
});

Deno.bench({
  name: "admits: exact bound of 10, x1000 (last id)",
  group: "resolution",
  fn() {
    for (let i = 0; i < 1000; i++) if (admits(boundOne, "p0_tool_9")) sink++;
  },
});

globalThis.addEventListener("unload", () => {
  if (sink < 0) console.log(sink);
});

// The whole pipeline the issue budgets: a runtime resolving 500 plugins with random
// requirements (semver ranges) and 10 tools each, bounds checked, then stopped again.
const { runtime } = makeRuntime();
for (let i = 0; i < PLUGINS; i++) {
  const ids = plugins[i].contributions[0].ids;
  runtime.register(makePlugin(`plugin_${i}`, [{
    kind: "tool",
    name: "tools",
    tools: ids.map((name) => ({
      name,
      description: name,
      parameters: { type: "object" },
      execute: () => ({ ok: true, output: name }),
    })),
  }], { version: nodes[i].version, requires: nodes[i].requires, bound: plugins[i].bound }));
}

Deno.bench({
  name: "runtime: resolve + activate 500 plugins x 10 tools with random requirements, then stop",
  group: "resolve 500",
  async fn() {
    await runtime.start();
    await runtime.stop();
  },
});
