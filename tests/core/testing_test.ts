// @amber/core/testing: the one-plugin test host over real registries. It activates, runs tools,
// renders segments and panels, dispatches commands, reaches a provider plugin's presets through
// the fake provider, and holds plugins to the ledger invariant on disable.

import { deepStrictEqual, match, ok, rejects, strictEqual } from "node:assert/strict";
import {
  any,
  type Capability,
  emptyStatusSnapshot,
  exact,
  type Plugin,
  PluginShapeError,
  type StreamEvent,
} from "@amber/core";
import {
  createTestTodos,
  LedgerInvariantError,
  registryContents,
  TestHostError,
  testPlugin,
} from "@amber/core/testing";
import { createGeminiPlugin, createHelloPlugin, createToolPlanPlugin } from "@amber/plugins";
import { ProviderClient } from "@amber/providers/client";
import { FakeProvider, geminiEncoder } from "@amber/providers/testing";
import { createRegistries } from "@amber/registries";

function widget(overrides: Partial<Plugin> = {}, extra: readonly Capability[] = []): Plugin {
  return {
    id: "widget",
    version: "1.0.0",
    name: "Widget",
    bound: { tools: exact("spin"), segments: exact("widget"), panels: exact("widget") },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [
      {
        kind: "tool",
        name: "spin",
        tools: [{
          name: "spin",
          description: "Spin n times.",
          parameters: {
            type: "object",
            properties: { n: { type: "integer", minimum: 1 } },
            required: ["n"],
          },
          execute: (args) => ({ ok: true, output: "↻".repeat((args as { n: number }).n) }),
        }],
      },
      {
        kind: "status",
        name: "widget",
        priority: 500,
        dropPriority: 10,
        render: (s) => ({ text: `model=${s.model || "-"}`, tone: "dim" }),
      },
      {
        kind: "panel",
        name: "widget_panel",
        id: "widget",
        title: "Widget",
        lines: (w) => [`w=${w}`],
      },
      ...extra,
    ],
    ...overrides,
  };
}

Deno.test("testPlugin activates a plugin with real registries: tools, segments, panels, commands", async () => {
  await using host = await testPlugin(widget(), { registries: createRegistries() });
  strictEqual(host.state().status, "active");
  deepStrictEqual(host.tools(), ["spin"]);
  deepStrictEqual(await host.execute("spin", { n: 3 }), { ok: true, output: "↻↻↻" });
  // Arguments are validated against the schema by the real tool registry.
  const invalid = await host.execute("spin", { n: 0 });
  strictEqual(invalid.ok, false);
  match(invalid.error ?? "", /n/);
  strictEqual(host.status(40).text, "model=-");
  strictEqual(host.status(40, { ...emptyStatusSnapshot(), model: "m1" }).text, "model=m1");
  deepStrictEqual(host.panel("widget", 12), ["w=12"]);
  strictEqual(host.panel("nope"), undefined);
  deepStrictEqual(
    host.contributions().map((c) => `${c.kind}:${c.name}`),
    ["tool:spin", "status:widget", "panel:widget_panel"],
  );
});

Deno.test("testPlugin dispatches commands, with the config section decoded by the plugin's schema", async () => {
  const host = await testPlugin(createHelloPlugin(), {
    registries: createRegistries(),
    config: { greeting: "Ahoy" },
  });
  deepStrictEqual(await host.command("/hello greet amber"), { ok: true, text: "Ahoy, amber!" });
  deepStrictEqual(await host.command("hello greet"), { ok: true, text: "Ahoy, world!" });
  const unknown = await host.command("/nope");
  strictEqual(unknown.ok, false);
  match((unknown as { error: string }).error, /unknown command root 'nope'; roots: hello/);
  strictEqual((await host.execute("greet", { name: "x" })).output, "Ahoy, x!");
  await host.disable();
  strictEqual(host.state().status, "disabled");
  strictEqual(host.tools().length, 0);
  strictEqual((await host.enable()).status, "active");
  await host[Symbol.asyncDispose]();
});

