// The host's stand-in for a sandboxed plugin (issue 12), through a real PluginRuntime over the
// real registries: every capability kind works across the protocol, only subscribed events
// cross, a switch-off removes everything and ends the process, a process that dies or writes
// garbage fails the plugin alone, and a deadline kills. The plugin "process" is in memory
// (`_memory_connection.ts`: the plugin's own side, `servePlugin`, on the other end); the last
// test runs a real one.

import { deepStrictEqual, match, ok, rejects, strictEqual } from "node:assert/strict";
import {
  type AmberConfig,
  type Capability,
  DeadlineError,
  emptyStatusSnapshot,
  type HostServices,
  type Plugin,
  type PluginContext,
  type PluginRuntime,
  type Registries,
  type ToolResult,
  type UiService,
} from "@amber/core";
import { type ApprovalRequest, runAgent, type RunEvent } from "@amber/core/kernel";
import {
  loadSandboxedPlugin,
  PluginEndedError,
  type SandboxedPlugin,
  SandboxedPluginError,
  type SandboxFault,
} from "@amber/core/sandbox";
import { contents, makePlugin, makeRuntime, OPEN_BOUND } from "../_helpers.ts";
import { runOptions, ScriptedModel, toolResults } from "./_kernel_script.ts";
import { type MemoryConnection, memoryProcesses } from "./_memory_connection.ts";

const SPAWN = {
  specifier: "file:///plugins/box/mod.ts",
  pluginId: "box",
  grant: {},
  workspace: "/ws",
  dataDir: "/cfg/plugins/box/data",
  readFolders: [],
  hostVersion: "1.0.0",
  importTimeoutMs: 2_000,
};

const OBJECT = { type: "object" } as const;

function result(output: string): ToolResult {
  return { ok: true, output };
}

