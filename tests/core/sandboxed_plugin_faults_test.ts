// The host's stand-in for a sandboxed plugin (issue 12), when things go wrong: a switch-off removes
// everything and ends the process, a process that dies or writes garbage fails the plugin alone,
// a deadline kills, loading refuses what is not the plugin. The "process" is in memory
// (`_memory_connection.ts`); the last test runs a real one. The plugin and its scene:
// `_sandboxed_box.ts`.

import { deepStrictEqual, match, ok, rejects, strictEqual } from "node:assert/strict";
import { DeadlineError, type Plugin, type PluginRuntime, type UiService } from "@amber/core";
import {
  loadSandboxedPlugin,
  PluginEndedError,
  SandboxedPluginError,
  type SandboxFault,
} from "@amber/core/sandbox";
import { contents, makePlugin, makeRuntime } from "../_helpers.ts";
import { memoryProcesses } from "./_memory_connection.ts";
import {
  boxPlugin,
  OBJECT,
  otherPlugin,
  result,
  scene,
  SPAWN,
  verdictIn,
} from "./_sandboxed_box.ts";
import { fixtureProcess } from "./_fixture_process.ts";

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
    ...fixtureProcess(fixture, "unruly", workspace),
    onLog: (line) => logged.push(line),
    onFault: (fault) => {
      faults.push(fault);
      runtime.fail(fault.pluginId, fault.where, fault.message);
    },
  });
  try {
    runtime.register(sandboxed.plugin);
    runtime.register(otherPlugin());
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
