// Properties of the runtime and its ledger, over random harnesses and random sequences of
// switches. The runs default to 1,000 per property; `deno task test:property` sets
// AMBER_PROPERTY_RUNS to 20,000.

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  CAPABILITY_KINDS,
  type CapabilityKind,
  type Contribution,
  emptyStatusSnapshot,
  type Plugin,
  PluginDependentsError,
  type Registries,
} from "@amber/core";
import fc from "fast-check";
import { capabilityOf, contents, makePlugin, makeRuntime } from "../_helpers.ts";
import { type Fault, faultyRegistries } from "./_faulty_registries.ts";

const RUNS = propertyRuns();

function propertyRuns(): number {
  let configured: string | undefined;
  try {
    configured = Deno.env.get("AMBER_PROPERTY_RUNS");
  } catch {
    // Without --allow-env the default applies.
  }
  const runs = Number(configured);
  return Number.isInteger(runs) && runs > 0 ? runs : 1_000;
}

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
      compactor: () => registries.compactor.get(`comp_${key}`) !== undefined,
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
    { numRuns: RUNS },
  );
});

// ---- the ledger under faults ----

type FaultySpec = {
  readonly id: string;
  // The capabilities at activation (and at every even live version).
  readonly kinds: CapabilityKind[];
  // A live plugin's capabilities at odd live versions; null for a plugin without liveVersion.
  readonly liveKinds: CapabilityKind[] | null;
  // Bit i: requires the i-th plugin before it.
  readonly requiresMask: number;
  // Index (into kinds, then liveKinds) of a capability whose install throws.
  readonly badInstall: number | null;
  readonly leaky: boolean;
  // Indices (into kinds, then liveKinds) of capabilities whose remove throws.
  readonly badRemoves: number[];
  readonly removeFirst: boolean;
  // Subscribes to an event in initialize, and then fails it.
  readonly subscribes: boolean;
  readonly initFails: boolean;
};

type Op =
  | { readonly op: "set"; readonly at: number; readonly on: boolean; readonly cascade: boolean }
  | { readonly op: "refresh"; readonly at: number };

const kindsArb = fc.array(fc.constantFrom(...CAPABILITY_KINDS), { maxLength: 6 });

const faultySpecsArb = fc.uniqueArray(
  fc.record({
    id: fc.constantFrom("alpha", "beta", "gamma", "delta", "eps", "zeta"),
    kinds: kindsArb,
    liveKinds: fc.option(kindsArb, { freq: 2 }),
    requiresMask: fc.nat({ max: 31 }),
    badInstall: fc.option(fc.nat({ max: 11 }), { freq: 3 }),
    leaky: fc.boolean(),
    badRemoves: fc.array(fc.nat({ max: 11 }), { maxLength: 3 }),
    removeFirst: fc.boolean(),
    subscribes: fc.boolean(),
    initFails: fc.nat({ max: 9 }).map((n) => n < 2),
  }),
  { minLength: 1, maxLength: 5, selector: (s) => s.id },
);

const opsArb = fc.array(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant("set" as const),
        at: fc.nat(),
        on: fc.boolean(),
        cascade: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("refresh" as const), at: fc.nat() }) },
  ),
  { maxLength: 25 },
);

function keyOf(spec: FaultySpec, i: number): string {
  return i < spec.kinds.length ? `${spec.id}_${i}` : `${spec.id}_L${i - spec.kinds.length}`;
}

function harnessOf(specs: readonly FaultySpec[]) {
  const faults = new Map<string, Fault>();
  const versions = new Map<string, number>();
  const plugins: Plugin[] = specs.map((spec, position) => {
    const all = [...spec.kinds, ...(spec.liveKinds ?? [])];
    const capability = (i: number) => capabilityOf(all[i], keyOf(spec, i));
    if (spec.badInstall !== null && spec.badInstall < all.length) {
      faults.set(capability(spec.badInstall).name, { install: "throws", leaky: spec.leaky });
    }
    for (const i of spec.badRemoves) {
      if (i < all.length) {
        faults.set(capability(i).name, { remove: "throws", first: spec.removeFirst });
      }
    }
    const requires: Record<string, string> = {};
    for (let j = 0; j < position; j++) {
      if (spec.requiresMask & (1 << j)) requires[specs[j].id] = "*";
    }
    versions.set(spec.id, 0);
    const version = () => versions.get(spec.id)!;
    return makePlugin(spec.id, () => {
      const odd = spec.liveKinds !== null && version() % 2 === 1;
      const offset = odd ? spec.kinds.length : 0;
      const kinds = odd ? spec.liveKinds! : spec.kinds;
      return kinds.map((_, i) => capability(offset + i));
    }, {
      requires: Object.keys(requires).length > 0 ? requires : undefined,
      initialize: (context) => {
        if (spec.subscribes) context.events.subscribe("turnStarted", () => {});
        return !spec.initFails;
      },
      ...(spec.liveKinds !== null ? { liveVersion: version } : {}),
    });
  });
  return { faults, versions, plugins };
}

