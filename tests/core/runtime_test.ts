import { deepStrictEqual, match, ok, rejects, strictEqual, throws } from "node:assert/strict";
import {
  type AmberEvents,
  type Capability,
  CAPABILITY_KINDS,
  type Diagnostic,
  emptyStatusSnapshot,
  type PluginContext,
  PluginRegistrationError,
  UnknownPluginError,
} from "@amber/core";
import { pluginStatePath } from "../../core/plugin_state.ts";
import { capabilityOf, contents, makePlugin, makeRuntime, tempDir } from "../_helpers.ts";
import { type Fault, faultyRegistries } from "./_faulty_registries.ts";

Deno.test("registration never activates; start activates what is on", async () => {
  let initialized = 0;
  const { runtime, registries } = makeRuntime();
  runtime.register(makePlugin("a", [capabilityOf("tool", "a")], {
    initialize: () => {
      initialized++;
      return true;
    },
  }));
  runtime.register(makePlugin("b", [capabilityOf("tool", "b")], { enabledByDefault: false }));
  strictEqual(initialized, 0);
  strictEqual(runtime.state("a").status, "registered");
  strictEqual(registries.tool.list().length, 0);
  await runtime.start();
  strictEqual(initialized, 1);
  strictEqual(runtime.state("a").status, "active");
  strictEqual(runtime.state("b").status, "disabled");
  deepStrictEqual(registries.tool.list().map((t) => t.tool.name), ["t_a"]);
});

Deno.test("registration refuses bad ids, versions, reserved and duplicate ids", () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("ok_1"));
  const bad: [Parameters<typeof makePlugin>, RegExp][] = [
    [["Bad-Id"], /plugin id 'Bad-Id' is not a slug/],
    [["core"], /reserved/],
    [["ok_1"], /plugin id 'ok_1' is already registered/],
    [["v", [], { version: "1.0" }], /version '1.0' is not semver/],
    [["n", [], { name: " " }], /name is empty/],
  ];
  for (const [args, pattern] of bad) {
    throws(() => runtime.register(makePlugin(...args)), (error: unknown) => {
      ok(error instanceof PluginRegistrationError);
      match(error.message, pattern);
      return true;
    });
  }
  throws(() => runtime.state("nope"), (error: unknown) => {
    ok(error instanceof UnknownPluginError);
    strictEqual(error.message, "unknown plugin 'nope'; known plugins: ok_1");
    return true;
  });
});

Deno.test("disable removes every contribution of every kind", async () => {
  const { runtime, registries } = makeRuntime();
  runtime.register(makePlugin("all", CAPABILITY_KINDS.map((k) => capabilityOf(k, "all"))));
  runtime.register(makePlugin("other", [capabilityOf("tool", "other")]));
  await runtime.start();
  strictEqual(runtime.info("all").contributions.length, CAPABILITY_KINDS.length);
  for (const kind of CAPABILITY_KINDS) {
    ok(registries[kind].entries().some((e) => e.owner === "all"), `${kind} holds 'all'`);
  }
  await runtime.setState("all", false);
  for (const kind of CAPABILITY_KINDS) {
    deepStrictEqual(registries[kind].entries().filter((e) => e.owner === "all"), [], kind);
  }
  strictEqual(runtime.ledger.size("all"), 0);
  deepStrictEqual(
    contents(registries),
    ["tool:other:t_other"].concat(
      contents(registries).filter((c) => c.includes(":core:")),
    ).sort(),
  );
});

Deno.test("a declined capability keeps its plugin active", async () => {
  const { runtime, registries } = makeRuntime();
  runtime.register(makePlugin("gated", [
    { kind: "tool", name: "task", tools: (services) => services.host.subagents ? [] : [] },
    capabilityOf("prompt", "gated"),
  ]));
  await runtime.start();
  strictEqual(runtime.state("gated").status, "active");
  deepStrictEqual(runtime.info("gated").declined.map((d) => d.name), ["task"]);
  strictEqual(registries.prompt.entries().length, 1);
});

