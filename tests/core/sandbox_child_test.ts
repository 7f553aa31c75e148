// The plugin process's side of the sandbox (core/sandbox/child.ts), in memory: a real Plugin
// object served over two RpcPeers; describe, initialize and every call answered as the
// in-process runtime would answer them, and what the plugin throws answered, never a crash.

import assert from "node:assert/strict";
import {
  defineTool,
  EventBus,
  type Plugin,
  type PluginContext,
  type PluginServices,
  ReadOnlyViewError,
  type StatusSnapshot,
} from "@amber/core";
import { Method, PROTOCOL_VERSION, RpcErrorCode } from "@amber/core/sandbox";
import { openaiDialect } from "@amber/providers/openai";
import { createToolRegistry } from "@amber/registries/tools";
import { z } from "zod";
import { connect, descriptors, plugin, refused } from "./_sandbox_child_host.ts";

Deno.test("describe answers the manifest; a factory export gets the host's version", async () => {
  const side = connect((api: { version: string }) =>
    plugin({
      description: `built for ${api.version}`,
      category: "tools",
      requires: { base: "^1.0.0" },
      bound: { tools: { kind: "exact", ids: ["x"] } },
      permissions: { read: ["docs"], net: ["api.example.com"] },
      liveVersion: () => 1,
      tick: () => {},
    })
  );
  assert.deepEqual(await side.describe(), {
    protocolVersion: PROTOCOL_VERSION,
    id: "sample",
    version: "1.0.0",
    name: "Sample",
    description: "built for 9.9.9",
    category: "tools",
    requires: { base: "^1.0.0" },
    bound: { tools: { kind: "exact", ids: ["x"] } },
    permissions: { read: ["docs"], net: ["api.example.com"] },
    live: true,
    ticks: true,
  });
  await side.close();
});

Deno.test("describe refuses another protocol version, naming both", async () => {
  const side = connect(plugin());
  const error = await refused(
    side.host.request(Method.describe, { protocolVersion: 99, hostVersion: "1.0.0" }),
    new RegExp(`version 99, this plugin process speaks version ${PROTOCOL_VERSION}`),
  );
  assert.equal(error.code, RpcErrorCode.InvalidRequest);
  await side.close();
});

Deno.test("describe refuses a garbage export, naming the field the runtime's validator names", async () => {
  const cases: [unknown, RegExp, string][] = [
    [42, /it is a number, not an object/, "plugin"],
    [undefined, /there is no default export/, "plugin"],
    [{ id: "Bad Id" }, /id 'Bad Id' is not a slug/, "id"],
    [{ ...plugin(), initialize: "yes" }, /initialize is not a function/, "initialize"],
    [{ ...plugin(), config: {} }, /config is not a Standard Schema/, "config"],
    [
      { ...plugin(), permissions: { read: "docs" } },
      /permissions.read is not a list/,
      "permissions",
    ],
    [
      () => {
        throw new Error("no luck");
      },
      /the default export \(a factory\) threw: no luck/,
      "plugin",
    ],
    [
      rejected(new Error("cannot import /p/x.ts: boom")),
      /^cannot import \/p\/x.ts: boom$/,
      "plugin",
    ],
  ];
  for (const [exported, pattern, field] of cases) {
    if (exported instanceof Promise) exported.catch(() => {});
    const side = connect(exported, "/p/x.ts");
    const error = await refused(side.describe(), pattern);
    assert.deepEqual(error.data, { field }, String(pattern));
    await side.close();
  }
});

