// The plugin process's side of the sandbox (core/sandbox/child.ts), in memory: what the plugin's
// context and renders do in its process (pushes on change only, event subscriptions, the other
// plugins' tools, the UI, a live plugin's changes) and where its console goes.

import assert from "node:assert/strict";
import {
  type PluginContext,
  type PluginServices,
  type ToolEntry,
  UiUnavailableError,
} from "@amber/core";
import { Method, SandboxLimitError, type ToolInfo } from "@amber/core/sandbox";
import { routeConsole } from "../../core/sandbox/_child_console.ts";
import { connect, descriptors, plugin } from "./_sandbox_child_host.ts";

Deno.test("renders are pushed after a message only when they changed", async () => {
  let count = 0;
  let broken = false;
  const keys: string[] = [];
  const side = connect(plugin({
    capabilities: () => [
      {
        kind: "command",
        name: "c",
        root: "c",
        help: "",
        subtree: {},
        handlers: { "": () => `${++count}` },
      },
      {
        kind: "prompt",
        name: "counter",
        priority: 400,
        render: () => {
          if (broken) throw new Error("render broke");
          return `count ${count}`;
        },
      },
      {
        kind: "status",
        name: "model",
        priority: 1,
        dropPriority: 1,
        render: (snapshot) => ({ text: `${snapshot.model}:${count}`, tone: "dim" }),
      },
      {
        kind: "panel",
        name: "p",
        id: "sample_panel",
        title: "P",
        lines: (width) => [`${width}:${keys.join("")}`],
        onKey: (key) => {
          keys.push(key);
          return true;
        },
      },
    ],
  }));
  const crossed = descriptors(await side.initialize());
  assert.deepEqual(crossed.map((d) => d.kind === "panel" ? d.keys : d.kind), [
    "command",
    "prompt",
    "status",
    true,
  ]);
  await side.flush();
  assert.equal(side.notes.length, 0, "nothing changed: nothing pushed");

  assert.equal(await side.host.request(Method.commandRun, { name: "c", path: "", arg: "" }), "1");
  assert.deepEqual(side.pushed(Method.promptUpdate), [{ name: "counter", text: "count 1" }]);
  assert.deepEqual(side.pushed(Method.statusUpdate), [{
    name: "model",
    text: { text: ":1", tone: "dim" },
  }]);
  assert.deepEqual(side.pushed(Method.panelUpdate), []);

  side.host.notify(Method.statusSnapshot, { snapshot: { model: "gpt" } });
  side.host.notify(Method.panelWidth, { id: "sample_panel", width: 20 });
  side.host.notify(Method.panelKey, { id: "sample_panel", key: "j" });
  await side.flush();
  assert.deepEqual(side.pushed(Method.statusUpdate).at(-1), {
    name: "model",
    text: { text: "gpt:1", tone: "dim" },
  });
  assert.deepEqual(side.pushed(Method.panelUpdate), [
    { id: "sample_panel", width: 20, lines: ["20:"] },
    { id: "sample_panel", width: 20, lines: ["20:j"] },
  ]);

  // A render that throws keeps the last text, and says so in the log.
  broken = true;
  const before = side.notes.length;
  await side.host.request(Method.commandRun, { name: "c", path: "", arg: "" });
  const after = side.notes.slice(before);
  assert.deepEqual(after.filter((n) => n.method === Method.promptUpdate), []);
  assert.match(
    JSON.stringify(after),
    /prompt block 'counter' failed to render, the last text stays: render broke/,
  );
  await side.close();
});

Deno.test("events: the first handler of a type subscribes, the last one gone unsubscribes; payloads are frozen", async () => {
  let context: PluginContext | undefined;
  const seen: unknown[] = [];
  const side = connect(plugin({
    initialize(ctx) {
      context = ctx;
      return true;
    },
  }));
  await side.initialize();
  assert.ok(context !== undefined);
  const first = context.events.subscribe("toolCompleted", (event) => seen.push(["a", event.name]));
  const second = context.events.subscribe("toolCompleted", (event) => {
    seen.push(["b", Object.isFrozen(event), Object.isFrozen(event.result)]);
    throw new Error("handler broke");
  });
  await side.flush();
  assert.deepEqual(side.pushed(Method.eventsSubscribe), [{ type: "toolCompleted" }]);
  const payload = { callId: "1", name: "read", result: { ok: true, output: "" }, durationMs: 3 };
  side.host.notify(Method.event, { type: "toolCompleted", payload });
  side.host.notify(Method.event, { type: "turnEnded", payload: { cancelled: false } });
  await side.flush();
  assert.deepEqual(seen, [["a", "read"], ["b", true, true]]);
  assert.match(
    JSON.stringify(side.pushed(Method.log)),
    /event toolCompleted: a handler threw: handler broke/,
  );
  first.unsubscribe();
  await side.flush();
  assert.deepEqual(side.pushed(Method.eventsUnsubscribe), []);
  second.unsubscribe();
  second.unsubscribe();
  await side.flush();
  assert.deepEqual(side.pushed(Method.eventsUnsubscribe), [{ type: "toolCompleted" }]);
  assert.throws(
    () => context!.events.intercept("turnStarted", () => false),
    (error: unknown) => error instanceof SandboxLimitError && /trusted: true/.test(error.message),
  );
  await side.close();
});

