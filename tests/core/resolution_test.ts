// Seed 004 at the runtime level: bounds at activation, dependency order, duplicate ids, plugin
// config schemas, exact selections that fail closed, and live refresh.

import { deepStrictEqual, match, ok, rejects, strictEqual } from "node:assert/strict";
import {
  type AmberEvents,
  any,
  CapabilityBoundError,
  type Diagnostic,
  exact,
  namespace,
  type Plugin,
  PluginDependentsError,
  type Tool,
} from "@amber/core";
import { resolveSelection } from "@amber/core/kernel";
import { createRegistries } from "@amber/registries";
import { z } from "zod";
import { capabilityOf, makePlugin, makeRuntime } from "../_helpers.ts";

function tool(name: string, output = name): Tool {
  return {
    name,
    description: name,
    parameters: { type: "object" },
    execute: () => ({ ok: true, output }),
  };
}

async function selectionFailures(
  available: Plugin[],
  pluginIds: string[],
  pluginConfig?: Record<string, unknown>,
) {
  const error = await resolveSelection({
    available,
    pluginIds,
    pluginConfig,
    registries: createRegistries(),
  }).then(() => undefined, (e) => e);
  ok(error instanceof CapabilityBoundError, `expected a CapabilityBoundError, got ${error}`);
  return error.failures;
}

Deno.test("a contribution outside the bound fails the plugin atomically, naming axis and id", async () => {
  const { runtime, registries } = makeRuntime();
  runtime.register(makePlugin("narrow", [
    { kind: "tool", name: "reader", tools: [tool("read")] },
    { kind: "tool", name: "remover", tools: [tool("rm")] },
  ], { bound: { tools: exact("read") } }));
  await runtime.start();
  const state = runtime.state("narrow");
  strictEqual(state.status, "failed");
  match(
    state.status === "failed" ? state.reason : "",
    /tool 'rm'.*outside its bound.*exact \[read\]/,
  );
  strictEqual(registries.tool.list().length, 0, "the in-bound tool went too");
  const failure = runtime.info("narrow").failures[0];
  strictEqual(failure.rule, "bound");
  strictEqual(failure.axis, "tools");
  strictEqual(failure.id, "rm");
});

Deno.test("a plugin without a bound may contribute nothing", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("unbounded", [capabilityOf("prompt", "x")], { bound: undefined }));
  runtime.register(makePlugin("observer", [], { bound: undefined }));
  await runtime.start();
  strictEqual(runtime.state("unbounded").status, "failed");
  strictEqual(runtime.state("observer").status, "active");
});

Deno.test("dynamic tools within a namespace are admitted, a stray id is not", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("mcp", [
    { kind: "tool", name: "server", tools: [tool("mcp__gh__issues"), tool("mcp__gh__prs")] },
  ], { bound: { tools: namespace("mcp__gh__") } }));
  runtime.register(makePlugin("stray", [
    { kind: "tool", name: "server", tools: [tool("mcp__gl__issues")] },
  ], { bound: { tools: namespace("mcp__gh__") } }));
  await runtime.start();
  strictEqual(runtime.state("mcp").status, "active");
  strictEqual(runtime.state("stray").status, "failed");
});

Deno.test("a hook at a point outside the bound fails the plugin", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("hooks", [
    { kind: "hook", name: "late", point: "AfterTool", run: () => ({}) },
  ], { bound: { phaseHooks: ["StepStart"] } }));
  await runtime.start();
  const state = runtime.state("hooks");
  strictEqual(state.status, "failed");
  match(state.status === "failed" ? state.reason : "", /AfterTool/);
});

Deno.test("start activates dependencies first, whatever the registration order", async () => {
  const { runtime } = makeRuntime();
  const activated: string[] = [];
  const plugin = (id: string, requires?: Record<string, string>) =>
    makePlugin(id, [], {
      requires,
      initialize: () => {
        activated.push(id);
        return true;
      },
    });
  runtime.register(plugin("app", { ui: "*", base: "^1.0.0" }));
  runtime.register(plugin("ui", { base: "*" }));
  runtime.register(plugin("base"));
  runtime.register(plugin("loner"));
  await runtime.start();
  deepStrictEqual(activated, ["base", "ui", "app", "loner"]);
  deepStrictEqual(runtime.order(), ["base", "ui", "app", "loner"]);
});

