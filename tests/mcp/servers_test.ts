// McpServers over real server processes (tests/mcp/_servers/*.ts over stdio) and the real
// runtime: start-up that does not wait, disable that leaves no process, crash and reconnect,
// giving up with the reason, list_changed, logs; and, in memory, what the servers may ask.

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CreateMessageResult } from "@modelcontextprotocol/sdk/types.js";
import { type Diagnostic, PluginRuntime } from "@amber/core";
import { createRegistries } from "@amber/registries";
import { McpServers, type McpServersOptions, UnknownMcpServerError } from "../../mcp/mod.ts";
import type { McpServerEntry, McpServerSpec } from "../../mcp/types.ts";
import { memoryConnector, until } from "./_memory_connector.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SERVERS = fileURLToPath(new URL("./_servers/", import.meta.url));

function stdio(name: string, script: string, ...args: string[]): McpServerSpec {
  const entry: McpServerEntry = {
    transport: "stdio",
    command: Deno.execPath(),
    args: ["run", "-A", `--config=${ROOT}deno.json`, `${SERVERS}${script}`, ...args],
    timeout: 20,
  };
  return {
    name,
    pluginId: `mcp.${name.toLowerCase()}`,
    entry,
    source: "config.yaml",
    fromWorkspace: false,
  };
}

interface Scene {
  readonly runtime: PluginRuntime;
  readonly servers: McpServers;
  /** The pid of the newest process started from `script`; throws when there is none. */
  readonly pidOf: (script: string) => number;
  /** Every process started, oldest first. */
  readonly spawned: { readonly pid: number; readonly argv: readonly string[] }[];
  readonly diagnostics: Diagnostic[];
  readonly logs: Diagnostic[];
  readonly toolNames: () => string[];
  close(): Promise<void>;
}

function scene(specs: McpServerSpec[], options: Partial<McpServersOptions> = {}): Scene {
  const runtime = new PluginRuntime({ registries: createRegistries(), allOn: true });
  const spawned: { pid: number; argv: readonly string[] }[] = [];
  const diagnostics: Diagnostic[] = [];
  const logs: Diagnostic[] = [];
  const servers = new McpServers({
    specs,
    connect: true,
    env: Deno.env.toObject(),
    workspace: ROOT,
    configDir: "/nonexistent/amber-config",
    fail: (id, where, message) => runtime.fail(id, where, message),
    report: (diagnostic) => {
      diagnostics.push(diagnostic);
      runtime.report(diagnostic);
    },
    onDiagnostic: (diagnostic) => logs.push(diagnostic),
    onSpawn: (process, argv) => void spawned.push({ pid: process.pid, argv }),
    backoffMs: 50,
    ...options,
  });
  for (const plugin of servers.plugins()) runtime.register(plugin);
  return {
    runtime,
    servers,
    spawned,
    pidOf: (script) => {
      const pid = spawned.findLast(({ argv }) => argv.includes(`${SERVERS}${script}`))?.pid;
      if (pid === undefined) throw new Error(`no process of ${script} was started`);
      return pid;
    },
    diagnostics,
    logs,
    toolNames: () => runtime.registries.tool.list().map((entry) => entry.tool.name),
    close: async () => {
      await runtime.stop();
      await servers.close();
    },
  };
}

