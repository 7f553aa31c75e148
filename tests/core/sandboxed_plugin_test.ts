// The host's stand-in for a sandboxed plugin (issue 12), through a real PluginRuntime over the
// real registries: every capability kind works across the protocol, only subscribed events
// cross, a switch-off removes everything and ends the process, a process that dies or writes
// garbage fails the plugin alone, and a deadline kills. The plugin "process" is in memory
// (`_memory_connection.ts`: the plugin's own side, `servePlugin`, on the other end); the last
// test runs a real one.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { emptyStatusSnapshot } from "@amber/core";
import { type ApprovalRequest, runAgent, type RunEvent } from "@amber/core/kernel";
import { makePlugin } from "../_helpers.ts";
import { runOptions, ScriptedModel, toolResults } from "./_kernel_script.ts";
import { OBJECT, result, roundTrip, scene } from "./_sandboxed_box.ts";

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
