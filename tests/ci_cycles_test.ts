// The import-cycle check of .ci/run: the cycle finder on small graphs, the module graph that
// `deno info` reports (type-only imports included) on throwaway files, and the project itself.

import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  findCycles,
  formatCycle,
  MEMBERS,
  moduleGraph,
  projectModules,
  tangles,
} from "../.ci/cycles.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

function graphOf(edges: Record<string, string[]>): Map<string, string[]> {
  return new Map(Object.entries(edges));
}

Deno.test("findCycles reports a two-module cycle once, starting at its smallest module", () => {
  const graph = graphOf({ "b.ts": ["a.ts"], "a.ts": ["b.ts", "c.ts"], "c.ts": [] });
  deepStrictEqual(findCycles(graph), [["a.ts", "b.ts", "a.ts"]]);
});

Deno.test("findCycles finds nothing in a graph without cycles, diamonds included", () => {
  const graph = graphOf({
    "mod.ts": ["a.ts", "b.ts"],
    "a.ts": ["leaf.ts"],
    "b.ts": ["leaf.ts"],
    "leaf.ts": [],
  });
  deepStrictEqual(findCycles(graph), []);
  deepStrictEqual(tangles(graph), []);
});

Deno.test("findCycles reports a self-import and every elementary cycle of a tangle", () => {
  deepStrictEqual(findCycles(graphOf({ "a.ts": ["a.ts"] })), [["a.ts", "a.ts"]]);
  // capability -> kind -> registry -> capability, the shape the core had: one tangle, and a
  // cycle through each kind file.
  const graph = graphOf({
    "capability.ts": ["command.ts", "tool.ts"],
    "command.ts": ["registry.ts"],
    "tool.ts": ["registry.ts"],
    "registry.ts": ["capability.ts"],
  });
  deepStrictEqual(tangles(graph), [["capability.ts", "command.ts", "registry.ts", "tool.ts"]]);
  deepStrictEqual(findCycles(graph), [
    ["capability.ts", "command.ts", "registry.ts", "capability.ts"],
    ["capability.ts", "tool.ts", "registry.ts", "capability.ts"],
  ]);
});

Deno.test("findCycles stops at its limit", () => {
  // A complete graph on five modules has 84 elementary cycles.
  const names = ["a", "b", "c", "d", "e"];
  const graph = new Map(names.map((n) => [n, names.filter((m) => m !== n)]));
  strictEqual(findCycles(graph).length, 84);
  strictEqual(findCycles(graph, 10).length, 10);
});

Deno.test("formatCycle prints paths relative to the root", () => {
  strictEqual(
    formatCycle(["/r/core/a.ts", "/r/core/b.ts", "/r/core/a.ts"], "/r"),
    "core/a.ts -> core/b.ts -> core/a.ts",
  );
});

async function writeModules(files: Record<string, string>): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "amber_cycles_test_" });
  await Deno.writeTextFile(join(root, "deno.json"), "{}\n");
  for (const [name, text] of Object.entries(files)) {
    await Deno.mkdir(join(root, name, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, name), text);
  }
  return root;
}

Deno.test("moduleGraph sees a cycle made only of a type-only import", async () => {
  const root = await writeModules({
    "core/a.ts": 'import type { B } from "./b.ts";\nexport type A = { b?: B };\n',
    "core/b.ts": 'import { helper } from "./c.ts";\nimport type { A } from "./a.ts";\n' +
      "export type B = { a?: A };\nexport const x = helper;\n",
    "core/c.ts": "export const helper = 1;\n",
    "core/node_modules/skipped.ts": 'import "../a.ts";\n',
  });
  try {
    const files = await projectModules(root, ["core", "missing"]);
    deepStrictEqual(files, ["a.ts", "b.ts", "c.ts"].map((f) => join(root, "core", f)));
    const graph = await moduleGraph(files, join(root, "deno.json"));
    const cycles = findCycles(graph).map((cycle) => formatCycle(cycle, root));
    deepStrictEqual(cycles, ["core/a.ts -> core/b.ts -> core/a.ts"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("moduleGraph reports no cycle when the imports go one way", async () => {
  const root = await writeModules({
    "core/a.ts": 'import type { B } from "./b.ts";\nexport type A = { b?: B };\n',
    "core/b.ts": 'import { helper } from "./c.ts";\nexport type B = { n: number };\n' +
      "export const x = helper;\n",
    "core/c.ts": "export const helper = 1;\n",
  });
  try {
    const files = await projectModules(root, ["core"]);
    const graph = await moduleGraph(files, join(root, "deno.json"));
    deepStrictEqual(graph.get(join(root, "core/a.ts")), [join(root, "core/b.ts")]);
    deepStrictEqual(findCycles(graph), []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the project has no import cycle, and the script says so", async () => {
  const files = await projectModules(ROOT, MEMBERS);
  const graph = await moduleGraph(files, join(ROOT, "deno.json"));
  deepStrictEqual(findCycles(graph).map((cycle) => formatCycle(cycle, ROOT)), []);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-run", "--allow-env", join(ROOT, ".ci/cycles.ts")],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  strictEqual(output.code, 0, stdout + new TextDecoder().decode(output.stderr));
  match(stdout, /^no import cycles \(\d+ modules\)\n$/);
});