Deno.test("a failing capability unwinds what the plugin had installed and names the capability", async () => {
  const { runtime, registries } = makeRuntime();
  const before = contents(registries);
  let shutdowns = 0;
  const subscribed: string[] = [];
  runtime.register(makePlugin("broken", [
    capabilityOf("tool", "broken"),
    capabilityOf("status", "broken"),
    {
      kind: "tool",
      name: "bad_tool",
      tools: [{
        name: "no spaces allowed",
        description: "",
        parameters: {},
        execute: () => ({ ok: true, output: "" }),
      }],
    },
    capabilityOf("panel", "broken"),
  ], {
    initialize: (ctx) => {
      ctx.events.subscribe("turnStarted", () => subscribed.push("turn"));
      return true;
    },
    shutdown: () => {
      shutdowns++;
    },
  }));
  await runtime.start();
  const state = runtime.state("broken");
  strictEqual(state.status, "failed");
  match(state.status === "failed" ? state.reason : "", /capability 'bad_tool' \(tool\) failed/);
  deepStrictEqual(contents(registries), before);
  strictEqual(runtime.ledger.size("broken"), 0);
  strictEqual(shutdowns, 1, "a plugin that initialized gets to release its resources");
  runtime.events.publish("turnStarted", { prompt: "" });
  deepStrictEqual(subscribed, [], "its subscriptions went with it");
});

Deno.test("initialize returning false, throwing, rejecting or hanging fails the plugin and installs nothing", async () => {
  const { runtime, registries } = makeRuntime({ timeoutMs: 50 });
  const caps = (key: string) => [capabilityOf("tool", key)];
  runtime.register(makePlugin("no", caps("no"), { initialize: () => false }));
  runtime.register(makePlugin("throws", caps("throws"), {
    initialize: () => {
      throw new Error("cannot start");
    },
  }));
  runtime.register(makePlugin("rejects", caps("rejects"), {
    initialize: () => Promise.reject(new Error("async boom")),
  }));
  runtime.register(makePlugin("hangs", caps("hangs"), {
    initialize: () => new Promise<boolean>(() => {}),
  }));
  runtime.register(makePlugin("fine", caps("fine")));
  await runtime.start();
  const reason = (id: string) => {
    const state = runtime.state(id);
    return state.status === "failed" ? state.reason : state.status;
  };
  strictEqual(reason("no"), "initialize returned false");
  strictEqual(reason("throws"), "initialize failed: cannot start");
  strictEqual(reason("rejects"), "initialize failed: async boom");
  match(reason("hangs"), /did not finish within 50 ms/);
  strictEqual(reason("fine"), "active");
  deepStrictEqual(registries.tool.list().map((t) => t.owner), ["fine"]);
});

Deno.test("a duplicate tool is rejected naming both plugins, and the loser cannot remove the winner's", async () => {
  const { runtime, registries } = makeRuntime();
  const greet = (owner: string): Capability => ({
    kind: "tool",
    name: "greet",
    tools: [{
      name: "greet",
      description: owner,
      parameters: { type: "object" },
      execute: () => ({ ok: true, output: owner }),
    }],
  });
  runtime.register(makePlugin("first", [greet("first")]));
  runtime.register(makePlugin("second", [greet("second")]));
  await runtime.start();
  const state = runtime.state("second");
  strictEqual(state.status, "failed");
  const reason = state.status === "failed" ? state.reason : "";
  ok(reason.includes("'first'") && reason.includes("'second'"), reason);
  strictEqual(registries.tool.get("greet")?.owner, "first");
  strictEqual(registries.tool.remove("second", "greet"), false);
  await runtime.setState("second", false);
  strictEqual(registries.tool.get("greet")?.owner, "first");
  strictEqual((await registries.tool.execute("greet", {})).output, "first");
});

