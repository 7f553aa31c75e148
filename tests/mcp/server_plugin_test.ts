// One MCP server as a plugin, against the real runtime and registries, with SDK servers in this
// process (tests/mcp/servers_test.ts runs real server processes).

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  ListToolsRequestSchema,
  McpError,
  SetLevelRequestSchema,
  type Tool as SdkTool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type Diagnostic, PluginRuntime } from "@amber/core";
import { createRegistries } from "@amber/registries";
import { McpServerPlugin, type McpServerPluginOptions } from "../../mcp/server_plugin.ts";
import type { McpServerEntry } from "../../mcp/types.ts";
import { memoryConnector, type MemoryServer, until } from "./_memory_connector.ts";

const NO_HANDLERS = { roots: () => [{ uri: "file:///ws", name: "ws" }] };

function echoServer(): McpServer {
  const server = new McpServer({ name: "mem", version: "2.0.0" }, {
    capabilities: { logging: {} },
  });
  server.registerTool("echo", {
    description: "Returns its text.",
    inputSchema: { text: z.string() },
  }, ({ text }) => ({ content: [{ type: "text", text }] }));
  server.registerTool("peek", {
    description: "Looks.",
    annotations: { readOnlyHint: true },
  }, () => ({ content: [{ type: "text", text: "peeked" }] }));
  return server;
}

interface Setup {
  readonly runtime: PluginRuntime;
  readonly server: McpServerPlugin;
  readonly diagnostics: Diagnostic[];
  readonly logs: string[];
  readonly toolNames: () => string[];
  close(): Promise<void>;
}

function setup(
  connector: NonNullable<McpServerPluginOptions["connector"]>,
  entry: Partial<McpServerEntry> = {},
  options: Partial<McpServerPluginOptions> = {},
): Setup {
  const runtime = new PluginRuntime({ registries: createRegistries(), allOn: true });
  const diagnostics: Diagnostic[] = [];
  const logs: string[] = [];
  const server = new McpServerPlugin({
    spec: {
      name: "mem",
      pluginId: "mcp.mem",
      entry: { transport: "stdio", command: "mem-server", args: ["--x"], ...entry },
      source: "config.yaml",
      fromWorkspace: false,
    },
    connect: true,
    env: {},
    workspace: "/ws",
    configDir: "/cfg",
    handlers: NO_HANDLERS,
    connector,
    backoffMs: 10,
    fail: (id, where, message) => runtime.fail(id, where, message),
    report: (diagnostic) => {
      diagnostics.push(diagnostic);
      runtime.report(diagnostic);
    },
    onDiagnostic: (diagnostic) => logs.push(`${diagnostic.where}: ${diagnostic.message}`),
    ...options,
  });
  runtime.register(server.plugin);
  return {
    runtime,
    server,
    diagnostics,
    logs,
    toolNames: () => runtime.registries.tool.list().map((entry) => entry.tool.name),
    close: async () => {
      await runtime.stop();
      await server.close();
    },
  };
}

Deno.test("the plugin: mcp.<name>, category mcp, bounded to its own namespace", () => {
  const { server } = setup(memoryConnector(echoServer).connect);
  const plugin = server.plugin;
  assert.equal(plugin.id, "mcp.mem");
  assert.equal(plugin.version, "1.0.0");
  assert.equal(plugin.name, "MCP mem");
  assert.equal(plugin.category, "mcp");
  assert.equal(plugin.description, "MCP server from config.yaml: mem-server --x");
  assert.deepEqual(plugin.bound, {
    tools: { kind: "namespace", prefix: "mcp__mem__" },
    commands: { kind: "namespace", prefix: "mcp__mem__" },
    phaseHooks: ["StepStart"],
  });
  assert.equal(typeof plugin.liveVersion, "function");
});

