// PluginRuntime.planDisable: the plan a dry run shows, and the proof that a real disable removes
// exactly that, observed at the registries and the ledger.

import { deepStrictEqual, ok, rejects, strictEqual, throws } from "node:assert/strict";
import {
  type DisablePlan,
  type Plugin,
  PluginDependentsError,
  type PluginRuntime,
  type Registries,
  UnknownPluginError,
} from "@amber/core";
import { capabilityOf, contents, makePlugin, makeRuntime, tempDir } from "../_helpers.ts";

// base <- mid <- app, and solo beside them; mid also subscribes to an event.
function harness(options: { configDir?: string; slowShutdown?: boolean } = {}) {
  const { runtime, registries } = makeRuntime({ configDir: options.configDir });
  const shutdown = options.slowShutdown
    ? () => new Promise<void>((resolve) => setTimeout(resolve, 5))
    : () => {};
  const plugins: Plugin[] = [
    makePlugin("base", [capabilityOf("tool", "base"), capabilityOf("provider", "base")], {
      shutdown,
    }),
    makePlugin("mid", [capabilityOf("command", "mid"), capabilityOf("status", "mid")], {
      requires: { base: "*" },
      initialize: (context) => {
        context.events.subscribe("turnEnded", () => {});
        return true;
      },
      shutdown,
    }),
    makePlugin("app", [capabilityOf("prompt", "app"), capabilityOf("gate", "app")], {
      requires: { mid: "*" },
      shutdown,
    }),
    makePlugin("solo", [capabilityOf("panel", "solo")]),
  ];
  for (const plugin of plugins) runtime.register(plugin);
  return { runtime, registries };
}

// What the plan says goes from the registries, as `kind:owner:id`.
function plannedEntries(plan: DisablePlan): string[] {
  return plan.plugins.flatMap((step) =>
    step.removes
      .filter((removal) => removal.kind !== "subscription")
      .flatMap((removal) => removal.ids.map((id) => `${removal.kind}:${step.pluginId}:${id}`))
  ).sort();
}

function ledgerOf(runtime: PluginRuntime): Map<string, string[]> {
  return new Map(
    runtime.ids().map((id) => [id, runtime.ledger.contributions(id).map((c) => c.name)]),
  );
}

async function disableAndObserve(
  runtime: PluginRuntime,
  registries: Registries,
  id: string,
  cascade: boolean,
) {
  const before = contents(registries);
  const ledgerBefore = ledgerOf(runtime);
  const plan = runtime.planDisable(id, { cascade });
  deepStrictEqual(contents(registries), before, "planning changes nothing");
  const result = await runtime.setState(id, false, { cascade });
  const after = contents(registries);
  return { plan, result, before, after, ledgerBefore };
}

Deno.test("the plan lists the plugins that go, furthest dependents first, and every contribution newest first", async () => {
  const { runtime } = harness();
  await runtime.start();
  const plan = runtime.planDisable("base", { cascade: true });
  deepStrictEqual(plan, {
    pluginId: "base",
    cascade: true,
    stranded: [],
    plugins: [
      {
        pluginId: "app",
        reason: "dependent",
        removes: [
          { kind: "gate", name: "g_app", ids: ["g_app"] },
          { kind: "prompt", name: "p_app", ids: ["p_app"] },
        ],
      },
      {
        pluginId: "mid",
        reason: "dependent",
        removes: [
          { kind: "status", name: "s_mid", ids: ["s_mid"] },
          { kind: "command", name: "cmd_mid", ids: ["rmid"] },
          { kind: "subscription", name: "event:turnEnded", ids: ["turnEnded"] },
        ],
      },
      {
        pluginId: "base",
        reason: "requested",
        removes: [
          { kind: "provider", name: "prov_base", ids: ["flavor:flavor_base", "preset_base"] },
          { kind: "tool", name: "tool_base", ids: ["t_base"] },
        ],
      },
    ],
  });
  for (const id of ["base", "mid", "app", "solo"]) strictEqual(runtime.state(id).status, "active");
});

Deno.test("a disable removes exactly what its plan listed, observed at the registries and the ledger", async () => {
  for (const slowShutdown of [false, true]) {
    const { runtime, registries } = harness({ slowShutdown });
    await runtime.start();
    const { plan, result, before, after, ledgerBefore } = await disableAndObserve(
      runtime,
      registries,
      "base",
      true,
    );
    const removed = before.filter((entry) => !after.includes(entry)).sort();
    deepStrictEqual(removed, plannedEntries(plan));
    ok(after.every((entry) => before.includes(entry)), "nothing was added");
    deepStrictEqual(result.cascaded, ["app", "mid"]);
    for (const step of plan.plugins) {
      strictEqual(runtime.ledger.size(step.pluginId), 0, step.pluginId);
      deepStrictEqual(
        step.removes.map((removal) => removal.name),
        ledgerBefore.get(step.pluginId)!.slice().reverse(),
        `${step.pluginId}: the plan named every ledger entry`,
      );
    }
    deepStrictEqual(runtime.ledger.contributions("solo").map((c) => c.name), ["panel_solo"]);
    strictEqual(runtime.events.has("turnEnded"), false, "mid's subscription went too");
  }
});

Deno.test("without cascade the plan names the plugins it would strand, and the disable is refused the same way", async () => {
  await using tmp = await tempDir();
  const { runtime, registries } = harness({ configDir: tmp.dir });
  await runtime.start();
  const plan = runtime.planDisable("base");
  deepStrictEqual(plan, {
    pluginId: "base",
    cascade: false,
    plugins: [],
    stranded: ["app", "mid"],
  });
  const before = contents(registries);
  await rejects(runtime.setState("base", false), (thrown: unknown) => {
    ok(thrown instanceof PluginDependentsError);
    deepStrictEqual(thrown.dependents, plan.stranded);
    return true;
  });
  deepStrictEqual(contents(registries), before);
  await rejects(Deno.stat(`${tmp.dir}/plugins/base/plugin.conf`), Deno.errors.NotFound);
});

Deno.test("planning changes nothing: no state file, no state, no ledger entry", async () => {
  await using tmp = await tempDir();
  const { runtime, registries } = harness({ configDir: tmp.dir });
  await runtime.start();
  const before = contents(registries);
  const ledger = ledgerOf(runtime);
  runtime.planDisable("base", { cascade: true });
  runtime.planDisable("solo");
  deepStrictEqual(contents(registries), before);
  deepStrictEqual(ledgerOf(runtime), ledger);
  for (const id of runtime.ids()) strictEqual(runtime.state(id).status, "active");
  await rejects(Deno.stat(`${tmp.dir}/plugins`), Deno.errors.NotFound);
});

Deno.test("a plugin that is not active plans to remove nothing; an unknown id is an error", async () => {
  const { runtime } = harness();
  await runtime.start();
  await runtime.setState("solo", false);
  deepStrictEqual(runtime.planDisable("solo"), {
    pluginId: "solo",
    cascade: false,
    plugins: [],
    stranded: [],
  });
  throws(() => runtime.planDisable("nope"), UnknownPluginError);
});

Deno.test("a dependent that is already off is not in the plan, and nothing strands", async () => {
  const { runtime, registries } = harness();
  await runtime.start();
  await runtime.setState("app", false);
  await runtime.setState("mid", false);
  const { plan, before, after } = await disableAndObserve(runtime, registries, "base", false);
  deepStrictEqual(plan.plugins.map((step) => step.pluginId), ["base"]);
  deepStrictEqual(before.filter((entry) => !after.includes(entry)).sort(), plannedEntries(plan));
});