// The plugin as its author writes it: one of every capability kind.
function boxPlugin(overrides: Partial<Plugin> = {}): Plugin {
  let context: PluginContext | undefined;
  const seen: string[] = [];
  let ticks = 0;
  let cursor = 0;
  let steered = false;
  let version = 1;
  const capabilities = (): Capability[] => [
    {
      kind: "tool",
      name: "box_tools",
      tools: [
        {
          name: "echo",
          description: "Echoes its text.",
          parameters: {
            type: "object",
            properties: { text: { type: "string" } },
            required: ["text"],
          },
          verb: "echoing",
          readOnly: true,
          requiresApproval: (args) => (args as { text?: unknown }).text === "rm",
          execute: (args, call) => {
            call.progress?.("half way");
            return result(`echo ${(args as { text: string }).text}`);
          },
        },
        {
          name: "seen",
          description: "The events it saw.",
          parameters: OBJECT,
          execute: () => result(seen.join(",")),
        },
        {
          name: "section",
          description: "Its section.",
          parameters: OBJECT,
          execute: () => result(JSON.stringify(context?.section())),
        },
        {
          name: "others",
          description: "The tools it sees.",
          parameters: OBJECT,
          execute: () => result(context!.tools.list().map((e) => e.tool.name).join(",")),
        },
        {
          name: "hang",
          description: "Never answers.",
          parameters: OBJECT,
          execute: () => new Promise<ToolResult>(() => {}),
        },
        {
          name: "wait",
          description: "Waits for its cancel.",
          parameters: OBJECT,
          execute: (_, call) =>
            new Promise<ToolResult>((resolve) =>
              call.signal.addEventListener(
                "abort",
                () => resolve({ ok: false, output: "", error: "stopped by its cancel" }),
              )
            ),
        },
        {
          name: "later",
          description: "Scheduled by the gate.",
          parameters: OBJECT,
          execute: () => result("ran now"),
        },
        ...(version > 1
          ? [{
            name: "grown",
            description: "Appears at version 2.",
            parameters: OBJECT,
            execute: () => result("grown"),
          }]
          : []),
        {
          name: "grow",
          description: "Moves the live version.",
          parameters: OBJECT,
          execute: () => (version++, result(`version ${version}`)),
        },
      ],
    },
    { kind: "prompt", name: "box_prompt", priority: 400, render: () => `ticks ${ticks}` },
    {
      kind: "status",
      name: "box_model",
      priority: 10,
      dropPriority: 10,
      render: (snapshot) => ({
        text: snapshot.model === "" ? "no model" : `model ${snapshot.model}`,
        tone: "accent",
      }),
    },
    {
      kind: "panel",
      name: "box_panel",
      id: "box_panel",
      title: "Box",
      lines: (width) => [`width ${width} cursor ${cursor}`],
      onKey: (key) => key === "j" && (cursor++, true),
    },
    {
      kind: "command",
      name: "box_command",
      root: "box",
      help: "Box things.",
      subtree: { hello: { help: "Says hello." }, quiet: { help: "Inert." } },
      handlers: { hello: (arg) => `hello ${arg}` },
    },
    {
      kind: "hook",
      name: "box_hook",
      point: "AfterTool",
      run: (input) => ({
        state: [{
          op: "set",
          key: "box_calls",
          value: ((input.state.get("box_calls") as number) ?? 0) + 1,
        }],
      }),
    },
    {
      kind: "gate",
      name: "box_gate",
      check: (input) => {
        if (input.call.name === "later") {
          return { kind: "schedule", correlationId: "c1", actionKind: "box_action" };
        }
        return (input.args as { text?: unknown }).text === "forbidden"
          ? { kind: "block", reason: "box says no" }
          : { kind: "allow" };
      },
    },
    {
      kind: "guard",
      name: "box_guard",
      decide: (input) => {
        if (steered) return { kind: "complete" };
        steered = true;
        return { kind: "steer", feedback: `calls so far: ${input.state.get("box_calls")}` };
      },
    },
    {
      kind: "action",
      name: "box_action",
      run: (input) => Promise.resolve(result(`scheduled ${input.correlationId} by box`)),
    },
    { kind: "state", name: "box_calls", initial: 0 },
    { kind: "wallet", name: "box_wallet", provider: "boxai", fetch: () => Promise.resolve(12.34) },
    {
      kind: "allowance",
      name: "box_allowance",
      provider: "boxai",
      fetch: () => Promise.resolve({ windows: [{ label: "5h", percentUsed: 42 }] }),
    },
    {
      kind: "provider",
      name: "boxai",
      flavor: "openai",
      presets: [{
        name: "boxai",
        flavor: "openai",
        baseUrl: "http://127.0.0.1:9/v1",
        defaultModel: "box-1",
        requiresKey: false,
      }],
    },
  ];
  return {
    id: "box",
    version: "1.0.0",
    name: "Box",
    description: "A plugin with one of everything.",
    bound: OPEN_BOUND,
    initialize(ctx) {
      context = ctx;
      ctx.events.subscribe("turnEnded", (event) => seen.push(`turnEnded:${event.cancelled}`));
      return true;
    },
    shutdown() {},
    tick() {
      ticks++;
    },
    liveVersion: () => version,
    capabilities,
    ...overrides,
  };
}

interface Scene extends AsyncDisposable {
  readonly runtime: PluginRuntime;
  readonly registries: Registries;
  readonly sandboxed: SandboxedPlugin;
  readonly made: MemoryConnection[];
  readonly faults: SandboxFault[];
  readonly diagnostics: string[];
}

// The sandboxed box beside an in-process plugin "other" with a tool of its own, started.
async function scene(
  options: {
    readonly plugin?: () => Plugin;
    readonly config?: AmberConfig;
    readonly others?: readonly Plugin[];
    readonly host?: HostServices;
  } = {},
): Promise<Scene> {
  const processes = memoryProcesses(options.plugin ?? (() => boxPlugin()));
  const faults: SandboxFault[] = [];
  const diagnostics: string[] = [];
  const { runtime, registries } = makeRuntime({
    config: options.config ?? { plugins: {} },
    onDiagnostic: (d) => diagnostics.push(`${d.pluginId}: ${d.where}: ${d.message}`),
    ...(options.host === undefined ? {} : { host: options.host }),
  });
  const sandboxed = await loadSandboxedPlugin({
    ...SPAWN,
    connect: processes.connect,
    onFault: (fault) => {
      faults.push(fault);
      runtime.fail(fault.pluginId, fault.where, fault.message);
    },
  });
  runtime.register(sandboxed.plugin);
  runtime.register(makePlugin("other", [{
    kind: "tool",
    name: "other_tools",
    tools: [{
      name: "ping",
      description: "Pings.",
      parameters: OBJECT,
      execute: () => result("pong"),
    }],
  }]));
  for (const plugin of options.others ?? []) runtime.register(plugin);
  await runtime.start();
  return {
    runtime,
    registries,
    sandboxed,
    made: processes.made,
    faults,
    diagnostics,
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await sandboxed.close();
    },
  };
}