Deno.test("plugins see the config the host attaches after start", async () => {
  const { runtime } = makeRuntime({ config: { plugins: { reader: { word: "startup" } } } });
  let context: PluginContext | undefined;
  runtime.register(makePlugin("reader", [], {
    initialize: (ctx) => {
      context = ctx;
      return true;
    },
  }));
  await runtime.start();
  strictEqual((context!.section() as { word: string }).word, "startup");
  runtime.attachConfig({ model: "live-model", plugins: { reader: { word: "live" } } });
  strictEqual(context!.config().model, "live-model");
  strictEqual((context!.section() as { word: string }).word, "live");
});

Deno.test("throwing tick, shutdown, render, handler, event handler and tool are all contained", async () => {
  const diagnostics: Diagnostic[] = [];
  const { runtime, registries } = makeRuntime({ onDiagnostic: (d) => diagnostics.push(d) });
  const boom = (where: string) => () => {
    throw new Error(`${where} boom`);
  };
  runtime.register(makePlugin("chaos", [
    {
      kind: "tool",
      name: "bad",
      tools: [{ name: "bad", description: "", parameters: {}, execute: boom("tool") }],
    },
    { kind: "status", name: "bad_segment", priority: 1, dropPriority: 1, render: boom("render") },
    { kind: "prompt", name: "bad_block", priority: 1, render: boom("block") },
    { kind: "panel", name: "bad_panel", id: "bad_panel", title: "Bad", lines: boom("lines") },
    {
      kind: "command",
      name: "bad_cmd",
      root: "chaos",
      help: "",
      subtree: { go: {} },
      handlers: { go: boom("handler") },
    },
  ], {
    initialize: (ctx) => {
      ctx.events.subscribe("turnEnded", boom("event"));
      return true;
    },
    tick: boom("tick"),
    shutdown: boom("shutdown"),
  }));
  await runtime.start();
  strictEqual(runtime.state("chaos").status, "active");
  runtime.tick();
  runtime.tick();
  runtime.events.publish("turnEnded", { cancelled: false });
  const tool = await registries.tool.execute("bad", {});
  strictEqual(tool.ok, false);
  match(tool.error ?? "", /tool boom/);
  strictEqual(registries.status.compose(80, emptyStatusSnapshot()).segments.length, 0);
  strictEqual(registries.prompt.assemble([]).messages.length, 0);
  match(registries.panel.render("bad_panel", 40)?.[0] ?? "", /lines boom/);
  const command = await registries.command.dispatch("chaos", ["go"], "");
  strictEqual(command.ok, false);
  await runtime.setState("chaos", false);
  strictEqual(runtime.state("chaos").status, "disabled");
  const where = diagnostics.map((d) => d.where);
  ok(where.includes("tick"), where.join());
  strictEqual(where.filter((w) => w === "tick").length, 1, "a failing tick is reported once");
  ok(where.includes("event turnEnded"), where.join());
  ok(where.includes("shutdown"), where.join());
});

Deno.test("subscriptions made through the context are ledgered and end with the plugin", async () => {
  const { runtime } = makeRuntime();
  const seen: string[] = [];
  let context: PluginContext | undefined;
  runtime.register(makePlugin("watch", [], {
    initialize: (ctx) => {
      context = ctx;
      ctx.events.subscribe("turnStarted", (e) => seen.push(e.prompt));
      ctx.events.intercept("toolRequested", (e) => e.name !== "forbidden");
      return true;
    },
  }));
  await runtime.start();
  deepStrictEqual(runtime.info("watch").contributions.map((c) => c.name), [
    "event:turnStarted",
    "event:toolRequested",
  ]);
  runtime.events.publish("turnStarted", { prompt: "one" });
  const request: AmberEvents["toolRequested"] = { callId: "1", name: "forbidden", args: {} };
  strictEqual(runtime.events.publish("toolRequested", request), false);
  await runtime.setState("watch", false);
  runtime.events.publish("turnStarted", { prompt: "two" });
  strictEqual(runtime.events.publish("toolRequested", request), true);
  deepStrictEqual(seen, ["one"]);
  strictEqual(runtime.events.count("turnStarted"), 0);
  context!.events.subscribe("turnStarted", (e) => seen.push(e.prompt));
  runtime.events.publish("turnStarted", { prompt: "three" });
  deepStrictEqual(seen, ["one"], "a stale context cannot subscribe");
  strictEqual(runtime.ledger.size("watch"), 0);
});

