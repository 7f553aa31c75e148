// Switching one plugin must look at that plugin and the plugins that require it, never at every
// plugin installed; and what keeps it cheap (registries and the ledger keeping the keys of what
// was removed) must not change any order anyone sees.

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type Capability, type Plugin, PluginLedger } from "@amber/core";
import { capabilityOf, makePlugin, makeRuntime } from "../_helpers.ts";

// A plugin whose `requires` counts its reads, by plugin id.
function counted(
  id: string,
  reads: Map<string, number>,
  requires?: { [id: string]: string },
  capabilities: readonly Capability[] = [capabilityOf("tool", id)],
): Plugin {
  const plugin = makePlugin(id, capabilities);
  return Object.defineProperty({ ...plugin }, "requires", {
    get() {
      reads.set(id, (reads.get(id) ?? 0) + 1);
      return requires;
    },
    enumerable: true,
  });
}

function othersRead(reads: Map<string, number>, except: readonly string[]): string[] {
  return [...reads.entries()].filter(([id, n]) => n > 0 && !except.includes(id)).map(([id]) => id);
}

Deno.test("toggling one plugin reads no other plugin's requirements", async () => {
  const reads = new Map<string, number>();
  const { runtime } = makeRuntime();
  for (let i = 0; i < 300; i++) runtime.register(counted(`p${i}`, reads));
  await runtime.start();
  reads.clear();
  for (let round = 0; round < 3; round++) {
    strictEqual((await runtime.setState("p150", false)).state.status, "disabled");
    strictEqual((await runtime.setState("p150", true)).state.status, "active");
  }
  deepStrictEqual(othersRead(reads, ["p150"]), []);
});

Deno.test("a cascade and its undoing look only at the dependents", async () => {
  const reads = new Map<string, number>();
  const { runtime } = makeRuntime();
  for (let i = 0; i < 100; i++) runtime.register(counted(`x${i}`, reads));
  runtime.register(counted("top", reads, { mid: "*" }));
  runtime.register(counted("base", reads));
  runtime.register(counted("mid", reads, { base: "*" }));
  runtime.register(counted("side", reads, { base: "*" }));
  await runtime.start();
  reads.clear();
  const off = await runtime.setState("base", false, { cascade: true });
  deepStrictEqual(off.cascaded, ["side", "top", "mid"]);
  strictEqual(runtime.state("top").status, "blocked");
  const on = await runtime.setState("base", true);
  deepStrictEqual(on.unblocked, ["mid", "top", "side"]);
  for (const id of ["top", "mid", "side", "base"]) strictEqual(runtime.state(id).status, "active");
  deepStrictEqual(othersRead(reads, ["top", "mid", "side", "base"]), []);
});

Deno.test("a plugin switched off and on again comes last in every registry, as before", async () => {
  const { runtime, registries } = makeRuntime();
  for (const id of ["a", "b", "c"]) {
    runtime.register(makePlugin(id, [capabilityOf("tool", id), capabilityOf("prompt", id)]));
  }
  await runtime.start();
  for (let round = 0; round < 5; round++) {
    await runtime.setState("a", false);
    await runtime.setState("a", true);
  }
  deepStrictEqual(registries.tool.entries(), [
    { id: "t_b", owner: "b" },
    { id: "t_c", owner: "c" },
    { id: "t_a", owner: "a" },
  ]);
  deepStrictEqual(registries.tool.list().map((entry) => entry.tool.name), ["t_b", "t_c", "t_a"]);
  deepStrictEqual(runtime.ledger.owners(), ["b", "c", "a"]);
  await runtime.setState("b", false);
  deepStrictEqual(registries.tool.entries().map((entry) => entry.owner), ["c", "a"]);
  deepStrictEqual(registries.tool.purge("a"), ["t_a"]);
  deepStrictEqual(registries.tool.entries().map((entry) => entry.owner), ["c"]);
});

Deno.test("the ledger orders owners by when they last went from nothing to something", () => {
  const ledger = new PluginLedger();
  const removed: string[] = [];
  const contribution = (name: string) => ({
    kind: "tool" as const,
    name,
    ids: [name],
    remove: () => void removed.push(name),
  });
  for (let i = 0; i < 2_000; i++) ledger.record(`o${i}`, contribution(`c${i}`));
  // Thousands of owners emptied and refilled: the map is rebuilt on the way, orders hold.
  for (let i = 0; i < 1_990; i++) ledger.unwind(`o${i}`);
  ledger.record("o5", contribution("again"));
  deepStrictEqual(ledger.owners().slice(0, 2), ["o1990", "o1991"]);
  deepStrictEqual(ledger.owners().at(-1), "o5");
  strictEqual(ledger.owners().length, 11);
  strictEqual(ledger.size("o5"), 1);
  strictEqual(ledger.size("o6"), 0);
  deepStrictEqual(ledger.contributions("o6"), []);
  removed.length = 0;
  ledger.clear();
  deepStrictEqual(removed.slice(0, 2), ["again", "c1999"]);
  deepStrictEqual(ledger.owners(), []);
});