// A round trip to the plugin process: everything it pushed before answering has arrived.
async function roundTrip(registries: Registries): Promise<void> {
  const outcome = await registries.command.dispatch("box", ["hello"], "x");
  deepStrictEqual(outcome, { ok: true, text: "hello x" });
}

// Lets the process's verdict reach the runtime, and the runtime act on it.
async function verdictIn(connection: MemoryConnection, runtime: PluginRuntime): Promise<void> {
  await connection.ended;
  await Promise.resolve();
  await runtime.settled();
}

Deno.test("the stand-in carries the manifest: the runtime validates and activates it", async () => {
  await using s = await scene();
  const plugin = s.sandboxed.plugin;
  deepStrictEqual(
    [plugin.id, plugin.version, plugin.name, plugin.description],
    ["box", "1.0.0", "Box", "A plugin with one of everything."],
  );
  strictEqual(s.sandboxed.manifest.live, true);
  strictEqual(typeof plugin.liveVersion, "function");
  strictEqual(typeof plugin.tick, "function");
  strictEqual(s.runtime.state("box").status, "active");
  deepStrictEqual(s.made[0].sent.slice(0, 2), ["describe", "initialize"]);
});

Deno.test("a tool runs in the process: result, progress, approval asked there", async () => {
  await using s = await scene();
  const progress: string[] = [];
  const signal = new AbortController().signal;
  const echoed = await s.registries.tool.execute("echo", { text: "hi" }, {
    signal,
    progress: (message) => progress.push(message),
  });
  deepStrictEqual(echoed, { ok: true, output: "echo hi" });
  deepStrictEqual(progress, ["half way"]);
  const echo = s.registries.tool.get("echo")!.tool;
  deepStrictEqual([echo.verb, echo.readOnly], ["echoing", true]);
  strictEqual(await echo.requiresApproval?.({ text: "rm" }), true);
  strictEqual(await echo.requiresApproval?.({ text: "ls" }), false);
  strictEqual(s.registries.tool.get("seen")!.tool.requiresApproval, undefined);
  const refused = await s.registries.tool.execute("echo", {});
  strictEqual(refused.ok, false, "the registry validates against the schema that crossed");
});

Deno.test("the kernel's cancel crosses to the tool in the process", async () => {
  await using s = await scene();
  const controller = new AbortController();
  const running = s.registries.tool.execute("wait", {}, { signal: controller.signal });
  setTimeout(() => controller.abort(), 10);
  deepStrictEqual(await running, { ok: false, output: "", error: "stopped by its cancel" });
  ok(s.made[0].sent.includes("$/cancelRequest"));
  strictEqual(s.runtime.state("box").status, "active");
});

Deno.test("prompt, status and panel render what the process last pushed", async () => {
  await using s = await scene();
  deepStrictEqual(s.registries.prompt.assemble([]).messages.map((m) => m.content), ["ticks 0"]);
  s.runtime.tick();
  await roundTrip(s.registries);
  deepStrictEqual(s.registries.prompt.assemble([]).messages.map((m) => m.content), ["ticks 1"]);

  const snapshot = { ...emptyStatusSnapshot(), model: "gpt-5" };
  strictEqual(s.registries.status.compose(80, snapshot).text, "no model", "the last push");
  await roundTrip(s.registries);
  strictEqual(s.registries.status.compose(80, snapshot).text, "model gpt-5");
  s.registries.status.compose(80, { ...snapshot });
  const snapshots = s.made[0].notified.filter((n) => n.method === "status.snapshot");
  strictEqual(snapshots.length, 1, "an equal snapshot is not sent again");

  deepStrictEqual(s.registries.panel.render("box_panel", 80), ["width 80 cursor 0"]);
  deepStrictEqual(s.registries.panel.render("box_panel", 40), ["width 80 cursor 0"]);
  await roundTrip(s.registries);
  deepStrictEqual(s.registries.panel.render("box_panel", 40), ["width 40 cursor 0"]);
  strictEqual(s.registries.panel.key("box_panel", "j"), true);
  await roundTrip(s.registries);
  deepStrictEqual(s.registries.panel.render("box_panel", 40), ["width 40 cursor 1"]);
  const widths = s.made[0].notified.filter((n) => n.method === "panel.width");
  deepStrictEqual(widths.map((n) => n.params), [{ id: "box_panel", width: 40 }]);
});