Deno.test("a plugin unsubscribing itself leaves the ledger", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("once", [], {
    initialize: (ctx) => {
      const sub = ctx.events.subscribe("turnStarted", () => sub.unsubscribe());
      return true;
    },
  }));
  await runtime.start();
  strictEqual(runtime.ledger.size("once"), 1);
  runtime.events.publish("turnStarted", { prompt: "" });
  strictEqual(runtime.ledger.size("once"), 0);
});

Deno.test("setState persists plugin.conf and a restart reproduces the same harness", async () => {
  await using tmp = await tempDir();
  const plugins = () => [
    makePlugin("a", [capabilityOf("tool", "a"), capabilityOf("command", "a")]),
    makePlugin("b", [capabilityOf("status", "b"), capabilityOf("panel", "b")]),
    makePlugin("c", [capabilityOf("prompt", "c")], { enabledByDefault: false }),
  ];
  const first = makeRuntime({ configDir: tmp.dir });
  plugins().forEach((p) => first.runtime.register(p));
  await first.runtime.start();
  const written = await first.runtime.setState("b", false);
  strictEqual(written.path, pluginStatePath(tmp.dir, "b"));
  await first.runtime.setState("c", true);
  match(await Deno.readTextFile(pluginStatePath(tmp.dir, "b")), /^enabled = false$/m);
  const firstContents = contents(first.registries);
  await first.runtime.stop();

  const second = makeRuntime({ configDir: tmp.dir });
  plugins().forEach((p) => second.runtime.register(p));
  await second.runtime.start();
  deepStrictEqual(contents(second.registries), firstContents);
  deepStrictEqual(second.runtime.list().map((v) => v.state.status), [
    "active",
    "disabled",
    "active",
  ]);
});

Deno.test("a corrupt plugin.conf is reported with its path, the default applies, the file stays", async () => {
  await using tmp = await tempDir();
  const path = pluginStatePath(tmp.dir, "a");
  await Deno.mkdir(path.replace(/plugin\.conf$/, ""), { recursive: true });
  await Deno.writeTextFile(path, "enabled = perhaps\n");
  const diagnostics: Diagnostic[] = [];
  const { runtime } = makeRuntime({ configDir: tmp.dir, onDiagnostic: (d) => diagnostics.push(d) });
  runtime.register(makePlugin("a", [capabilityOf("tool", "a")]));
  await runtime.start();
  strictEqual(runtime.state("a").status, "active");
  strictEqual(diagnostics.length, 1);
  strictEqual(diagnostics[0].where, "plugin.conf");
  ok(diagnostics[0].message.startsWith(`${path}:1:`), diagnostics[0].message);
  strictEqual(await Deno.readTextFile(path), "enabled = perhaps\n");
});

Deno.test("many plugins' states read at once: each its own, corrupt ones said in registration order", async () => {
  await using tmp = await tempDir();
  // 70 plugins (more than one batch of reads): every third off on disk, two files corrupt.
  const ids = Array.from({ length: 70 }, (_, i) => `p${String(i).padStart(2, "0")}`);
  for (const [i, id] of ids.entries()) {
    if (i % 3 !== 0 && i !== 50 && i !== 7) continue;
    const path = pluginStatePath(tmp.dir, id);
    await Deno.mkdir(path.replace(/plugin\.conf$/, ""), { recursive: true });
    await Deno.writeTextFile(path, i === 50 || i === 7 ? "enabled = maybe\n" : "enabled = false\n");
  }
  const diagnostics: Diagnostic[] = [];
  const { runtime } = makeRuntime({ configDir: tmp.dir, onDiagnostic: (d) => diagnostics.push(d) });
  for (const id of ids) runtime.register(makePlugin(id, [capabilityOf("tool", id)]));
  await runtime.start();
  for (const [i, id] of ids.entries()) {
    strictEqual(runtime.state(id).status, i % 3 === 0 ? "disabled" : "active", id);
  }
  deepStrictEqual(diagnostics.map((d) => d.pluginId), ["p07", "p50"]);
});

