import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  CAPABILITY_KINDS,
  type CapabilityKind,
  emptyStatusSnapshot,
  type Registries,
} from "@amber/core";
import fc from "fast-check";
import { capabilityOf, contents, makePlugin, makeRuntime } from "../_helpers.ts";

type Spec = { id: string; kinds: CapabilityKind[] };

function pluginsOf(specs: readonly Spec[]) {
  return specs.map((spec) =>
    makePlugin(spec.id, spec.kinds.map((kind, i) => capabilityOf(kind, `${spec.id}_${i}`)))
  );
}

// Everything a user or the kernel could reach of `key`'s contributions through the registries'
// read paths, not just their entry lists.
function reachable(registries: Registries, spec: Spec): string[] {
  const found: string[] = [];
  const status = registries.status.compose(10_000, emptyStatusSnapshot()).segments.map((s) =>
    s.name
  );
  const blocks = registries.prompt.assemble([]).messages.map((m) => m.content);
  const roots = registries.command.tree().map((r) => r.name);
  spec.kinds.forEach((kind, i) => {
    const key = `${spec.id}_${i}`;
    const hit = {
      tool: () => registries.tool.get(`t_${key}`) !== undefined,
      prompt: () => blocks.includes(`block ${key}`),
      status: () => status.includes(`s_${key}`),
      panel: () => registries.panel.render(`panel_${key}`, 80) !== undefined,
      command: () => roots.includes(`r${key}`),
      provider: () => registries.provider.preset(`preset_${key}`) !== undefined,
      wallet: () => registries.wallet.entries().some((e) => e.owner === spec.id),
      allowance: () => registries.allowance.entries().some((e) => e.owner === spec.id),
      hook: () => registries.hook.get(`h_${key}`) !== undefined,
      gate: () => registries.gate.get(`g_${key}`) !== undefined,
      guard: () => registries.guard.get(`guard_${key}`) !== undefined,
      action: () => registries.action.get(`act_${key}`) !== undefined,
      state: () => registries.state.get(`st_${key}`) !== undefined,
    }[kind]();
    if (hit) found.push(`${kind}:${key}`);
  });
  return found;
}

Deno.test("property: after every disable nothing of the plugin is reachable, and the harness equals a fresh start", async () => {
  const specArb = fc.uniqueArray(
    fc.record({
      id: fc.constantFrom("alpha", "beta", "gamma", "delta", "eps", "zeta"),
      kinds: fc.array(fc.constantFrom(...CAPABILITY_KINDS), { maxLength: 10 }),
    }),
    { minLength: 1, maxLength: 5, selector: (s) => s.id },
  );
  await fc.assert(
    fc.asyncProperty(
      specArb,
      fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 30 }),
      async (specs, ops) => {
        const { runtime, registries } = makeRuntime();
        pluginsOf(specs).forEach((p) => runtime.register(p));
        await runtime.start();
        for (const [index, on] of ops) {
          const spec = specs[index % specs.length];
          await runtime.setState(spec.id, on);
          strictEqual(runtime.state(spec.id).status, on ? "active" : "disabled");
          if (!on) {
            deepStrictEqual(reachable(registries, spec), []);
            for (const kind of CAPABILITY_KINDS) {
              ok(!registries[kind].entries().some((e) => e.owner === spec.id), kind);
            }
            strictEqual(runtime.ledger.size(spec.id), 0);
          } else {
            strictEqual(reachable(registries, spec).length, spec.kinds.length);
          }
        }
        const fresh = makeRuntime();
        pluginsOf(specs).forEach((p) => fresh.runtime.register(p));
        await fresh.runtime.start();
        for (const spec of specs) {
          if (runtime.state(spec.id).status !== "active") {
            await fresh.runtime.setState(spec.id, false);
          }
        }
        deepStrictEqual(contents(registries), contents(fresh.registries));
      },
    ),
    { numRuns: 150 },
  );
});