// Whether process `pid` is gone (or a zombie nobody reaped yet). Read through `cat`: Deno wants
// every permission for another process's /proc files, and the suite runs with fewer.
async function gone(pid: number): Promise<boolean> {
  const output = await new Deno.Command("cat", {
    args: [`/proc/${pid}/status`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return !output.success || /^State:\s+Z/m.test(new TextDecoder().decode(output.stdout));
}

const status = (s: Scene, name: string) => s.servers.get(name)?.state.status;

Deno.test("a slow server does not delay start(); its tools arrive by refresh", async () => {
  const s = scene([stdio("slow", "slow.ts", "--seconds=1.5"), stdio("basic", "basic.ts")]);
  const started = performance.now();
  await s.runtime.start();
  const startMs = performance.now() - started;
  assert.ok(startMs < 500, `start() took ${startMs} ms`);
  assert.deepEqual(s.toolNames(), []);
  assert.equal(s.runtime.state("mcp.slow").status, "active");

  // ready() with a short wait gives up on the slow one.
  const early = performance.now();
  await s.servers.ready(300);
  assert.ok(performance.now() - early < 1_000);
  assert.equal(status(s, "slow"), "connecting");

  await s.servers.ready(20_000);
  assert.equal(status(s, "slow"), "connected");
  assert.equal(status(s, "basic"), "connected");
  assert.deepEqual([...s.runtime.refresh().refreshed].sort(), ["mcp.basic", "mcp.slow"]);
  assert.ok(s.toolNames().includes("mcp__slow__echo"));
  assert.ok(s.toolNames().includes("mcp__basic__echo"));
  const result = await s.runtime.registries.tool.execute("mcp__slow__echo", { text: "late" });
  assert.deepEqual(result, { ok: true, output: "late" });
  assert.deepEqual(s.servers.get("slow")!.state, {
    status: "connected",
    transport: "stdio",
    server: "amber-test-slow 1.0.0",
  });
  await s.close();
});

Deno.test("disabling a server removes every contribution and its process", async () => {
  const s = scene([stdio("basic", "basic.ts")]);
  await s.runtime.start();
  await s.servers.ready(20_000);
  s.runtime.refresh();
  const pid = s.pidOf("basic.ts");
  assert.ok(pid !== undefined);
  assert.equal(await gone(pid), false);
  assert.ok(s.runtime.ledger.size("mcp.basic") > 0);
  const plan = s.runtime.planDisable("mcp.basic");
  assert.ok(plan.plugins[0].removes.length > 0);

  await s.runtime.setState("mcp.basic", false);
  assert.equal(await gone(pid), true);
  assert.equal(s.runtime.ledger.size("mcp.basic"), 0);
  assert.deepEqual(s.toolNames(), []);
  assert.equal(s.runtime.registries.command.tree().some((n) => n.owner === "mcp.basic"), false);
  assert.equal(s.runtime.registries.hook.list().some((e) => e.owner === "mcp.basic"), false);
  assert.deepEqual(s.servers.get("basic")?.state, { status: "idle" });
  await s.close();
});

Deno.test("a crash is reported, the tools go, and come back on reconnect", async () => {
  // A retry a second later: long enough to look at the step boundary in between.
  const s = scene([stdio("crash", "crash.ts")], { backoffMs: 1_000 });
  await s.runtime.start();
  await s.servers.ready(20_000);
  s.runtime.refresh();
  assert.ok(s.toolNames().includes("mcp__crash__boom"));
  const firstPid = s.pidOf("crash.ts");

  const seen: string[] = [];
  const stop = s.servers.onChange(() => {
    const now = status(s, "crash")!;
    if (seen.at(-1) !== now) seen.push(now);
  });
  const call = await s.runtime.registries.tool.execute("mcp__crash__boom", {});
  assert.equal(call.ok, false);
  await until(() => status(s, "crash") === "reconnecting", 10_000, "the loss");
  const lost = s.diagnostics.find((d) => /disconnected/.test(d.message));
  assert.ok(lost !== undefined);
  assert.equal(lost.pluginId, "mcp.crash");
  assert.match(lost.message, /^server 'crash' disconnected: .*3/);
  // Until it is back, the next step has no tools of it.
  assert.equal(status(s, "crash"), "reconnecting");
  assert.deepEqual(s.runtime.refresh().refreshed, ["mcp.crash"]);
  assert.equal(s.toolNames().some((name) => name.startsWith("mcp__crash__")), false);
  await until(() => status(s, "crash") === "connected", 20_000, "the reconnect");
  stop();
  const from = seen.indexOf("reconnecting");
  assert.deepEqual(seen.slice(from), ["reconnecting", "connecting", "connected"]);
  s.runtime.refresh();
  assert.ok(s.toolNames().includes("mcp__crash__echo"));
  assert.notEqual(s.pidOf("crash.ts"), firstPid);
  assert.equal(await gone(firstPid), true);
  const echo = await s.runtime.registries.tool.execute("mcp__crash__echo", { text: "back" });
  assert.deepEqual(echo, { ok: true, output: "back" });
  assert.equal(s.runtime.state("mcp.crash").status, "active");
  await s.close();
});

Deno.test("a server that fails again and again is failed with the reason", async () => {
  const s = scene([stdio("dead", "crash.ts", "--at-start"), stdio("basic", "basic.ts")], {
    maxAttempts: 2,
  });
  await s.runtime.start();
  await s.servers.ready(30_000);
  await s.runtime.settled();
  const state = s.runtime.state("mcp.dead");
  assert.equal(state.status, "failed");
  assert.match(
    (state as { reason: string }).reason,
    /^connect: could not connect: .*\(2 failures in a row\); switch it back on/,
  );
  assert.match((state as { reason: string }).reason, /told to fail at start/);
  assert.equal(s.diagnostics.filter((d) => d.pluginId === "mcp.dead").length, 2);
  // The other server carries on.
  assert.equal(status(s, "basic"), "connected");
  assert.equal(s.runtime.state("mcp.basic").status, "active");
  await s.close();
});

Deno.test("a server that hangs at initialize times out, is failed, and its process is gone", async () => {
  const spec = stdio("hang", "hang.ts", "--at=initialize");
  const s = scene([{ ...spec, entry: { ...spec.entry, timeout: 1 } }], { maxAttempts: 1 });
  await s.runtime.start();
  await s.servers.ready(20_000);
  await s.runtime.settled();
  assert.equal(s.runtime.state("mcp.hang").status, "failed");
  const pid = s.pidOf("hang.ts");
  assert.equal(await gone(pid), true);
  await s.close();
});

Deno.test("garbage on stdout ends the connection with a reason quoting it", async () => {
  const s = scene([stdio("junk", "garbage.ts", "--at=call")]);
  await s.runtime.start();
  await s.servers.ready(20_000);
  s.runtime.refresh();
  await s.runtime.registries.tool.execute("mcp__junk__spew", {});
  await until(() => s.diagnostics.some((d) => /disconnected/.test(d.message)), 10_000, "the end");
  const report = s.diagnostics.find((d) => /disconnected/.test(d.message))!;
  assert.match(report.message, /garbage from the test server/);
  await until(() => status(s, "junk") === "connected", 20_000, "the reconnect");
  await s.close();
});

Deno.test("list_changed is applied at the next refresh; a failed re-read keeps the tools", async () => {
  const s = scene([stdio("lc", "list_changed.ts")]);
  await s.runtime.start();
  await s.servers.ready(20_000);
  s.runtime.refresh();
  assert.equal(s.toolNames().includes("mcp__lc__extra_1"), false);

  const version = () => s.runtime.info("mcp.lc").plugin.liveVersion!();
  let before = version();
  await s.runtime.registries.tool.execute("mcp__lc__grow", {});
  await until(() => version() !== before, 10_000, "the re-read");
  assert.equal(s.toolNames().includes("mcp__lc__extra_1"), false);
  assert.deepEqual(s.runtime.refresh().refreshed, ["mcp.lc"]);
  assert.equal(s.toolNames().includes("mcp__lc__extra_1"), true);

  before = version();
  await s.runtime.registries.tool.execute("mcp__lc__break", {});
  await until(() => s.diagnostics.some((d) => d.where === "refresh"), 10_000, "the report");
  assert.equal(version(), before);
  assert.match(
    s.diagnostics.find((d) => d.where === "refresh")!.message,
    /re-reading its tools failed; the previous tools stay: .*lists are broken/,
  );
  assert.deepEqual(s.runtime.refresh().refreshed, []);
  assert.equal(s.toolNames().includes("mcp__lc__extra_1"), true);
  assert.deepEqual(s.servers.get("lc")!.prompts, ["base"]);
  await s.close();
});

Deno.test("stderr and logging notifications go to the diagnostics", async () => {
  const s = scene([stdio("basic", "basic.ts")]);
  await s.runtime.start();
  await s.servers.ready(20_000);
  s.runtime.refresh();
  await until(() => s.logs.some((d) => d.message === "stderr: basic: ready"), 10_000, "stderr");
  await s.runtime.registries.tool.execute("mcp__basic__log", { text: "disk almost full" });
  await until(() => s.logs.some((d) => /disk almost full/.test(d.message)), 10_000, "the log");
  const log = s.logs.find((d) => /disk almost full/.test(d.message))!;
  assert.deepEqual(log, {
    pluginId: "mcp.basic",
    where: "log",
    message: "warning: [basic] disk almost full",
  });
  await s.close();
});

Deno.test("reconnect(name): a new process at once; an unknown name is an error", async () => {
  const s = scene([stdio("basic", "basic.ts")]);
  await s.runtime.start();
  await s.servers.ready(20_000);
  const first = s.pidOf("basic.ts");
  const state = await s.servers.reconnect("basic");
  assert.equal(state.status, "connected");
  const second = s.pidOf("basic.ts");
  assert.notEqual(second, first);
  assert.equal(await gone(first), true);
  await assert.rejects(() => s.servers.reconnect("nope"), UnknownMcpServerError);
  await s.close();
  assert.equal(await gone(second), true);
});

Deno.test("close() ends every server process", async () => {
  const s = scene([stdio("a", "basic.ts", "--name=a"), stdio("b", "basic.ts", "--name=b")]);
  await s.runtime.start();
  await s.servers.ready(20_000);
  const pids = s.spawned.map(({ pid }) => pid);
  assert.equal(pids.length, 2);
  await s.servers.close();
  for (const pid of pids) assert.equal(await gone(pid), true);
  await s.runtime.stop();
});

// What a server may ask of amber, with servers in memory.

function asker(): McpServer {
  const server = new McpServer({ name: "asker", version: "1.0.0" });
  server.registerTool("ask_model", { description: "Samples." }, async () => {
    const answer = await server.server.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "2+2?" } }],
      maxTokens: 10,
    });
    return { content: [{ type: "text", text: `model: ${JSON.stringify(answer.content)}` }] };
  });
  server.registerTool("ask_user", { description: "Elicits." }, async () => {
    const answer = await server.server.elicitInput({
      message: "Your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string" } } },
    });
    return {
      content: [{ type: "text", text: `user: ${answer.action} ${JSON.stringify(answer.content)}` }],
    };
  });
  server.registerTool("roots", { description: "Lists roots." }, async () => {
    const { roots } = await server.server.listRoots();
    return { content: [{ type: "text", text: JSON.stringify(roots) }] };
  });
  return server;
}