// Every non-core registry entry, as `kind:owner:id`.
function pluginEntries(registries: Registries): string[] {
  return contents(registries).filter((entry) => entry.split(":")[1] !== "core");
}

// What the ledger says `id` has in the registries, as `kind:owner:id`.
function ledgered(contributions: readonly Contribution[], id: string): string[] {
  return contributions
    .filter((c) => c.kind !== "subscription")
    .flatMap((c) => c.ids.map((entry) => `${c.kind}:${id}:${entry}`))
    .sort();
}

function ownedBy(entries: readonly string[], id: string): string[] {
  return entries.filter((entry) => entry.split(":")[1] === id).sort();
}

Deno.test("property: under failing installs, throwing removes, live refresh and cascades, the registries hold exactly the ledger, a disable removes exactly its plan, and stop leaves nothing", async () => {
  await fc.assert(
    fc.asyncProperty(faultySpecsArb, opsArb, async (specs, ops) => {
      const { faults, versions, plugins } = harnessOf(specs);
      const registries = faultyRegistries(faults);
      const { runtime } = makeRuntime({ registries });
      for (const plugin of plugins) runtime.register(plugin);

      // Every plugin that is not active has nothing anywhere; an active one has in the
      // registries exactly what its ledger records.
      const consistent = (after: string) => {
        const entries = pluginEntries(registries);
        for (const { id } of specs) {
          const status = runtime.state(id).status;
          const held = ownedBy(entries, id);
          deepStrictEqual(held, ledgered(runtime.ledger.contributions(id), id), `${id} ${after}`);
          if (status !== "active") strictEqual(runtime.ledger.size(id), 0, `${id} ${after}`);
        }
      };

      await runtime.start();
      consistent("after start");
      for (const step of ops) {
        const spec = specs[step.at % specs.length];
        const id = spec.id;
        if (step.op === "refresh") {
          versions.set(id, versions.get(id)! + 1);
          runtime.refresh();
          consistent(`after a refresh of ${id}`);
          continue;
        }
        if (step.on) {
          await runtime.setState(id, true);
          consistent(`after enabling ${id}`);
          continue;
        }
        const before = pluginEntries(registries);
        const ledgerBefore = new Map(specs.map((s) => [s.id, runtime.ledger.contributions(s.id)]));
        const plan = runtime.planDisable(id, { cascade: step.cascade });
        let refused: unknown;
        try {
          await runtime.setState(id, false, { cascade: step.cascade });
        } catch (error) {
          refused = error;
        }
        const after = pluginEntries(registries);
        if (plan.stranded.length > 0) {
          ok(refused instanceof PluginDependentsError, String(refused));
          deepStrictEqual(refused.dependents, plan.stranded);
          deepStrictEqual(after, before, "a refused disable changes nothing");
          continue;
        }
        strictEqual(refused, undefined);
        // Observed at the registries and the ledger: exactly what the plan listed went.
        const removed = before.filter((entry) => !after.includes(entry)).sort();
        const planned = plan.plugins.flatMap((p) =>
          p.removes
            .filter((r) => r.kind !== "subscription")
            .flatMap((r) => r.ids.map((entry) => `${r.kind}:${p.pluginId}:${entry}`))
        ).sort();
        deepStrictEqual(removed, planned, `disable ${id}${step.cascade ? " --cascade" : ""}`);
        ok(after.every((entry) => before.includes(entry)), "a disable adds nothing");
        const going = new Set(plan.plugins.map((p) => p.pluginId));
        for (const s of specs) {
          const now = runtime.ledger.contributions(s.id);
          if (going.has(s.id)) {
            const listed = plan.plugins.find((p) => p.pluginId === s.id)!.removes;
            deepStrictEqual(
              listed.map((r) => `${r.kind}:${r.name}`),
              ledgerBefore.get(s.id)!.map((c) => `${c.kind}:${c.name}`).reverse(),
            );
            strictEqual(now.length, 0);
            ok(runtime.state(s.id).status !== "active");
          } else {
            deepStrictEqual(now, ledgerBefore.get(s.id), `${s.id} is not in the plan`);
          }
        }
        consistent(`after disabling ${id}`);
      }

      await runtime.stop();
      deepStrictEqual(pluginEntries(registries), [], "residue after stop()");
      deepStrictEqual(runtime.ledger.owners(), []);
      strictEqual(runtime.events.has("turnStarted"), false, "a subscription outlived stop()");
      for (const { id } of specs) strictEqual(runtime.state(id).status, "registered");
    }),
    { numRuns: RUNS },
  );
});