Deno.test("initialize builds a read-only context: id, workspace, config, decoded section", async () => {
  let context: PluginContext | undefined;
  const side = connect(plugin({
    config: z.object({ greeting: z.string().default("Hello"), loud: z.boolean().default(false) }),
    initialize(ctx) {
      context = ctx;
      return true;
    },
  }));
  const result = await side.initialize({
    config: { model: "m1", plugins: { sample: { loud: true } } },
    section: { loud: true },
  });
  assert.deepEqual(result, { ok: true, capabilities: [] });
  assert.ok(context !== undefined);
  assert.equal(context.pluginId, "sample");
  assert.equal(context.workspace.root, "/work/space");
  assert.ok(Object.isFrozen(context.workspace));
  assert.deepEqual(context.section(), { greeting: "Hello", loud: true });
  assert.equal(context.config().model, "m1");
  assert.throws(() => {
    (context!.config() as { model?: string }).model = "m2";
  }, ReadOnlyViewError);
  assert.throws(() => {
    (context!.section() as { loud: boolean }).loud = false;
  }, ReadOnlyViewError);

  // A changed configuration is decoded again; one that no longer decodes keeps the old value.
  side.host.notify(Method.configChanged, {
    config: { model: "m3", plugins: { sample: { greeting: "Hi" } } },
    section: { greeting: "Hi" },
  });
  await side.flush();
  assert.equal(context.config().model, "m3");
  assert.deepEqual(context.section(), { greeting: "Hi", loud: false });
  side.host.notify(Method.configChanged, { config: { plugins: {} }, section: { greeting: 7 } });
  await side.flush();
  assert.deepEqual(context.section(), { greeting: "Hi", loud: false });
  assert.match(
    JSON.stringify(side.pushed(Method.log)),
    /plugins.sample.greeting: expected string, received number/,
  );
  await side.close();
});

Deno.test("initialize says no, with the reason: bad section, false, a throw, a bad capability", async () => {
  const cases: [Partial<Plugin>, unknown, RegExp][] = [
    [
      { config: z.object({ limit: z.number() }) },
      { limit: "x" },
      /plugins.sample.limit: expected number/,
    ],
    [{ initialize: () => false }, {}, /initialize returned false/],
    [
      {
        initialize: () => {
          throw new TypeError("no disk");
        },
      },
      {},
      /initialize failed: TypeError: no disk/,
    ],
    [
      {
        capabilities: () => {
          throw new Error("broken");
        },
      },
      {},
      /capabilities\(\) failed: broken/,
    ],
    [
      {
        capabilities: () => [{
          kind: "tool",
          name: "t",
          tools: () => {
            throw new Error("factory down");
          },
        }],
      },
      {},
      /tool capability 't' of plugin 'sample' failed: factory down/,
    ],
    [
      { capabilities: () => [{ kind: "hook", name: "h" } as never] },
      {},
      /hook 'h' of plugin 'sample' has no run function/,
    ],
    [
      { capabilities: () => [{ kind: "widget", name: "w" } as never] },
      {},
      /unknown capability kind 'widget'/,
    ],
  ];
  for (const [overrides, section, pattern] of cases) {
    let shutdowns = 0;
    const side = connect(plugin({ shutdown: () => void shutdowns++, ...overrides }));
    const result = await side.initialize({ section });
    assert.equal(result.ok, false, String(pattern));
    assert.match(result.ok ? "" : result.reason ?? "", pattern);
    // A plugin that initialized but cannot be activated is shut down in its process.
    const initialized = overrides.capabilities !== undefined;
    assert.equal(shutdowns, initialized ? 1 : 0, String(pattern));
    await side.close();
  }
});

const EVERYTHING: Plugin = plugin({
  capabilities: () => [
    {
      kind: "tool",
      name: "files",
      tools: (services: PluginServices) => [
        defineTool({
          name: "count",
          description: `Counts for ${services.owner}.`,
          parameters: z.object({ n: z.number().int().min(1).default(3) }),
          verb: "counting",
          readOnly: true,
          requiresApproval: (args) => args.n === 99,
          execute: (args) => ({ ok: true, output: String(args.n) }),
        }),
      ],
    },
    { kind: "prompt", name: "facts", priority: 400, render: () => "Deno." },
    {
      kind: "status",
      name: "model",
      priority: 10,
      dropPriority: 5,
      render: (snapshot: StatusSnapshot) => ({ text: snapshot.model, tone: "accent" }),
    },
    { kind: "panel", name: "list", id: "sample_list", title: "List", lines: (w) => [`w=${w}`] },
    {
      kind: "command",
      name: "hello",
      root: "hello",
      help: "Say hello",
      subtree: { greet: { help: "Greet" } },
      handlers: { greet: (arg) => `Hello, ${arg}!` },
    },
    {
      kind: "provider",
      name: "p",
      flavor: "sample_wire",
      presets: [{
        name: "sample",
        flavor: "sample_wire",
        baseUrl: "https://example.invalid",
        defaultModel: "m",
        requiresKey: false,
      }],
      dialect: () => {
        throw new Error("not used here");
      },
    },
    {
      kind: "wallet",
      name: "w",
      provider: "sample",
      currency: "EUR",
      fetch: () => Promise.resolve(2),
    },
    { kind: "allowance", name: "a", provider: "sample", fetch: () => Promise.resolve(undefined) },
    { kind: "hook", name: "h", point: "StepEnd", run: () => ({}) },
    { kind: "gate", name: "g", check: () => ({ kind: "allow" }) },
    { kind: "guard", name: "d", decide: () => ({ kind: "complete" }) },
    { kind: "action", name: "act", run: () => Promise.resolve({ ok: true, output: "" }) },
    { kind: "state", name: "sample.count", initial: 0 },
  ],
});