const memorySpec: McpServerSpec = {
  name: "asker",
  pluginId: "mcp.asker",
  entry: { transport: "stdio", command: "asker" },
  source: "/ws/.mcp.json",
  fromWorkspace: true,
};

Deno.test("sampling and elicitation: refused headless, answered once the session sets handlers", async () => {
  const s = scene([memorySpec], {
    connector: memoryConnector(asker).connect,
    workspace: "/tmp/my ws",
  });
  await s.runtime.start();
  await s.servers.ready(5_000);
  s.runtime.refresh();
  const tools = s.runtime.registries.tool;

  const sampled = await tools.execute("mcp__asker__ask_model", {});
  assert.equal(sampled.ok, false);
  assert.match(String(sampled.error), /amber has no one to ask \(headless\): sampling is declined/);
  // Headless, an elicitation is declined the way MCP says a user declines.
  const elicited = await tools.execute("mcp__asker__ask_user", {});
  assert.equal(elicited.ok, true, elicited.error);
  assert.equal(elicited.output, "user: decline undefined");

  const roots = await tools.execute("mcp__asker__roots", {});
  assert.deepEqual(JSON.parse(roots.output), [{ uri: "file:///tmp/my%20ws", name: "my ws" }]);

  const asked: string[] = [];
  s.servers.setHandlers({
    sample: (params, _signal, server): Promise<CreateMessageResult> => {
      asked.push(`${server}: sample ${params.maxTokens}`);
      return Promise.resolve({
        role: "assistant",
        model: "fake",
        content: { type: "text", text: "4" },
      });
    },
    elicit: (params, _signal, server) => {
      asked.push(`${server}: elicit ${params.message}`);
      return Promise.resolve({ action: "accept", content: { name: "Ada" } });
    },
  });
  assert.deepEqual(await tools.execute("mcp__asker__ask_model", {}), {
    ok: true,
    output: 'model: {"type":"text","text":"4"}',
  });
  assert.deepEqual(await tools.execute("mcp__asker__ask_user", {}), {
    ok: true,
    output: 'user: accept {"name":"Ada"}',
  });
  assert.deepEqual(asked, ["asker: sample 10", "asker: elicit Your name?"]);
  await s.close();
});