Deno.test("start() does not wait for a slow server; its tools arrive by live refresh", async () => {
  const gate = Promise.withResolvers<void>();
  const memory = memoryConnector(echoServer, () => gate.promise);
  const t = setup(memory.connect);
  await t.runtime.start();
  assert.equal(t.runtime.state("mcp.mem").status, "active");
  assert.deepEqual(t.server.state, { status: "connecting", attempt: 1 });
  assert.deepEqual(t.toolNames(), []);
  assert.deepEqual(t.runtime.refresh().refreshed, []);

  gate.resolve();
  await until(() => t.server.state.status === "connected", 5_000, "the connection");
  assert.deepEqual(t.server.state, {
    status: "connected",
    transport: "stdio",
    server: "mem 2.0.0",
  });
  // Not before the step boundary.
  assert.deepEqual(t.toolNames(), []);
  assert.deepEqual(t.runtime.refresh().refreshed, ["mcp.mem"]);
  assert.deepEqual(t.toolNames(), ["mcp__mem__echo", "mcp__mem__peek"]);
  const result = await t.runtime.registries.tool.execute("mcp__mem__echo", { text: "hi" });
  assert.deepEqual(result, { ok: true, output: "hi" });
  // The view lists what the server offers.
  const view = t.server.view();
  assert.deepEqual(view.tools.map((tool) => [tool.name, tool.mcpName, tool.readOnly]), [
    ["mcp__mem__echo", "echo", false],
    ["mcp__mem__peek", "peek", true],
  ]);
  await t.close();
});

Deno.test("disabledTools are listed as disabled and never offered", async () => {
  const t = setup(memoryConnector(echoServer).connect, { disabledTools: ["echo"] });
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  t.runtime.refresh();
  assert.deepEqual(t.toolNames(), ["mcp__mem__peek"]);
  assert.deepEqual(t.server.view().tools.map((tool) => [tool.mcpName, tool.disabled]), [
    ["echo", true],
    ["peek", false],
  ]);
  await t.close();
});

Deno.test("prompts become commands, resources two tools and the attachment hook", async () => {
  const create = () => {
    const server = echoServer();
    server.registerPrompt("greet", { description: "Greets.", argsSchema: { name: z.string() } }, (
      { name },
    ) => ({ messages: [{ role: "user", content: { type: "text", text: `Greet ${name}.` } }] }));
    server.registerResource("readme", "mem://readme", { description: "The readme." }, (uri) => ({
      contents: [{ uri: uri.href, text: "read me" }],
    }));
    return server;
  };
  const memory = memoryConnector(create);
  const t = setup(memory.connect);
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  t.runtime.refresh();
  const registries = t.runtime.registries;
  assert.deepEqual(t.toolNames(), [
    "mcp__mem__echo",
    "mcp__mem__peek",
    "mcp__mem__list_resources",
    "mcp__mem__read_resource",
  ]);
  const root = registries.command.tree().find((node) => node.name === "mcp__mem__greet");
  assert.equal(root?.owner, "mcp.mem");
  assert.equal(registries.hook.list().filter((entry) => entry.owner === "mcp.mem").length, 1);
  assert.deepEqual(t.server.view().prompts, ["greet"]);
  assert.deepEqual(t.server.view().resources, [{ uri: "mem://readme", name: "readme" }]);

  // Switching the plugin off takes every contribution and the connection with it.
  const live = memory.servers[0] as McpServer;
  assert.equal(live.isConnected(), true);
  await t.runtime.setState("mcp.mem", false);
  assert.equal(live.isConnected(), false);
  assert.deepEqual(t.toolNames(), []);
  assert.equal(registries.command.tree().some((node) => node.owner === "mcp.mem"), false);
  assert.equal(registries.hook.list().some((entry) => entry.owner === "mcp.mem"), false);
  assert.equal(t.runtime.ledger.size("mcp.mem"), 0);
  assert.deepEqual(t.server.state, { status: "idle" });
  assert.deepEqual(t.server.view().tools, []);

  // And back on, it connects again.
  await t.runtime.setState("mcp.mem", true);
  await until(() => t.server.state.status === "connected");
  t.runtime.refresh();
  assert.equal(t.toolNames().length, 4);
  await t.close();
});