Deno.test("every capability kind crosses as a descriptor; a Standard Schema as the registry converts it", async () => {
  const side = connect(EVERYTHING);
  const crossed = descriptors(await side.initialize());
  // The host's tool registry, in-process, converts the same tool to the same JSON Schema.
  const registry = createToolRegistry();
  const services = {
    owner: "sample",
    tools: registry,
    events: new EventBus(),
    config: () => ({ plugins: {} }),
    host: {},
    workspace: { root: "/tmp" },
  };
  const capability = EVERYTHING.capabilities()[0];
  assert.equal(registry.install("sample", capability as never, services).status, "installed");
  const schema = registry.definitions()[0].parameters;
  assert.equal("$schema" in schema, false);
  assert.deepEqual(crossed, [
    {
      kind: "tool",
      name: "files",
      tools: [{
        name: "count",
        description: "Counts for sample.",
        parameters: schema,
        asksApproval: true,
        verb: "counting",
        readOnly: true,
      }],
    },
    { kind: "prompt", name: "facts", priority: 400, text: "Deno." },
    {
      kind: "status",
      name: "model",
      priority: 10,
      dropPriority: 5,
      text: { text: "", tone: "accent" },
    },
    { kind: "panel", name: "list", id: "sample_list", title: "List", lines: ["w=80"], keys: false },
    {
      kind: "command",
      name: "hello",
      root: "hello",
      help: "Say hello",
      subtree: { greet: { help: "Greet" } },
      handlers: ["greet"],
    },
    {
      kind: "provider",
      name: "p",
      flavor: "sample_wire",
      presets: [{
        name: "sample",
        flavor: "sample_wire",
        baseUrl: "https://example.invalid",
        defaultModel: "m",
        requiresKey: false,
      }],
      dialect: true,
    },
    { kind: "wallet", name: "w", provider: "sample", currency: "EUR" },
    { kind: "allowance", name: "a", provider: "sample" },
    { kind: "hook", name: "h", point: "StepEnd" },
    { kind: "gate", name: "g" },
    { kind: "guard", name: "d" },
    { kind: "action", name: "act" },
    { kind: "state", name: "sample.count", initial: 0 },
  ]);
  await side.close();
});

Deno.test("tool.execute validates with the Standard Schema as the registry does, and runs the tool", async () => {
  const side = connect(EVERYTHING);
  await side.initialize();
  const call = (args: unknown) =>
    side.host.request(Method.toolExecute, { capability: "files", tool: "count", args });
  assert.deepEqual(await call({ n: 5 }), { ok: true, output: "5" });
  assert.deepEqual(await call({}), { ok: true, output: "3" }, "the schema's default applies");
  assert.deepEqual(await call('{"n":7}'), { ok: true, output: "7" }, "JSON text is parsed");
  const registry = createToolRegistry();
  registry.install("sample", EVERYTHING.capabilities()[0] as never, {
    owner: "sample",
    tools: registry,
    events: new EventBus(),
    config: () => ({ plugins: {} }),
    host: {},
    workspace: { root: "/tmp" },
  });
  const inProcess = await registry.execute("count", { n: 0 });
  assert.equal(inProcess.ok, false);
  assert.deepEqual(await call({ n: 0 }), inProcess);
  assert.deepEqual(await call("{nope"), {
    ok: false,
    output: "",
    error: (await registry.execute("count", "{nope")).error,
  });
  assert.equal(
    await side.host.request(Method.toolRequiresApproval, {
      capability: "files",
      tool: "count",
      args: { n: 99 },
    }),
    true,
  );
  assert.equal(
    await side.host.request(Method.toolRequiresApproval, {
      capability: "files",
      tool: "count",
      args: { n: 1 },
    }),
    false,
  );
  const unknown = await side.host.request(Method.toolExecute, {
    capability: "files",
    tool: "nope",
    args: {},
  }) as { ok: boolean; error: string };
  assert.equal(unknown.ok, false);
  assert.match(unknown.error, /unknown tool 'nope'/);
  await side.close();
});