Deno.test("a missing dependency, a version mismatch and a cycle each say why", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("orphan", [], { requires: { ghost: "*" } }));
  runtime.register(makePlugin("old", [], { version: "1.2.0" }));
  runtime.register(makePlugin("picky", [], { requires: { old: "^2.0.0" } }));
  runtime.register(makePlugin("a", [], { requires: { b: "*" } }));
  runtime.register(makePlugin("b", [], { requires: { a: "*" } }));
  await runtime.start();
  const reason = (id: string) => {
    const s = runtime.state(id);
    return `${s.status}: ${s.status === "failed" || s.status === "blocked" ? s.reason : ""}`;
  };
  match(reason("orphan"), /^blocked: .*'orphan' requires 'ghost'.*not installed/);
  match(reason("picky"), /^blocked: .*'picky' requires 'old' \^2\.0\.0.*1\.2\.0/);
  match(reason("a"), /^failed: .*a -> b -> a/);
  match(reason("b"), /^failed: .*cycle/);
  strictEqual(runtime.state("old").status, "active");
  deepStrictEqual(runtime.info("a").failures[0].path, ["a", "b", "a"]);
});

Deno.test("a plugin whose dependency is off is blocked, and comes up when the dependency does", async () => {
  const { runtime, registries } = makeRuntime();
  runtime.register(makePlugin("base", [capabilityOf("tool", "base")], { enabledByDefault: false }));
  runtime.register(makePlugin("app", [capabilityOf("tool", "app")], { requires: { base: "*" } }));
  await runtime.start();
  const state = runtime.state("app");
  strictEqual(state.status, "blocked");
  match(state.status === "blocked" ? state.reason : "", /requires 'base', which is off/);
  strictEqual(registries.tool.get("t_app"), undefined);
  const result = await runtime.setState("base", true);
  deepStrictEqual(result.unblocked, ["app"]);
  strictEqual(runtime.state("app").status, "active");
});

Deno.test("switching off a required plugin is refused naming its dependents, unless cascading", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("base"));
  runtime.register(makePlugin("mid", [], { requires: { base: "*" } }));
  runtime.register(makePlugin("top", [], { requires: { mid: "*" } }));
  await runtime.start();
  await rejects(
    () => runtime.setState("base", false),
    (error: unknown) => {
      ok(error instanceof PluginDependentsError);
      deepStrictEqual([...error.dependents].sort(), ["mid", "top"]);
      match(error.message, /cannot switch off 'base': active plugins require it/);
      return true;
    },
  );
  strictEqual(runtime.state("base").status, "active", "nothing changed");
  const shutdowns: string[] = [];
  runtime.events.subscribe("pluginDisabled", (e) => shutdowns.push(e.id));
  const result = await runtime.setState("base", false, { cascade: true });
  deepStrictEqual(result.cascaded, ["top", "mid"], "dependents go first, furthest first");
  deepStrictEqual(shutdowns, ["top", "mid", "base"]);
  strictEqual(runtime.state("mid").status, "blocked");
  await runtime.setState("base", true);
  deepStrictEqual(runtime.list().map((v) => v.state.status), ["active", "active", "active"]);
});

Deno.test("a config section is decoded with the plugin's zod schema; errors carry the path", async () => {
  const schema = z.object({ greeting: z.string().default("Hello"), times: z.number().int() });
  const seen: unknown[] = [];
  const plugin = () =>
    makePlugin("greeter", [], {
      config: schema,
      initialize: (ctx) => {
        seen.push(ctx.section());
        return true;
      },
    });
  const good = makeRuntime({ config: { plugins: { greeter: { times: 2 } } } });
  good.runtime.register(plugin());
  await good.runtime.start();
  deepStrictEqual(seen, [{ greeting: "Hello", times: 2 }], "defaults applied");

  const bad = makeRuntime({ config: { plugins: { greeter: { greeting: 42, times: 1.5 } } } });
  bad.runtime.register(plugin());
  await bad.runtime.start();
  const failures = bad.runtime.info("greeter").failures;
  deepStrictEqual(failures.map((f) => f.message), [
    "plugins.greeter.greeting: expected string, received number",
    "plugins.greeter.times: expected int, received number",
  ]);
  deepStrictEqual(failures[0].path, ["plugins", "greeter", "greeting"]);
  strictEqual(bad.runtime.state("greeter").status, "failed");
  strictEqual(seen.length, 1, "initialize never ran with a bad section");
});