Deno.test("plugin states are read from the plugins/ folder's listing: a plugin without a folder takes its default", async () => {
  await using tmp = await tempDir();
  const off = pluginStatePath(tmp.dir, "off");
  await Deno.mkdir(off.replace(/plugin\.conf$/, ""), { recursive: true });
  await Deno.writeTextFile(off, "enabled = false\n");
  // A folder with no plugin.conf in it, and one for a plugin not registered.
  await Deno.mkdir(`${tmp.dir}/plugins/empty`, { recursive: true });
  await Deno.mkdir(`${tmp.dir}/plugins/stranger`, { recursive: true });
  const diagnostics: Diagnostic[] = [];
  const { runtime } = makeRuntime({ configDir: tmp.dir, onDiagnostic: (d) => diagnostics.push(d) });
  for (const id of ["off", "empty", "absent"]) {
    runtime.register(makePlugin(id, [capabilityOf("tool", id)]));
  }
  const quiet = makePlugin("quiet", [capabilityOf("tool", "quiet")]);
  runtime.register({ ...quiet, enabledByDefault: false });
  await runtime.start();
  deepStrictEqual(
    ["off", "empty", "absent", "quiet"].map((id) => runtime.state(id).status),
    ["disabled", "active", "active", "disabled"],
  );
  deepStrictEqual(diagnostics, []);
});

Deno.test("a plugins/ folder that cannot be listed: every plugin's file is read, and what is wrong said per plugin", async () => {
  await using tmp = await tempDir();
  // A file where the folder should be: listing it fails, and so does reading plugins/a/plugin.conf.
  await Deno.writeTextFile(`${tmp.dir}/plugins`, "not a folder\n");
  const diagnostics: Diagnostic[] = [];
  const { runtime } = makeRuntime({ configDir: tmp.dir, onDiagnostic: (d) => diagnostics.push(d) });
  runtime.register(makePlugin("a", [capabilityOf("tool", "a")]));
  runtime.register(makePlugin("b", [capabilityOf("tool", "b")]));
  await runtime.start();
  deepStrictEqual([runtime.state("a").status, runtime.state("b").status], ["active", "active"]);
  deepStrictEqual(diagnostics.map((d) => [d.pluginId, d.where]), [
    ["a", "plugin.conf"],
    ["b", "plugin.conf"],
  ]);
  match(diagnostics[0].message, /cannot read/);
});

Deno.test("concurrent setState calls never tear the file and the last call wins", async () => {
  await using tmp = await tempDir();
  const { runtime, registries } = makeRuntime({ configDir: tmp.dir });
  runtime.register(makePlugin("flip", [capabilityOf("tool", "flip")]));
  await runtime.start();
  const calls = Array.from({ length: 40 }, (_, i) => runtime.setState("flip", i % 3 === 0));
  const results = await Promise.all(calls);
  strictEqual(results.length, 40);
  const last = 39 % 3 === 0;
  const text = await Deno.readTextFile(pluginStatePath(tmp.dir, "flip"));
  match(text, new RegExp(`^enabled = ${last}$`, "m"));
  strictEqual(runtime.state("flip").status, last ? "active" : "disabled");
  strictEqual(registries.tool.list().length, last ? 1 : 0);
  const leftovers = [...Deno.readDirSync(`${tmp.dir}/plugins/flip`)].map((e) => e.name);
  deepStrictEqual(leftovers, ["plugin.conf"]);
});

Deno.test("setState on an unknown plugin is an error listing the known ones", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("a"));
  await rejects(async () => await runtime.setState("zzz", true), /known plugins: a/);
});

Deno.test("a capability of an unknown kind or a repeated name fails the plugin clearly", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("weird", [{ kind: "setting", name: "x" } as unknown as Capability]));
  runtime.register(makePlugin("twice", [capabilityOf("tool", "x"), {
    ...capabilityOf("prompt", "x"),
    name: "tool_x",
  } as Capability]));
  await runtime.start();
  const reason = (id: string) => {
    const s = runtime.state(id);
    return s.status === "failed" ? s.reason : s.status;
  };
  match(reason("weird"), /capability 'x' has unknown kind 'setting'/);
  match(reason("twice"), /capability name 'tool_x' is used twice/);
});