Deno.test("a throwing or careless tool is an error result, and the plugin goes on serving", async () => {
  const side = connect(plugin({
    capabilities: () => [{
      kind: "tool",
      name: "t",
      tools: [
        {
          name: "boom",
          description: "Throws.",
          parameters: { type: "object" },
          execute: () => {
            throw new Error("kaboom");
          },
        },
        {
          name: "careless",
          description: "Returns a number.",
          parameters: { type: "object" },
          execute: () => 42 as never,
        },
        {
          name: "fine",
          description: "Works.",
          parameters: { type: "object" },
          execute: () => ({ ok: true, output: "fine" }),
        },
      ],
    }],
  }));
  await side.initialize();
  const run = (tool: string) =>
    side.host.request(Method.toolExecute, { capability: "t", tool, args: {} });
  assert.deepEqual(await run("boom"), {
    ok: false,
    output: "",
    error: "tool 'boom' failed: kaboom",
  });
  assert.deepEqual(await run("careless"), {
    ok: false,
    output: "",
    error: "tool 'careless' failed: it returned number instead of a ToolResult",
  });
  assert.deepEqual(await run("fine"), { ok: true, output: "fine" });
  await side.close();
});

Deno.test("cancellation reaches the tool's signal, and its progress reaches the host", async () => {
  const started = Promise.withResolvers<void>();
  const side = connect(plugin({
    capabilities: () => [{
      kind: "tool",
      name: "slow",
      tools: [{
        name: "slow",
        description: "Waits for cancellation.",
        parameters: { type: "object" },
        execute: (_args, context) => {
          context.progress?.("step 1 of 2");
          started.resolve();
          return new Promise((resolve) => {
            context.signal.addEventListener(
              "abort",
              () => resolve({ ok: false, output: "", error: `stopped: ${context.signal.aborted}` }),
            );
          });
        },
      }],
    }],
  }));
  await side.initialize();
  const cancel = new AbortController();
  const progress: unknown[] = [];
  const answer = side.host.request(
    Method.toolExecute,
    { capability: "slow", tool: "slow", args: {} },
    { signal: cancel.signal, onProgress: (value) => progress.push(value) },
  );
  await started.promise;
  cancel.abort();
  assert.deepEqual(await answer, { ok: false, output: "", error: "stopped: true" });
  assert.deepEqual(progress, ["step 1 of 2"]);
  await side.close();
});

