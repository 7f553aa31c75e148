// The plugin process's side of the sandbox (core/sandbox/child.ts), in memory, once initialized:
// every capability kind crosses as a descriptor, and every call (tools, commands, hooks, gates,
// guards, actions, wallets, allowances, a provider's dialect, shutdown) is answered as the
// in-process runtime would answer it; what the plugin throws is an error answer, never a crash.

import assert from "node:assert/strict";
import {
  defineTool,
  EventBus,
  type Plugin,
  type PluginServices,
  type StatusSnapshot,
} from "@amber/core";
import { Method } from "@amber/core/sandbox";
import { openaiDialect } from "@amber/providers/openai";
import { createToolRegistry } from "@amber/registries/tools";
import { z } from "zod";
import { connect, descriptors, plugin, refused } from "./_sandbox_child_host.ts";

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
      presets: [SAMPLE_PRESET],
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

// The one preset of the sample provider: what the plugin declares and what its descriptor says.
const SAMPLE_PRESET = {
  name: "sample",
  flavor: "sample_wire",
  baseUrl: "https://example.invalid",
  defaultModel: "m",
  requiresKey: false,
};

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
      presets: [SAMPLE_PRESET],
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