Deno.test("commands dispatch into the process; an inert leaf stays inert", async () => {
  await using s = await scene();
  deepStrictEqual(await s.registries.command.dispatch("box", ["hello"], "amber"), {
    ok: true,
    text: "hello amber",
  });
  const inert = await s.registries.command.dispatch("box", ["quiet"], "");
  strictEqual(inert.ok, false);
  deepStrictEqual(s.made[0].sent.filter((m) => m === "command.run").length, 1);
});

Deno.test("wallet, allowance and provider presets come from the process", async () => {
  await using s = await scene();
  const settings = { provider: "boxai", baseUrl: "http://127.0.0.1:9/v1" };
  await s.registries.wallet.refresh(settings);
  strictEqual(s.registries.wallet.readout(settings), "$12.34");
  await s.registries.allowance.refresh(settings);
  strictEqual(s.registries.allowance.readout(settings), "5h 42%");
  strictEqual(s.registries.provider.preset("boxai")?.defaultModel, "box-1");
  strictEqual(s.registries.provider.preset("boxai")?.owner, "box");
});

Deno.test("a run goes through the process's gate, hook, guard, action and approval", async () => {
  await using s = await scene();
  const model = new ScriptedModel([
    {
      calls: [
        { name: "echo", args: { text: "forbidden" } },
        { name: "echo", args: { text: "hi" } },
        { name: "echo", args: { text: "rm" } },
        { name: "later" },
      ],
    },
    { text: "done" },
    { text: "really done" },
  ]);
  const asked: ApprovalRequest[] = [];
  const events: RunEvent[] = [];
  const run = await runAgent({
    ...runOptions(s.runtime, model),
    approval: "ask",
    ask: (request) => (asked.push(request), Promise.resolve("once")),
    onEvent: (event) => events.push(event),
  });
  strictEqual(run.cause.kind, "completed");
  const results = toolResults(run.messages);
  match(results[0], /box says no/);
  deepStrictEqual(results.slice(1), ["echo hi", "echo rm", "scheduled c1 by box"]);
  deepStrictEqual(asked.map((a) => a.args), [{ text: "rm" }], "the process said which to ask");
  const steer = events.find((e) => e.type === "steer");
  // Every AfterTool hook of the step saw the state of the last commit (0) and set it to 1.
  deepStrictEqual(steer, { type: "steer", guard: "box_guard", feedback: "calls so far: 1" });
  const progress = events.filter((e) => e.type === "toolProgress");
  deepStrictEqual(progress.map((e) => e.type === "toolProgress" && e.message), [
    "half way",
    "half way",
  ]);
});

Deno.test("only the event types the plugin subscribed to cross", async () => {
  await using s = await scene();
  s.runtime.events.publish("turnStarted", { prompt: "secret prompt" });
  s.runtime.events.publish("turnEnded", { cancelled: false });
  s.runtime.events.publish("errorRaised", { kind: "x", message: "y", retryable: false });
  const seen = await s.registries.tool.execute("seen", {});
  strictEqual(seen.output, "turnEnded:false");
  const crossed = s.made[0].notified.filter((n) => n.method === "event");
  deepStrictEqual(crossed.map((n) => (n.params as { type: string }).type), ["turnEnded"]);
  ok(!JSON.stringify(s.made[0].notified).includes("secret prompt"));
});

Deno.test("a changed configuration and other plugins' tools reach the process", async () => {
  await using s = await scene({
    config: { plugins: { box: { greeting: "hello" } } },
    others: [
      makePlugin("late", [{
        kind: "tool",
        name: "late_tools",
        tools: [{
          name: "late_tool",
          description: "L.",
          parameters: OBJECT,
          execute: () => result(""),
        }],
      }], { enabledByDefault: false }),
    ],
  });
  strictEqual((await s.registries.tool.execute("section", {})).output, '{"greeting":"hello"}');
  s.runtime.attachConfig({ plugins: { box: { greeting: "hi" } } });
  strictEqual((await s.registries.tool.execute("section", {})).output, '{"greeting":"hi"}');
  ok(!(await s.registries.tool.execute("others", {})).output.includes("late_tool"));
  await s.runtime.setState("late", true);
  ok((await s.registries.tool.execute("others", {})).output.includes("late_tool"));
});