Deno.test("a name with capitals: tools keep them, prompt commands are lower case", async () => {
  const create = () => {
    const server = echoServer();
    server.registerPrompt("Greet", { description: "Greets." }, () => ({
      messages: [{ role: "user", content: { type: "text", text: "Greet." } }],
    }));
    return server;
  };
  const spec = {
    name: "GitHub",
    pluginId: "mcp.github",
    entry: { transport: "stdio" as const, command: "gh-server" },
    source: "config.yaml",
    fromWorkspace: false,
  };
  const t = setup(memoryConnector(create).connect, {}, { spec });
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  const report = t.runtime.refresh();
  assert.deepEqual([report.refreshed, report.failed], [["mcp.github"], []]);
  assert.deepEqual(t.toolNames(), ["mcp__GitHub__echo", "mcp__GitHub__peek"]);
  const root = t.runtime.registries.command.tree().find((node) => node.owner === "mcp.github");
  assert.equal(root?.name, "mcp__github__greet");
  await t.close();
});

Deno.test("names that meet after mapping: the first keeps it, the others are left out", async () => {
  const create = () => {
    const server = new McpServer({ name: "clash", version: "1.0.0" });
    const text = (value: string) => () => ({ content: [{ type: "text" as const, text: value }] });
    server.registerTool("a.b", { description: "Dotted." }, text("dotted"));
    server.registerTool("a_b", { description: "Underscored." }, text("underscored"));
    // The server's own tool, where the resource tool of that name would go.
    server.registerTool("read_resource", { description: "Its own." }, text("own"));
    server.registerResource("readme", "mem://readme", {}, (uri) => ({
      contents: [{ uri: uri.href, text: "read me" }],
    }));
    return server;
  };
  const t = setup(memoryConnector(create).connect);
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  const report = t.runtime.refresh();
  assert.deepEqual([report.refreshed, report.failed], [["mcp.mem"], []]);
  assert.deepEqual(t.toolNames(), [
    "mcp__mem__a_b",
    "mcp__mem__read_resource",
    "mcp__mem__list_resources",
  ]);
  const tools = t.runtime.registries.tool;
  assert.deepEqual(await tools.execute("mcp__mem__a_b", {}), { ok: true, output: "dotted" });
  assert.deepEqual(await tools.execute("mcp__mem__read_resource", {}), { ok: true, output: "own" });
  assert.deepEqual(t.diagnostics.map((d) => d.message), [
    "server 'mem': a second tool named mcp__mem__a_b is left out",
    "server 'mem': a second tool named mcp__mem__read_resource is left out",
  ]);
  await t.close();
});

Deno.test("list_changed: the list is read again and applied at the next refresh", async () => {
  let live: McpServer | undefined;
  const t = setup(memoryConnector(() => (live = echoServer())).connect);
  const changes: { added: string[]; removed: string[]; changed: string[] }[] = [];
  t.runtime.events.subscribe(
    "environmentChanged",
    ({ added, removed, changed }) =>
      void changes.push({ added: [...added], removed: [...removed], changed: [...changed] }),
  );
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  t.runtime.refresh();
  const version = t.server.plugin.liveVersion!();

  live!.registerTool("late", { description: "Came later." }, () => ({
    content: [{ type: "text", text: "late" }],
  }));
  await until(() => t.server.plugin.liveVersion!() !== version, 5_000, "the re-read");
  assert.equal(t.toolNames().includes("mcp__mem__late"), false);
  assert.deepEqual(t.runtime.refresh().refreshed, ["mcp.mem"]);
  assert.equal(t.toolNames().includes("mcp__mem__late"), true);
  // The tools that did not change keep their objects: only the new one is news.
  assert.deepEqual(changes.at(-1), { added: ["mcp__mem__late"], removed: [], changed: [] });
  await t.close();
});