Deno.test("other plugins' tools are frozen stand-ins that refuse to run; tools.changed updates them", async () => {
  let context: PluginContext | undefined;
  const info: ToolInfo = {
    name: "read",
    owner: "files",
    description: "Reads a file.",
    schema: { type: "object", properties: { path: { type: "string" } } },
    readOnly: true,
  };
  const side = connect(plugin({
    initialize(ctx) {
      context = ctx;
      return true;
    },
  }));
  await side.initialize({ tools: [info] });
  const tools = context!.tools;
  const entry = tools.get("read") as ToolEntry;
  assert.equal(entry.owner, "files");
  assert.equal(entry.tool.readOnly, true);
  assert.ok(Object.isFrozen(entry) && Object.isFrozen(entry.tool) && Object.isFrozen(entry.schema));
  const result = await entry.tool.execute({ path: "x" }, { signal: new AbortController().signal });
  assert.equal(result.ok, false);
  assert.match(result.error ?? "", /cannot be run from plugin 'sample'/);
  side.host.notify(Method.toolsChanged, {
    tools: [info, { ...info, name: "write", readOnly: false }],
  });
  await side.flush();
  assert.deepEqual(tools.list().map((e) => e.tool.name), ["read", "write"]);
  await side.close();
});

Deno.test("the UI crosses: notify and questions for an interactive host, refusals for a headless one", async () => {
  let services: PluginServices | undefined;
  const capture = plugin({
    capabilities: () => [{
      kind: "tool",
      name: "t",
      tools: (given) => {
        services = given;
        return [];
      },
    }],
  });
  const side = connect(capture);
  side.host.handle(Method.uiAsk, (params) => {
    const ask = params as { kind: string; question: string };
    return ask.kind === "confirm"
      ? true
      : ask.kind === "choose"
      ? "eu"
      : `answer to ${ask.question}`;
  });
  await side.initialize({ services: { ui: { interactive: true } } });
  const ui = services!.host.ui!;
  assert.deepEqual(Object.keys(services!.host), ["ui"], "no jobs, todos, sub-agents or processes");
  assert.equal(ui.interactive, true);
  assert.equal(await ui.askText("Name?"), "answer to Name?");
  assert.equal(await ui.choose("Region?", ["eu", "us"]), "eu");
  assert.equal(await ui.confirm("Go?"), true);
  ui.notify("indexed", "good");
  await side.flush();
  assert.deepEqual(side.pushed(Method.uiNotify), [{ message: "indexed", tone: "good" }]);
  await side.close();

  const headless = connect(capture);
  await headless.initialize({ services: { ui: { interactive: false } } });
  await assert.rejects(services!.host.ui!.askSecret("Key?"), UiUnavailableError);
  await headless.close();

  const none = connect(capture);
  await none.initialize();
  assert.equal(services!.host.ui, undefined);
  await none.close();
});

Deno.test("a live plugin whose version moved sends plugin.changed with its new capabilities", async () => {
  let version = 1;
  let ticks = 0;
  const side = connect(plugin({
    liveVersion: () => version,
    tick: () => {
      ticks++;
      if (ticks === 2) version = 2;
    },
    capabilities: () => [{
      kind: "prompt",
      name: `v${version}`,
      priority: 1,
      render: () => `v${version}`,
    }],
  }));
  const result = await side.initialize();
  assert.deepEqual(result, {
    ok: true,
    capabilities: [{ kind: "prompt", name: "v1", priority: 1, text: "v1" }],
    liveVersion: 1,
  });
  side.host.notify(Method.tick);
  await side.flush();
  assert.deepEqual(side.pushed(Method.pluginChanged), []);
  side.host.notify(Method.tick);
  await side.flush();
  assert.equal(ticks, 2);
  assert.deepEqual(side.pushed(Method.pluginChanged), [{
    liveVersion: 2,
    capabilities: [{ kind: "prompt", name: "v2", priority: 1, text: "v2" }],
  }]);
  await side.close();
});

Deno.test("a push JSON cannot carry is logged, and the message that caused it is still answered", async () => {
  let version = 1;
  const side = connect(plugin({
    liveVersion: () => version,
    capabilities: () =>
      version === 1 ? [] : [{ kind: "state", name: "big", initial: 10n as unknown }],
    tick: () => void version++,
  }));
  await side.initialize();
  side.host.notify(Method.tick);
  assert.ok(await side.flush());
  assert.deepEqual(side.pushed(Method.pluginChanged), []);
  assert.match(
    JSON.stringify(side.pushed(Method.log)),
    /plugin.changed could not be sent: TypeError: Do not know how to serialize a BigInt/,
  );
  await side.close();
});

Deno.test("console output of the plugin becomes log lines, never stdout", () => {
  const lines: [string, string][] = [];
  const target = { ...console };
  const restore = routeConsole(target, (level, message) => lines.push([level, message]));
  target.log("hello", { a: 1 });
  target.error("bad");
  target.table([1]);
  target.assert(false, "wrong");
  target.assert(true, "right");
  assert.deepEqual(lines.map(([level]) => level), ["log", "error", "log", "error"]);
  assert.equal(lines[0][1], "hello { a: 1 }");
  assert.equal(lines[3][1], "Assertion failed: wrong");
  restore();
  assert.equal(target.log, console.log);
});