Deno.test("a live plugin's change is picked up at the next refresh", async () => {
  await using s = await scene();
  strictEqual(s.registries.tool.get("grown"), undefined);
  strictEqual(s.sandboxed.plugin.liveVersion?.(), 1);
  strictEqual((await s.registries.tool.execute("grow", {})).output, "version 2");
  strictEqual(s.sandboxed.plugin.liveVersion?.(), 2);
  const report = s.runtime.refresh();
  deepStrictEqual(report.refreshed, ["box"]);
  strictEqual((await s.registries.tool.execute("grown", {})).output, "grown");
});

Deno.test("a switch-off removes everything and ends the process; on again restarts it", async () => {
  await using s = await scene();
  await s.runtime.setState("box", false);
  deepStrictEqual(contents(s.registries).filter((c) => c.includes(":box:")), []);
  deepStrictEqual(s.runtime.ledger.contributions("box"), []);
  const end = await s.made[0].ended;
  strictEqual(end.expected, true);
  ok(s.made[0].sent.includes("shutdown"));
  const before = s.made[0].notified.length;
  s.runtime.events.publish("turnEnded", { cancelled: true });
  strictEqual(s.made[0].notified.length, before, "nothing crosses to a stopped process");
  strictEqual(s.sandboxed.pid, undefined);
  deepStrictEqual(s.faults, [], "a switch-off is no fault");

  await s.runtime.setState("box", true);
  strictEqual(s.runtime.state("box").status, "active");
  strictEqual(s.made.length, 2, "a new process");
  deepStrictEqual(s.made[1].sent.slice(0, 2), ["describe", "initialize"]);
  strictEqual((await s.registries.tool.execute("echo", { text: "again" })).output, "echo again");
});

Deno.test("a process that dies fails its plugin alone, and later calls answer at once", async () => {
  await using s = await scene();
  const echo = s.registries.tool.get("echo")!;
  s.made[0].crash("its process exited with code 1: Error: boom");
  await verdictIn(s.made[0], s.runtime);
  deepStrictEqual(s.faults, [{
    pluginId: "box",
    where: "sandbox",
    message: "its process exited with code 1: Error: boom",
  }]);
  deepStrictEqual(s.runtime.state("box"), {
    status: "failed",
    reason: "sandbox: its process exited with code 1: Error: boom; " +
      "switch it back on with `/set plugin on box`",
  });
  deepStrictEqual(contents(s.registries).filter((c) => c.includes(":box:")), []);
  strictEqual(s.runtime.state("other").status, "active");
  deepStrictEqual(await s.registries.tool.execute("ping", {}), { ok: true, output: "pong" });
  const late = await s.registries.tool.executeEntry(echo, { text: "x" });
  strictEqual(late.ok, false);
  match(late.error!, /plugin 'box' is not running: its process exited with code 1: Error: boom/);
  await s.runtime.setState("box", true);
  strictEqual(s.runtime.state("box").status, "active", "switching it on starts a new process");
  strictEqual(s.made.length, 2);
});

Deno.test("garbage on the process's stdout fails the plugin with what it wrote", async () => {
  await using s = await scene();
  s.made[0].print("hello from a careless console.log");
  await verdictIn(s.made[0], s.runtime);
  const state = s.runtime.state("box");
  strictEqual(state.status, "failed");
  match(
    state.status === "failed" ? state.reason : "",
    /^sandbox: it wrote to stdout what is not the protocol: 'hello from a careless console.log'/,
  );
  strictEqual(s.runtime.state("other").status, "active");
});

Deno.test("a call past its deadline kills the process and fails the plugin", async () => {
  await using s = await scene({
    config: { plugins: {}, timeouts: { tool: 40, toolGrace: 20 } },
  });
  const hung = await s.registries.tool.execute("hang", {});
  strictEqual(hung.ok, false);
  match(hung.error!, /tool 'hang' of plugin 'box' failed: .*did not finish within 60 ms/);
  await verdictIn(s.made[0], s.runtime);
  const state = s.runtime.state("box");
  match(
    state.status === "failed" ? state.reason : "",
    /its process was killed: tool 'hang' of plugin 'box' did not answer within 60 ms/,
  );
  strictEqual(s.faults.length, 1);
});