Deno.test("a failed re-read keeps the previous tools and says so", async () => {
  let broken = false;
  let live: Server | undefined;
  const tools: SdkTool[] = [{ name: "one", inputSchema: { type: "object" } }];
  const create = () => {
    const server = new Server({ name: "lists", version: "1.0.0" }, {
      capabilities: { tools: { listChanged: true } },
    });
    server.setRequestHandler(ListToolsRequestSchema, () => {
      if (broken) throw new McpError(-32603, "the list is broken");
      return { tools };
    });
    live = server;
    return server;
  };
  const t = setup(memoryConnector(create).connect);
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  t.runtime.refresh();
  assert.deepEqual(t.toolNames(), ["mcp__mem__one"]);
  const version = t.server.plugin.liveVersion!();

  broken = true;
  tools.push({ name: "two", inputSchema: { type: "object" } });
  await live!.sendToolListChanged();
  await until(() => t.diagnostics.some((d) => d.where === "refresh"), 5_000, "the report");
  const report = t.diagnostics.find((d) => d.where === "refresh")!;
  assert.equal(report.pluginId, "mcp.mem");
  assert.match(
    report.message,
    /server 'mem': re-reading its tools failed; the previous tools stay/,
  );
  assert.match(report.message, /the list is broken/);
  assert.equal(t.server.plugin.liveVersion!(), version);
  assert.deepEqual(t.runtime.refresh().refreshed, []);
  assert.deepEqual(t.toolNames(), ["mcp__mem__one"]);
  assert.deepEqual(t.server.view().tools.map((tool) => tool.mcpName), ["one"]);

  // Mended, the next change is read.
  broken = false;
  await live!.sendToolListChanged();
  await until(() => t.server.plugin.liveVersion!() !== version, 5_000, "the re-read");
  t.runtime.refresh();
  assert.deepEqual(t.toolNames(), ["mcp__mem__one", "mcp__mem__two"]);
  await t.close();
});

Deno.test("a list that changes while it is first read is read again", async () => {
  let reads = 0;
  const create = () => {
    const server = new Server({ name: "early", version: "1.0.0" }, {
      capabilities: { tools: { listChanged: true } },
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      reads++;
      // The change is announced before the first answer arrives.
      if (reads === 1) await server.sendToolListChanged();
      const tools: SdkTool[] = [{ name: "one", inputSchema: { type: "object" } }];
      if (reads > 1) tools.push({ name: "two", inputSchema: { type: "object" } });
      return { tools };
    });
    return server;
  };
  const t = setup(memoryConnector(create).connect);
  await t.runtime.start();
  await until(() => t.server.view().tools.length === 2, 5_000, "the second read");
  assert.equal(reads, 2);
  t.runtime.refresh();
  assert.deepEqual(t.toolNames(), ["mcp__mem__one", "mcp__mem__two"]);
  await t.close();
});

Deno.test("logging goes to the diagnostics at level info, never the screen", async () => {
  let level: string | undefined;
  let live: McpServer | undefined;
  const create = () => {
    const server = echoServer();
    // Records the level amber asks for, and keeps it for the filtering the SDK does.
    const inner = server.server;
    inner.setRequestHandler(SetLevelRequestSchema, (request) => {
      level = request.params.level;
      return {};
    });
    live = server;
    return server;
  };
  const t = setup(memoryConnector(create).connect);
  await t.runtime.start();
  await until(() => level !== undefined, 5_000, "the logging level");
  assert.equal(level, "info");
  await live!.sendLoggingMessage({ level: "warning", logger: "db", data: "slow query" });
  await live!.sendLoggingMessage({ level: "error", data: { code: 7 } });
  await until(() => t.logs.length >= 2, 5_000, "the logs");
  assert.deepEqual(t.logs, ["log: warning: [db] slow query", 'log: error: {"code":7}']);
  await t.close();
});

Deno.test("a server that never connects is retried with backoff, then failed with the reason", async () => {
  let calls = 0;
  const times: number[] = [];
  const connector = () => {
    calls++;
    times.push(performance.now());
    return Promise.reject(new Error("connection refused"));
  };
  const t = setup(connector, {}, { maxAttempts: 3, backoffMs: 20 });
  await t.runtime.start();
  await until(() => t.server.state.status === "failed", 5_000, "the failure");
  await t.runtime.settled();
  assert.equal(calls, 3);
  // The delays double: 20 ms, then 40 ms.
  assert.ok(times[1] - times[0] >= 19, `${times[1] - times[0]}`);
  assert.ok(times[2] - times[1] >= 39, `${times[2] - times[1]}`);
  const reason = "could not connect: connection refused (3 failures in a row)";
  assert.deepEqual(t.server.state, { status: "failed", reason });
  assert.deepEqual(t.runtime.state("mcp.mem"), {
    status: "failed",
    reason: `connect: ${reason}; switch it back on with \`/set plugin on mcp.mem\``,
  });
  assert.deepEqual(t.diagnostics.map((d) => d.message), [
    "server 'mem' could not connect: connection refused; retrying in 20 ms",
    "server 'mem' could not connect: connection refused; retrying in 40 ms",
    `server 'mem' ${reason}; giving up`,
  ]);
  // Switched on again, it is tried afresh.
  await t.runtime.setState("mcp.mem", true);
  assert.equal(t.runtime.state("mcp.mem").status, "active");
  assert.notEqual(t.server.state.status, "failed");
  await until(() => t.server.state.status === "failed");
  assert.equal(calls, 6);
  await t.close();
});

