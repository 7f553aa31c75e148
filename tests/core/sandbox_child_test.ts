// The plugin process's side of the sandbox (core/sandbox/child.ts), in memory: a real Plugin
// object served over two RpcPeers; describe, initialize and every call answered as the
// in-process runtime would answer them, and what the plugin throws answered, never a crash.

import assert from "node:assert/strict";
import { type Plugin, type PluginContext, ReadOnlyViewError } from "@amber/core";
import { Method, PROTOCOL_VERSION, RpcErrorCode } from "@amber/core/sandbox";
import { z } from "zod";
import { connect, plugin, refused } from "./_sandbox_child_host.ts";

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

// A rejected promise whose rejection is handled from the start: the cases are awaited one by one.
function rejected(error: Error): Promise<never> {
  const promise = Promise.reject(error);
  promise.catch(() => {});
  return promise;
}