Deno.test("attaching a config that no longer decodes is reported and the last good value stays", async () => {
  const diagnostics: Diagnostic[] = [];
  const { runtime } = makeRuntime({
    config: { plugins: { g: { greeting: "Hi" } } },
    onDiagnostic: (d) => diagnostics.push(d),
  });
  let section: () => unknown = () => undefined;
  runtime.register(makePlugin("g", [], {
    config: z.object({ greeting: z.string() }),
    initialize: (ctx) => {
      section = () => ctx.section();
      return true;
    },
  }));
  await runtime.start();
  runtime.attachConfig({ plugins: { g: { greeting: "Howdy" } } });
  deepStrictEqual(section(), { greeting: "Howdy" });
  runtime.attachConfig({ plugins: { g: { greeting: 7 } } });
  deepStrictEqual(section(), { greeting: "Howdy" });
  ok(diagnostics.some((d) => d.message === "plugins.g.greeting: expected string, received number"));
});

Deno.test("two plugins contributing one tool id: the second fails naming both", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("one", [{ kind: "tool", name: "x", tools: [tool("shared")] }]));
  runtime.register(makePlugin("two", [{ kind: "tool", name: "x", tools: [tool("shared")] }]));
  await runtime.start();
  const failure = runtime.info("two").failures[0];
  strictEqual(failure.rule, "duplicate-id");
  deepStrictEqual(failure.pluginIds, ["one", "two"]);
  strictEqual(failure.axis, "tools");
  strictEqual(failure.id, "shared");
});

Deno.test("a selection resolves into one environment with gates and guards in dependency order", async () => {
  const gate = (name: string) => ({
    kind: "gate" as const,
    name,
    check: () => ({ kind: "allow" as const }),
  });
  const guard = (name: string) => ({
    kind: "guard" as const,
    name,
    decide: () => ({ kind: "complete" as const }),
  });
  const available = [
    makePlugin("late", [gate("late_gate"), guard("late_guard")], { requires: { early: "*" } }),
    makePlugin("early", [gate("early_gate"), guard("early_guard"), capabilityOf("tool", "e")]),
    makePlugin("unused", [capabilityOf("tool", "unused")]),
  ];
  const { runtime, env } = await resolveSelection({
    available,
    pluginIds: ["late", "early"],
    registries: createRegistries(),
  });
  deepStrictEqual(env.plugins, ["early", "late"]);
  deepStrictEqual(env.gates.map((g) => g.name), ["early_gate", "late_gate"]);
  deepStrictEqual(env.guards.map((g) => g.name), ["early_guard", "late_guard"]);
  deepStrictEqual([...env.tools.keys()], ["t_e"], "an unselected plugin contributes nothing");
  ok(Object.isFrozen(env) && Object.isFrozen(env.gates));
  strictEqual(runtime.environment(), env, "the same snapshot until something changes");
  await runtime.stop();
});

Deno.test("a selection fails closed: unknown, repeated, bad config, out of bound, duplicate", async () => {
  const failures = await selectionFailures(
    [makePlugin("a"), makePlugin("b")],
    ["a", "a", "zzz"],
    { c: {} },
  );
  deepStrictEqual(failures.map((f) => f.rule), ["repeated-plugin", "unknown-plugin", "config"]);

  const bounded = await selectionFailures(
    [makePlugin("g", [{ kind: "guard", name: "judge", decide: () => ({ kind: "complete" }) }], {
      bound: { runEndGuards: exact("other") },
    })],
    ["g"],
  );
  strictEqual(bounded[0].rule, "bound");
  strictEqual(bounded[0].axis, "runEndGuards");

  const actions = await selectionFailures(
    [
      makePlugin("p", [capabilityOf("action", "deploy")]),
      makePlugin("q", [{ ...capabilityOf("action", "deploy"), name: "act_deploy" }]),
    ],
    ["p", "q"],
  );
  strictEqual(actions[0].rule, "duplicate-id");
  strictEqual(actions[0].axis, "actionKinds");
  deepStrictEqual(actions[0].pluginIds, ["p", "q"]);

  const configured = await selectionFailures(
    [makePlugin("c", [], { config: z.object({ level: z.enum(["low", "high"]) }) })],
    ["c"],
    { c: { level: "max" } },
  );
  strictEqual(configured[0].rule, "config");
  match(configured[0].message, /^plugins\.c\.level: /);
});

