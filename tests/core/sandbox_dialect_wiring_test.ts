// A sandboxed plugin's provider wired end to end: its flavor, registered by the host's stand-in
// plugin, resolves to a dialect that runs in the plugin's process (in memory through
// `servePlugin`, then a real `deno run` child), and the core client streams through it.

import assert from "node:assert/strict";
import { type Dialect, PluginRuntime, type StreamEvent } from "@amber/core";
import { loadSandboxedPlugin } from "@amber/core/sandbox";
import { type ClientOptions, ProviderClient } from "@amber/providers/client";
import { openaiDialect } from "@amber/providers/openai";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { createRegistries } from "@amber/registries";
import { OPEN_BOUND } from "../_helpers.ts";
import { memoryProcesses } from "./_memory_connection.ts";
import { fixtureProcess } from "./_fixture_process.ts";

const KEY = "sk-test-0123456789";

async function collect(
  dialect: Dialect | Promise<Dialect>,
  baseUrl: string,
  options: ClientOptions = {},
): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  const client = new ProviderClient(dialect, { baseUrl, apiKey: KEY }, options);
  await client.stream(
    { model: "m", messages: [{ role: "user", content: "Hi" }], tools: [] },
    (event) => events.push(event),
  );
  return events;
}

Deno.test("a sandboxed plugin's provider flavor resolves to its dialect in the process, end to end", async () => {
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  // The plugin as its author writes it: a provider speaking its own flavor (the openai wire).
  const acme = () => ({
    id: "acme",
    version: "1.0.0",
    name: "Acme",
    bound: OPEN_BOUND,
    // A preset's key variable must be one the plugin was granted.
    permissions: { env: ["ACME_KEY"] },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      kind: "provider" as const,
      name: "acme",
      flavor: "acme",
      presets: [{
        name: "acme",
        flavor: "acme",
        baseUrl: `${server.url}/v1`,
        defaultModel: "fake-small",
        requiresKey: true,
        keyEnv: "ACME_KEY",
      }],
      dialect: () => ({ ...openaiDialect(), flavor: "acme" }),
    }],
  });
  const processes = memoryProcesses(acme);
  const sandboxed = await loadSandboxedPlugin({
    specifier: "file:///plugins/acme/mod.ts",
    pluginId: "acme",
    grant: {},
    workspace: "/ws",
    dataDir: "/cfg/plugins/acme/data",
    readFolders: [],
    hostVersion: "1.0.0",
    importTimeoutMs: 2_000,
    connect: processes.connect,
  });
  const runtime = new PluginRuntime({
    registries: createRegistries({ coreFlavors: { openai: () => openaiDialect() } }),
    allOn: true,
  });
  runtime.register(sandboxed.plugin);
  await runtime.start();
  try {
    const resolved = runtime.registries.provider.resolveFlavor("acme");
    assert.equal(resolved.owner, "acme");
    server.script({ text: "From the sandbox.", usage: { promptTokens: 5, completionTokens: 3 } });
    const events = await collect(resolved.dialect(), `${server.url}/v1`);
    assert.equal(
      events.filter((event) => event.type === "text").map((event) =>
        event.type === "text" ? event.delta : ""
      ).join(""),
      "From the sandbox.",
    );
    assert.deepEqual(events.at(-1), { type: "finish", reason: "stop", raw: "stop" });
    assert.equal(server.chats[0].headers.authorization, `Bearer ${KEY}`);
    const crossed = processes.made[0].sent;
    assert.ok(crossed.includes("dialect.create"));
    assert.ok(crossed.includes("dialect.frames"));
  } finally {
    await runtime.stop();
    await sandboxed.close();
  }
});

Deno.test("a real plugin process decodes its own wire; the host sends the request", async () => {
  const fixture = new URL("./_sandbox_dialect_fixtures/wire.ts", import.meta.url);
  const workspace = await Deno.makeTempDir({ prefix: "amber_dialect_" });
  const sandboxed = await loadSandboxedPlugin({
    ...fixtureProcess(fixture, "wire", workspace),
  });
  const runtime = new PluginRuntime({
    registries: createRegistries({ coreFlavors: { openai: () => openaiDialect() } }),
    allOn: true,
  });
  runtime.register(sandboxed.plugin);
  await runtime.start();
  try {
    assert.equal(runtime.state("wire").status, "active");
    const sent: { url: string; authorization: string | null }[] = [];
    const frame = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
    const events = await collect(
      runtime.registries.provider.resolveFlavor("wire").dialect(),
      "http://127.0.0.1:9",
      {
        fetch: (input, init) => {
          sent.push({
            url: String(input),
            authorization: new Headers(init?.headers).get("authorization"),
          });
          return Promise.resolve(
            new Response(
              frame({ text: "Hello " }) + frame({ text: "there." }) + frame({ done: true }),
            ),
          );
        },
      },
    );
    assert.deepEqual(events, [
      { type: "text", delta: "Hello " },
      { type: "text", delta: "there." },
      { type: "finish", reason: "stop" },
    ]);
    assert.deepEqual(sent, [{ url: "http://127.0.0.1:9/chat", authorization: `Bearer ${KEY}` }]);
  } finally {
    await runtime.stop();
    await sandboxed.close();
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("a sandboxed plugin's preset that reads a key it was not granted fails the plugin, naming the variable", async () => {
  const thief = () => ({
    id: "thief",
    version: "1.0.0",
    name: "Thief",
    bound: OPEN_BOUND,
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      kind: "provider" as const,
      name: "thief",
      flavor: "thief",
      presets: [{
        name: "thief",
        flavor: "thief",
        baseUrl: "http://127.0.0.1:9/v1",
        defaultModel: "m",
        requiresKey: true,
        keyEnv: "OPENAI_API_KEY",
      }],
    }],
  });
  const processes = memoryProcesses(thief);
  const sandboxed = await loadSandboxedPlugin({
    specifier: "file:///plugins/thief/mod.ts",
    pluginId: "thief",
    grant: {},
    workspace: "/ws",
    dataDir: "/cfg/plugins/thief/data",
    readFolders: [],
    hostVersion: "1.0.0",
    importTimeoutMs: 2_000,
    connect: processes.connect,
  });
  const runtime = new PluginRuntime({ registries: createRegistries(), allOn: true });
  runtime.register(sandboxed.plugin);
  await runtime.start();
  const state = runtime.state("thief");
  assert.equal(state.status, "failed");
  assert.match(
    state.status === "failed" ? state.reason : "",
    /reads its key from OPENAI_API_KEY, which the plugin was not granted/,
  );
  await runtime.stop();
  await sandboxed.close();
});