Deno.test("testPlugin gives a factory the host API and the test host services", async () => {
  let seen: string | undefined;
  await using host = await testPlugin((api) => {
    seen = `${api.version} ${api.apiVersion}`;
    return createToolPlanPlugin();
  }, { registries: createRegistries(), hostVersion: "9.9.9" });
  strictEqual(seen, "9.9.9 1");
  ok(host.services.todos);
  strictEqual(host.services.jobs, undefined);
  const written = await host.execute("todowrite", {
    todos: [{ content: "ship it", status: "in_progress" }],
  });
  strictEqual(written.ok, true, written.error);
  deepStrictEqual(host.services.todos!.list(), [{ content: "ship it", status: "in_progress" }]);
});

Deno.test("disable catches a plugin that leaves an entry behind in a registry", async () => {
  const registries = createRegistries();
  const host = await testPlugin(widget({ bound: { ...widget().bound, prompts: any() } }), {
    registries,
  });
  // What a plugin that went around the ledger would leave: an entry under its name that the
  // runtime never recorded.
  const services = {
    owner: "widget",
    tools: registries.tool,
    events: host.runtime.events,
    config: () => host.runtime.config(),
    host: {},
    workspace: { root: Deno.cwd() },
  };
  registries.prompt.install(
    "widget",
    { kind: "prompt", name: "stray", priority: 400, render: () => "stray" },
    services,
  );
  const error = await host.disable().then(() => undefined, (e: unknown) => e);
  ok(error instanceof LedgerInvariantError, String(error));
  deepStrictEqual(error.leftBehind, ["prompt:widget:stray"]);
  deepStrictEqual(error.missing, []);
  match(
    error.message,
    /plugin 'widget' left the registries changed: left behind prompt:widget:stray/,
  );
  await host.runtime.stop();
});

Deno.test("a plugin that fails to activate is a TestHostError, and the registries are as before", async () => {
  const registries = createRegistries();
  const before = registryContents(registries);
  // A tool outside its bound: the activation is unwound atomically.
  const outside = widget({ bound: { tools: exact("spin") } });
  await rejects(
    testPlugin(outside, { registries }),
    (error: unknown) =>
      error instanceof TestHostError && /did not activate: failed: .*widget/.test(error.message),
  );
  deepStrictEqual(registryContents(registries), before);
  await rejects(
    testPlugin(widget({ initialize: () => false }), { registries: createRegistries() }),
    /did not activate: failed: initialize returned false/,
  );
  await rejects(
    testPlugin({ id: "x" } as unknown as Plugin, { registries: createRegistries() }),
    PluginShapeError,
  );
});

Deno.test("requirements activate first and are part of the baseline", async () => {
  const dependent = widget({ requires: { hello: "^0.1.0" } });
  await using host = await testPlugin(dependent, {
    registries: createRegistries(),
    requires: [createHelloPlugin()],
  });
  strictEqual(host.runtime.state("hello").status, "active");
  await host.disable();
  // hello's tool is still there: it was in the baseline.
  ok(host.registries.tool.get("greet"));
});

Deno.test("a provider plugin's preset is pointed at the fake provider and streams through the core client", async () => {
  await using server = await FakeProvider.start({ encoders: [geminiEncoder] });
  server.script({ text: "Hi from the fake!", usage: { promptTokens: 3, completionTokens: 4 } });
  await using host = await testPlugin(createGeminiPlugin(), { registries: createRegistries() });
  const { preset, dialect, settings } = await host.provider("gemini", {
    baseUrl: server.url,
    apiKey: "test-key",
  });
  strictEqual(preset.baseUrl, server.url);
  strictEqual(dialect.flavor, "gemini");
  const events: StreamEvent[] = [];
  await new ProviderClient(dialect, settings).stream(
    { model: preset.defaultModel, messages: [{ role: "user", content: "hi" }], tools: [] },
    (event) => events.push(event),
  );
  strictEqual(
    events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join(""),
    "Hi from the fake!",
  );
  strictEqual(server.requests.length, 1);
  await rejects(host.provider("nope"), /unknown preset 'nope'; presets: gemini/);
});

Deno.test("createTestTodos keeps a frozen copy", () => {
  const todos = createTestTodos();
  const items = [{ content: "a", status: "pending" as const }];
  todos.write(items);
  items.push({ content: "b", status: "pending" });
  strictEqual(todos.list().length, 1);
  ok(Object.isFrozen(todos.list()[0]));
});