Deno.test("a lost connection takes the tools away until it is back", async () => {
  const memory = memoryConnector(echoServer);
  const t = setup(memory.connect);
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  t.runtime.refresh();
  assert.equal(t.toolNames().length, 2);

  const states: string[] = [];
  const before = memory.attempts();
  const crash = memory.servers.at(-1) as MemoryServer;
  const watcher = setInterval(() => {
    if (states.at(-1) !== t.server.state.status) states.push(t.server.state.status);
  }, 1);
  await crash.close();
  await until(() => memory.attempts() > before && t.server.state.status === "connected");
  clearInterval(watcher);
  assert.ok(states.includes("reconnecting"), states.join());
  assert.match(
    t.diagnostics[0].message,
    /^server 'mem' disconnected: the server closed the connection; retrying in 10 ms$/,
  );
  // The refresh that removed the tools was never applied: one refresh brings the new ones.
  assert.deepEqual(t.runtime.refresh().refreshed, ["mcp.mem"]);
  assert.deepEqual(t.toolNames(), ["mcp__mem__echo", "mcp__mem__peek"]);
  assert.deepEqual(await t.runtime.registries.tool.execute("mcp__mem__echo", { text: "again" }), {
    ok: true,
    output: "again",
  });
  await t.close();
});

Deno.test("between the loss and the return, the tools are gone at the step boundary", async () => {
  const gate = { open: true, waiting: Promise.withResolvers<void>() };
  const memory = memoryConnector(
    echoServer,
    () => gate.open ? Promise.resolve() : gate.waiting.promise,
  );
  const t = setup(memory.connect);
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  t.runtime.refresh();
  gate.open = false;
  await memory.servers.at(-1)!.close();
  await until(() => t.server.state.status === "connecting" && memory.attempts() === 2);
  assert.deepEqual(t.runtime.refresh().refreshed, ["mcp.mem"]);
  assert.deepEqual(t.toolNames(), []);
  gate.waiting.resolve();
  await until(() => t.server.state.status === "connected");
  t.runtime.refresh();
  assert.deepEqual(t.toolNames(), ["mcp__mem__echo", "mcp__mem__peek"]);
  await t.close();
});

Deno.test("reconnect() drops the connection and connects at once", async () => {
  const memory = memoryConnector(echoServer);
  const t = setup(memory.connect);
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  const first = memory.servers[0] as McpServer;
  const state = await t.server.reconnect();
  assert.equal(first.isConnected(), false);
  assert.equal(state.status, "connected");
  assert.equal((memory.servers[1] as McpServer).isConnected(), true);
  assert.equal(memory.attempts(), 2);
  // Not active: nothing happens.
  await t.runtime.setState("mcp.mem", false);
  assert.deepEqual(await t.server.reconnect(), { status: "idle" });
  assert.equal(memory.attempts(), 2);
  await t.close();
});

Deno.test("connect: false registers the plugin and never connects", async () => {
  const memory = memoryConnector(echoServer);
  const t = setup(memory.connect, {}, { connect: false });
  await t.runtime.start();
  assert.equal(t.runtime.state("mcp.mem").status, "active");
  assert.deepEqual(t.server.state, { status: "idle" });
  assert.equal(t.server.settled, true);
  assert.equal(memory.attempts(), 0);
  await t.close();
});

Deno.test("the connect options: the entry's timeout, stderr to the diagnostics", async () => {
  const memory = memoryConnector(echoServer);
  const t = setup(memory.connect, { timeout: 7 });
  await t.runtime.start();
  await until(() => t.server.state.status === "connected");
  const options = memory.last()!;
  assert.equal(options.timeoutMs, 7_000);
  assert.equal(options.workspace, "/ws");
  options.onStderr("starting up");
  assert.deepEqual(t.logs, ["log: stderr: starting up"]);
  await t.close();
});