Deno.test("list, get, onChange and ready over servers that do not connect", async () => {
  const memory = memoryConnector(asker);
  const s = scene([memorySpec], { connector: memory.connect, connect: false });
  let changes = 0;
  const stop = s.servers.onChange(() => changes++);
  await s.runtime.start();
  await s.servers.ready(10_000);
  assert.equal(memory.attempts(), 0);
  assert.deepEqual(s.servers.list(), [{
    name: "asker",
    pluginId: "mcp.asker",
    source: "/ws/.mcp.json",
    state: { status: "idle" },
    tools: [],
    prompts: [],
    resources: [],
  }]);
  assert.equal(s.servers.get("other"), undefined);
  assert.equal(
    s.runtime.info("mcp.asker").plugin.description,
    "MCP server from /ws/.mcp.json: asker",
  );
  stop();
  const before = changes;
  await s.servers.reconnect("asker");
  assert.equal(changes, before);
  await s.close();
});

Deno.test("onChange tells of each state a server goes through", async () => {
  const s = scene([memorySpec], { connector: memoryConnector(asker).connect });
  const states: string[] = [];
  s.servers.onChange(() => {
    const now = status(s, "asker")!;
    if (states.at(-1) !== now) states.push(now);
  });
  await s.runtime.start();
  await s.servers.ready(5_000);
  assert.deepEqual(states, ["idle", "connecting", "connected"]);
  const view = s.servers.get("asker")!;
  assert.deepEqual(view.tools.map((tool) => tool.name), [
    "mcp__asker__ask_model",
    "mcp__asker__ask_user",
    "mcp__asker__roots",
  ]);
  await s.close();
  assert.deepEqual(states.at(-1), "idle");
});

Deno.test("with `after`, no server starts connecting before it settles (a front end's first frame)", async () => {
  const memory = memoryConnector(asker);
  const firstFrame = Promise.withResolvers<void>();
  const s = scene([memorySpec], { connector: memory.connect, after: firstFrame.promise });
  await s.runtime.start();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(memory.attempts(), 0);
  assert.equal(status(s, "asker"), "idle");
  firstFrame.resolve();
  await until(() => status(s, "asker") === "connected", 5_000, "the server to connect");
  assert.equal(memory.attempts(), 1);
  await s.servers.close();
  await s.runtime.stop();
});