Deno.test("a failed selection leaves nothing running", async () => {
  const shut: string[] = [];
  const registries = createRegistries();
  const error = await resolveSelection({
    available: [
      makePlugin("ok", [capabilityOf("tool", "ok")], { shutdown: () => void shut.push("ok") }),
      makePlugin("bad", [capabilityOf("tool", "bad")], { bound: { tools: exact() } }),
    ],
    pluginIds: ["ok", "bad"],
    registries,
  }).catch((e) => e);
  ok(error instanceof CapabilityBoundError);
  deepStrictEqual(shut, ["ok"]);
  strictEqual(registries.tool.list().length, 0);
});

function livePlugin(id: string, face: { version: number; tools: Tool[] }): Plugin {
  return makePlugin(id, () => [{ kind: "tool", name: "server", tools: face.tools }], {
    bound: { tools: namespace(`${id}__`) },
    liveVersion: () => face.version,
  });
}

Deno.test("live refresh: a moved version re-resolves, replaces the tools and reports the diff", async () => {
  const { runtime } = makeRuntime();
  const face = { version: 1, tools: [tool("mcp__a"), tool("mcp__b")] };
  runtime.register(livePlugin("mcp", face));
  await runtime.start();
  const before = runtime.environment();
  deepStrictEqual(runtime.refresh().refreshed, [], "nothing moved");
  strictEqual(runtime.environment(), before);

  const changes: AmberEvents["environmentChanged"][] = [];
  runtime.events.subscribe("environmentChanged", (e) => changes.push(e));
  face.version = 2;
  face.tools = [tool("mcp__b", "new b"), tool("mcp__c")];
  deepStrictEqual(runtime.refresh().refreshed, ["mcp"]);
  const after = runtime.environment();
  ok(after !== before);
  deepStrictEqual([...after.tools.keys()], ["mcp__b", "mcp__c"]);
  deepStrictEqual([...before.tools.keys()], ["mcp__a", "mcp__b"], "the old snapshot is intact");
  strictEqual((await after.executeTool("mcp__b", {})).output, "new b");
  deepStrictEqual(changes.map(({ added, removed, changed }) => ({ added, removed, changed })), [
    { added: ["mcp__c"], removed: ["mcp__a"], changed: ["mcp__b"] },
  ]);
});

Deno.test("live refresh: a failing version keeps the previous environment and is reported once", async () => {
  const diagnostics: Diagnostic[] = [];
  const { runtime } = makeRuntime({ onDiagnostic: (d) => diagnostics.push(d) });
  const face = { version: 1, tools: [tool("mcp__a")] };
  runtime.register(livePlugin("mcp", face));
  runtime.register(makePlugin("other", [{ kind: "tool", name: "t", tools: [tool("mcp__taken")] }], {
    bound: { tools: any() },
  }));
  await runtime.start();
  const failedEvents: string[] = [];
  runtime.events.subscribe("refreshFailed", (e) => failedEvents.push(e.reason));

  face.version = 2;
  face.tools = [tool("mcp__a"), tool("outside")];
  deepStrictEqual(runtime.refresh().failed, ["mcp"]);
  deepStrictEqual(runtime.refresh().failed, [], "the same version is not retried");
  deepStrictEqual([...runtime.environment().tools.keys()].sort(), ["mcp__a", "mcp__taken"]);
  strictEqual(failedEvents.length, 1);
  match(failedEvents[0], /version 2: .*'outside'.*outside its bound/);

  face.version = 3;
  face.tools = [tool("mcp__taken")];
  deepStrictEqual(runtime.refresh().failed, ["mcp"], "a duplicate fails the refresh too");
  deepStrictEqual([...runtime.environment().tools.keys()].sort(), ["mcp__a", "mcp__taken"]);

  face.version = 4;
  face.tools = [tool("mcp__z")];
  deepStrictEqual(runtime.refresh().refreshed, ["mcp"]);
  deepStrictEqual([...runtime.environment().tools.keys()].sort(), ["mcp__taken", "mcp__z"]);
  strictEqual(diagnostics.filter((d) => d.where === "refresh").length, 2);
});