Deno.test("an initialize past its deadline kills the process; the plugin fails", async () => {
  await using s = await scene({
    config: { plugins: {}, timeouts: { initialize: 50 } },
    plugin: () => boxPlugin({ initialize: () => new Promise<boolean>(() => {}) }),
  });
  const state = s.runtime.state("box");
  strictEqual(state.status, "failed");
  match(state.status === "failed" ? state.reason : "", /initialize did not finish within 50 ms/);
  match((await s.made[0].ended).reason, /killed/);
  deepStrictEqual(s.faults, [], "a failed activation is the runtime's to report, not a crash");
  strictEqual(s.sandboxed.pid, undefined);
});

Deno.test("an initialize that says no fails the plugin and ends the process", async () => {
  await using s = await scene({
    plugin: () => boxPlugin({ initialize: () => false }),
  });
  deepStrictEqual(s.runtime.state("box"), {
    status: "failed",
    reason: "initialize returned false",
  });
  strictEqual((await s.made[0].ended).expected, true, "the host stopped it");
});

Deno.test("a section the process cannot decode fails the plugin with the process's words", async () => {
  const config = {
    "~standard": {
      version: 1 as const,
      vendor: "test",
      validate: (value: unknown) =>
        typeof (value as { greeting?: unknown } | undefined)?.greeting === "string"
          ? { value }
          : { issues: [{ message: "expected a string", path: ["greeting"] }] },
    },
  };
  await using s = await scene({
    config: { plugins: { box: { greeting: 7 } } },
    plugin: () => boxPlugin({ config }),
  });
  const state = s.runtime.state("box");
  strictEqual(state.status, "failed");
  match(state.status === "failed" ? state.reason : "", /greeting/);
  strictEqual((await s.made[0].ended).expected, true, "the host stopped it");
});

Deno.test("loading refuses another plugin, a failed import, and an import past its deadline", async () => {
  const other = memoryProcesses(() => ({ ...boxPlugin(), id: "impostor" }));
  await rejects(
    loadSandboxedPlugin({ ...SPAWN, expectedId: "box", connect: other.connect }),
    (error) =>
      error instanceof SandboxedPluginError &&
      /describes plugin 'impostor', not 'box'/.test(error.message),
  );
  strictEqual((await other.made[0].ended).expected, true, "its process was stopped");

  const broken = memoryProcesses(() => Promise.reject(new SyntaxError("Unexpected token")));
  await rejects(
    loadSandboxedPlugin({ ...SPAWN, connect: broken.connect }),
    (error) => error instanceof SandboxedPluginError && /Unexpected token/.test(error.message),
  );

  const slow = memoryProcesses(() => new Promise(() => {}));
  await rejects(
    loadSandboxedPlugin({ ...SPAWN, importTimeoutMs: 30, connect: slow.connect }),
    (error) => error instanceof DeadlineError && /plugin 'box': import/.test(error.message),
  );
  match((await slow.made[0].ended).reason, /killed/);
});

Deno.test("a call to a plugin that was switched off names it and why", async () => {
  await using s = await scene();
  const echo = s.registries.tool.get("echo")!;
  await s.runtime.setState("box", false);
  const late = await s.registries.tool.executeEntry(echo, { text: "x" });
  match(late.error!, /plugin 'box' is not running: it was switched off/);
  ok(new PluginEndedError("box", "why").message.includes("plugin 'box' is not running: why"));
});

Deno.test("the plugin's questions and notices reach the host's UI", async () => {
  const notices: string[] = [];
  const questions: string[] = [];
  const ui: UiService = {
    interactive: true,
    askText: (question) => (questions.push(question), Promise.resolve("amber")),
    askSecret: () => Promise.resolve(undefined),
    choose: () => Promise.resolve(undefined),
    confirm: (question) => (questions.push(question), Promise.resolve(true)),
    notify: (message, tone) => notices.push(`${tone}: ${message}`),
  };
  const asker = (): Plugin =>
    makePlugin("box", [{
      kind: "tool",
      name: "asker",
      tools: (services) => [{
        name: "ask",
        description: "Asks the user.",
        parameters: OBJECT,
        execute: async () => {
          const name = await services.host.ui!.askText("Who?");
          const sure = await services.host.ui!.confirm(`Greet ${name}?`);
          services.host.ui!.notify(`greeted ${name}`, "good");
          return result(`${name} ${sure}`);
        },
      }],
    }]);
  await using s = await scene({ plugin: asker, host: { ui } });
  deepStrictEqual(await s.registries.tool.execute("ask", {}), { ok: true, output: "amber true" });
  deepStrictEqual(questions, ["Who?", "Greet amber?"]);
  // Sent before the tool's answer, so here before it.
  deepStrictEqual(notices, ["good: greeted amber"]);
});