Deno.test("commands, hooks, gates, guards, actions, wallets and allowances answer; throws are error answers", async () => {
  let seenState: unknown;
  let actionSignal: AbortSignal | undefined;
  const side = connect(plugin({
    capabilities: () => [
      {
        kind: "command",
        name: "c",
        root: "c",
        help: "",
        subtree: { ok: {}, bad: {} },
        handlers: {
          ok: (arg) => `got ${arg}`,
          bad: () => {
            throw new Error("command broke");
          },
        },
      },
      {
        kind: "hook",
        name: "h",
        point: "StepEnd",
        run: (input) => {
          seenState = input.state;
          return { state: [{ op: "set", key: "k", value: input.state.get("k") as number + 1 }] };
        },
      },
      {
        kind: "gate",
        name: "g",
        check: ({ call }) => {
          if (call.name === "explode") throw new Error("gate broke");
          return { kind: "block", reason: `no ${call.name}` };
        },
      },
      {
        kind: "guard",
        name: "d",
        decide: ({ step }) => ({ kind: "steer", feedback: `step ${step}` }),
      },
      {
        kind: "action",
        name: "act",
        run: ({ correlationId, signal }) => {
          actionSignal = signal;
          return Promise.resolve({ ok: true, output: correlationId });
        },
      },
      {
        kind: "wallet",
        name: "w",
        provider: "x",
        fetch: (r) => Promise.resolve(r.apiKey ? 1.5 : undefined),
      },
      {
        kind: "allowance",
        name: "a",
        provider: "x",
        fetch: () => Promise.resolve({ windows: [{ label: "5h", percentUsed: 12 }] }),
      },
    ],
  }));
  await side.initialize();
  const { host } = side;
  assert.equal(
    await host.request(Method.commandRun, { name: "c", path: "ok", arg: "it" }),
    "got it",
  );
  await refused(
    host.request(Method.commandRun, { name: "c", path: "bad", arg: "" }),
    /command broke/,
  );
  await refused(
    host.request(Method.commandRun, { name: "c", path: "none", arg: "" }),
    /no handler at 'none'/,
  );
  const hookInput = { point: "StepEnd", step: 2, transcript: [], state: [["k", 1]] };
  assert.deepEqual(await host.request(Method.hookRun, { name: "h", input: hookInput }), {
    state: [{ op: "set", key: "k", value: 2 }],
  });
  assert.ok(seenState instanceof Map, "the state crosses as entries and is a Map again");
  const call = { id: "c1", name: "rm", arguments: "{}" };
  assert.deepEqual(
    await host.request(Method.gateCheck, { name: "g", input: { call, args: {}, state: [] } }),
    { kind: "block", reason: "no rm" },
  );
  await refused(
    host.request(Method.gateCheck, {
      name: "g",
      input: { call: { ...call, name: "explode" }, args: {}, state: [] },
    }),
    /gate broke/,
  );
  assert.deepEqual(
    await host.request(Method.guardDecide, {
      name: "d",
      input: { step: 4, transcript: [], state: [] },
    }),
    { kind: "steer", feedback: "step 4" },
  );
  assert.deepEqual(
    await host.request(Method.actionRun, { name: "act", input: { correlationId: "k9", call } }),
    { ok: true, output: "k9" },
  );
  assert.ok(actionSignal instanceof AbortSignal);
  const request = { provider: "x", baseUrl: "https://example.invalid" };
  assert.equal(await host.request(Method.walletFetch, { name: "w", request }), null);
  assert.equal(
    await host.request(Method.walletFetch, { name: "w", request: { ...request, apiKey: "k" } }),
    1.5,
  );
  assert.deepEqual(await host.request(Method.allowanceFetch, { name: "a", request }), {
    windows: [{ label: "5h", percentUsed: 12 }],
  });
  await refused(
    host.request(Method.hookRun, { name: "nope", input: hookInput }),
    /has no hook 'nope'/,
  );
  // After every fault, the plugin still answers.
  assert.equal(
    await host.request(Method.commandRun, { name: "c", path: "ok", arg: "again" }),
    "got again",
  );
  await side.close();
});

Deno.test("a provider's dialect is served from the plugin's current capabilities", async () => {
  const side = connect(plugin({
    capabilities: () => [{
      kind: "provider",
      name: "wire",
      flavor: "sample_wire",
      presets: [],
      dialect: () => openaiDialect(),
    }],
  }));
  await refused(
    side.host.request(Method.dialectCreate, { flavor: "sample_wire" }),
    /has no dialect 'sample_wire'/,
  );
  await side.initialize();
  const created = await side.host.request(Method.dialectCreate, { flavor: "sample_wire" }) as {
    dialect: number;
  };
  assert.equal(typeof created.dialect, "number");
  await refused(
    side.host.request(Method.dialectCreate, { flavor: "other" }),
    /has no dialect 'other'/,
  );
  await side.close();
});

Deno.test("shutdown awaits the plugin's shutdown, answers, and ends the serving", async () => {
  let shutdowns = 0;
  // A shutdown that takes its time: the answer still goes out before the output closes.
  const side = connect(plugin({
    shutdown: async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      shutdowns++;
    },
  }));
  await side.initialize();
  assert.equal(await side.host.request(Method.shutdown), null);
  await side.served;
  assert.equal(shutdowns, 1);
  await side.host.closed;
});

Deno.test("initialize before describe, and a second initialize, are refused", async () => {
  const side = connect(plugin());
  await refused(side.host.request(Method.initialize, {}), /initialize came before describe/);
  await side.initialize();
  await refused(side.initialize(), /already initialized in this process/);
  await side.close();
});

// A rejected promise whose rejection is handled from the start: the cases are awaited one by one.
function rejected(error: Error): Promise<never> {
  const promise = Promise.reject(error);
  promise.catch(() => {});
  return promise;
}