Deno.test("stop deactivates everything without touching state files", async () => {
  await using tmp = await tempDir();
  const { runtime, registries } = makeRuntime({ configDir: tmp.dir });
  runtime.register(makePlugin("a", [capabilityOf("tool", "a")]));
  await runtime.start();
  await runtime.stop();
  strictEqual(registries.tool.list().length, 0);
  strictEqual(runtime.state("a").status, "registered");
  await rejects(() => Deno.stat(pluginStatePath(tmp.dir, "a")), Deno.errors.NotFound);
});

// ---- the safety net: what a misbehaving registry kept is swept ----

Deno.test("a failed activation sweeps what a registry kept: a leaky install and a take-back that threw", async () => {
  const diagnostics: Diagnostic[] = [];
  const faults = new Map<string, Fault>([
    ["tool_kept", { remove: "throws", first: false }],
    ["p_leak", { install: "throws", leaky: true }],
  ]);
  const registries = faultyRegistries(faults);
  const { runtime } = makeRuntime({ registries, onDiagnostic: (d) => diagnostics.push(d) });
  const before = contents(registries);
  runtime.register(makePlugin("leaky", [capabilityOf("tool", "kept"), {
    kind: "prompt",
    name: "p_leak",
    priority: 400,
    render: () => "leak",
  }]));
  await runtime.start();
  const state = runtime.state("leaky");
  strictEqual(state.status, "failed");
  match(state.status === "failed" ? state.reason : "", /capability 'p_leak' \(prompt\) failed/);
  deepStrictEqual(contents(registries), before, "nothing of the failed plugin is left");
  strictEqual(registries.tool.get("t_kept"), undefined);
  strictEqual(registries.prompt.assemble([]).messages.length, 0);
  const where = diagnostics.map((d) => `${d.where}: ${d.message}`);
  ok(where.includes("remove of 'tool_kept': remove of 'tool_kept' broke"), where.join("\n"));
  ok(where.some((w) => /^unwind: purged .*t_kept/.test(w)), where.join("\n"));
});

// A started runtime over faulty registries whose one plugin, "live", has just moved from the
// tool "old" to the tool "new": the next refresh installs the new set.
async function startedLive(faults: Map<string, Fault>) {
  const registries = faultyRegistries(faults);
  const { runtime } = makeRuntime({ registries });
  const face = { version: 0 };
  runtime.register(
    makePlugin("live", () => [capabilityOf("tool", face.version === 0 ? "old" : "new")], {
      liveVersion: () => face.version,
    }),
  );
  await runtime.start();
  face.version = 1;
  return { registries, runtime };
}

Deno.test("a live refresh whose old contribution's remove throws leaves no residue and installs the new set", async () => {
  const faults = new Map<string, Fault>([["tool_old", { remove: "throws", first: false }]]);
  const { registries, runtime } = await startedLive(faults);
  deepStrictEqual(runtime.refresh().refreshed, ["live"]);
  deepStrictEqual([...runtime.environment().tools.keys()], ["t_new"]);
  deepStrictEqual(registries.tool.entries(), [{ id: "t_new", owner: "live" }]);
  await runtime.stop();
  deepStrictEqual(registries.tool.entries(), []);
});

Deno.test("a live refresh whose new install leaks keeps the previous environment, and nothing of the new set", async () => {
  const faults = new Map<string, Fault>([["tool_new", { install: "throws", leaky: true }]]);
  const { registries, runtime } = await startedLive(faults);
  deepStrictEqual(runtime.refresh().failed, ["live"]);
  deepStrictEqual(registries.tool.entries(), [{ id: "t_old", owner: "live" }]);
  deepStrictEqual(runtime.ledger.contributions("live").map((c) => c.name), ["tool_old"]);
  await runtime.stop();
  deepStrictEqual(registries.tool.entries(), []);
});