// Gone: no /proc entry, or a zombie not reaped yet.
async function processGone(pid: number): Promise<boolean> {
  try {
    return /^State:\s+Z/m.test(await Deno.readTextFile(`/proc/${pid}/status`));
  } catch {
    return true;
  }
}

// Waits (at most ~2 s) for plugin `id` to leave the active state: a real process's verdict comes
// once it has been reaped.
async function leftActive(runtime: PluginRuntime, id: string): Promise<void> {
  for (let i = 0; i < 100 && runtime.state(id).status === "active"; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    await runtime.settled();
  }
  // The switch-off that moved it may have been queued after the last wait began.
  await runtime.settled();
}

Deno.test("a real plugin process: a round trip, a spin killed at its deadline, an exit", async () => {
  const fixture = new URL("./_sandboxed_plugin_fixtures/unruly.ts", import.meta.url);
  const workspace = await Deno.makeTempDir({ prefix: "amber_sandboxed_" });
  const faults: SandboxFault[] = [];
  const logged: string[] = [];
  const { runtime, registries } = makeRuntime({
    config: { plugins: {}, timeouts: { tool: 1_000, toolGrace: 100 } },
  });
  const sandboxed = await loadSandboxedPlugin({
    specifier: fixture.href,
    pluginId: "unruly",
    expectedId: "unruly",
    grant: {},
    workspace,
    dataDir: `${workspace}/.data`,
    readFolders: [new URL(".", fixture).pathname],
    hostVersion: "1.0.0",
    importTimeoutMs: 30_000,
    onLog: (line) => logged.push(line),
    onFault: (fault) => {
      faults.push(fault);
      runtime.fail(fault.pluginId, fault.where, fault.message);
    },
  });
  try {
    runtime.register(sandboxed.plugin);
    runtime.register(makePlugin("other", [{
      kind: "tool",
      name: "other_tools",
      tools: [{
        name: "ping",
        description: "P.",
        parameters: OBJECT,
        execute: () => result("pong"),
      }],
    }]));
    await runtime.start();
    strictEqual(runtime.state("unruly").status, "active");
    const first = sandboxed.pid!;
    ok(first > 0);
    deepStrictEqual(registries.prompt.assemble([]).blocks, ["unruly_prompt"]);
    const progress: string[] = [];
    const shouted = await registries.tool.execute("shout", { text: "hi" }, {
      signal: new AbortController().signal,
      progress: (message) => progress.push(message),
    });
    deepStrictEqual([shouted, progress], [{ ok: true, output: "HI" }, ["inhaling"]]);
    ok(logged.includes("log: unruly starting"), logged.join("\n"));

    const spun = await registries.tool.execute("spin", {});
    match(spun.error!, /tool 'spin' of plugin 'unruly' failed: .*within 1100 ms/);
    await leftActive(runtime, "unruly");
    const state = runtime.state("unruly");
    match(state.status === "failed" ? state.reason : "", /^sandbox: its process was killed/);
    ok(await processGone(first), "the spinning process is gone");
    deepStrictEqual(await registries.tool.execute("ping", {}), { ok: true, output: "pong" });

    await runtime.setState("unruly", true);
    strictEqual(runtime.state("unruly").status, "active");
    const second = sandboxed.pid!;
    ok(second !== first, "switching it on started a new process");
    const quit = await registries.tool.execute("quit", {});
    strictEqual(quit.ok, false);
    await leftActive(runtime, "unruly");
    const after = runtime.state("unruly");
    match(
      after.status === "failed" ? after.reason : "",
      /^sandbox: its process exited with code 3/,
    );
    strictEqual(faults.length, 2);
    ok(await processGone(second));
  } finally {
    await runtime.stop();
    await sandboxed.close();
    await Deno.remove(workspace, { recursive: true });
  }
});
