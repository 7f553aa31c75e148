// MCP servers: what amber adds to a tool call on top of the server's own time, and what
// configured servers, one of them slow to start, cost the time to the first prompt. The cases of a
// comparison alternate in one run and their order reverses every round, so a change in the
// machine's load falls on all of them alike; medians are printed, with ratios.
//
// deno run -A bench/mcp_bench.ts [--cases=call,run,interactive] [--slow=SECONDS] [rounds]
//
// call: one process holds three clients of the same stdio server (tests/mcp/_servers/basic.ts,
//   each its own process): the SDK's client over the SDK's stdio transport (the floor: the wire
//   and the server), the SDK's client over amber's connection (`connectServer`: amber's stdio
//   transport, framing and process group), and amber's kernel tool path (the server's plugin from
//   `McpServers`, its tool `mcp__basic__echo` run through the tool registry with argument
//   checking, as the kernel runs a call, result mapping and output cap included). Every round
//   times CALLS calls of `echo` and of `sleep` (5 ms of the server's own time) each way.
// run: `amber run` (a fresh process; the fake provider on loopback answers at once) with no
//   server, with 5 servers (the basic test server), and with 5 of which one starts only after
//   --slow seconds (2 by default), the last with the default `mcp.startupWait` (5 s) and with
//   `startupWait: 1`. Timed to the first request the model gets and to the end of the process;
//   beside it, the same 5 servers started at once by the SDK's client, to all initialized.
// interactive: `amber` in tmux with the same configurations, and with 5 "servers" that are idle
//   processes (`sleep`: never answer, take no CPU, so what is left is amber's own cost of having
//   servers): time until the prompt shows, and until the model gets the first request when "hi"
//   is typed as soon as it does. Skipped without tmux.

import { join } from "node:path";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { testPlugin } from "@amber/core/testing";
import { McpServers, parseServers } from "@amber/mcp";
// Not on the package's entry (its signature names the SDK's client): by path, as the tests do.
import { connectServer } from "../mcp/connect.ts";
import { benchArgs, inOrder, median } from "./_cases.ts";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { createRegistries } from "@amber/registries";

const HERE = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const SERVERS = join(HERE, "tests", "mcp", "_servers");
const MAIN = join(HERE, "cli", "main.ts");
const { rounds, wanted, option } = benchArgs(7);
const slowSeconds = Number(option("slow") ?? 2);
const CALLS = 200;
const SERVER_MS = 5;

const print = (line: string): void => console.log(line);
const ms = (x: number): string => x >= 1 ? `${x.toFixed(2)} ms` : `${(x * 1000).toFixed(0)} µs`;
const granted = (descriptor: Deno.PermissionDescriptor): boolean =>
  Deno.permissions.querySync(descriptor).state === "granted";
const load = (): string =>
  granted({ name: "sys", kind: "loadavg" })
    ? `load average ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`
    : "load average unknown";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A stdio entry running test server `name` with this Deno. */
function serverEntry(name: string, options: readonly string[] = []) {
  return { command: Deno.execPath(), args: ["run", "-A", join(SERVERS, `${name}.ts`), ...options] };
}

/** One way of calling a tool of the basic server. */
interface Way {
  readonly label: string;
  call(tool: "echo" | "sleep", args: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

function textOf(result: unknown): string {
  const content = (result as { content?: { text?: string }[] }).content ?? [];
  return content.map((part) => part.text ?? "").join("");
}

async function sdkWay(): Promise<Way> {
  const { command, args } = serverEntry("basic");
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
  return {
    label: "SDK client, SDK stdio transport",
    call: async (name, args) => textOf(await client.callTool({ name, arguments: args })),
    close: () => client.close(),
  };
}

async function connectionWay(workspace: string, configDir: string): Promise<Way> {
  const [spec] = parseServers({ basic: serverEntry("basic") }, "config.yaml", false).servers;
  const connection = await connectServer({
    spec,
    env: Deno.env.toObject(),
    workspace,
    configDir,
    handlers: { roots: () => [] },
    onStderr: () => {},
    timeoutMs: 30_000,
  });
  return {
    label: "SDK client, amber's connection",
    call: async (name, args) => textOf(await connection.client.callTool({ name, arguments: args })),
    close: () => connection.close(),
  };
}

async function kernelWay(workspace: string, configDir: string): Promise<Way> {
  const { servers: specs } = parseServers(
    { basic: serverEntry("basic") },
    "config.yaml",
    false,
  );
  const servers = new McpServers({
    specs,
    connect: true,
    env: Deno.env.toObject(),
    workspace,
    configDir,
  });
  const host = await testPlugin(servers.plugins()[0], {
    registries: createRegistries(),
    workspace,
    timeoutMs: 30_000,
  });
  await servers.ready(30_000);
  host.runtime.refresh();
  if (!host.tools().includes("mcp__basic__echo")) {
    throw new Error(`the server's tools did not arrive: ${host.tools().join(", ")}`);
  }
  return {
    label: "amber's kernel tool path",
    call: async (name, args) => {
      const result = await host.execute(`mcp__basic__${name}`, args);
      if (!result.ok) throw new Error(`mcp__basic__${name} failed: ${result.error}`);
      return result.output;
    },
    close: async () => {
      await host[Symbol.asyncDispose]();
      await servers.close();
    },
  };
}

async function callCase(): Promise<void> {
  const workspace = await Deno.makeTempDir({ prefix: "amber-bench-mcp-ws-" });
  const configDir = await Deno.makeTempDir({ prefix: "amber-bench-mcp-" });
  const ways = [
    await sdkWay(),
    await connectionWay(workspace, configDir),
    await kernelWay(workspace, configDir),
  ];
  const tools = [
    { tool: "echo" as const, args: (i: number) => ({ text: `hi ${i}` }), expect: /^hi \d+$/ },
    { tool: "sleep" as const, args: () => ({ ms: SERVER_MS }), expect: /^slept/ },
  ];
  const samples = new Map<string, number[]>();
  const callAll = async (way: Way, tool: (typeof tools)[number], keep: boolean) => {
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      const text = await way.call(tool.tool, tool.args(i));
      times.push(performance.now() - start);
      if (!tool.expect.test(text)) throw new Error(`${way.label}: ${tool.tool} said ${text}`);
    }
    // A round's median per call: one figure per round, so a burst of load moves one sample.
    if (keep) {
      const key = `${way.label}|${tool.tool}`;
      samples.set(key, [...(samples.get(key) ?? []), median(times)]);
    }
  };
  for (const way of ways) for (const tool of tools) await callAll(way, tool, false);
  for (let round = 0; round < rounds; round++) {
    for (const way of inOrder(round, ways)) {
      for (const tool of tools) await callAll(way, tool, true);
    }
  }
  for (const way of ways) await way.close();
  print(`one tool call of the same stdio server (${rounds} rounds x ${CALLS} calls; ${load()}):`);
  for (const tool of tools) {
    const floor = median(samples.get(`${ways[0].label}|${tool.tool}`)!);
    const what = tool.tool === "echo"
      ? "echo (the server answers at once)"
      : `sleep ${SERVER_MS} ms`;
    print(`  ${what}:`);
    for (const way of ways) {
      const x = median(samples.get(`${way.label}|${tool.tool}`)!);
      const extra = way === ways[0]
        ? ""
        : `  ${x >= floor ? "+" : "-"}${ms(Math.abs(x - floor))} (${
          (x / floor).toFixed(2)
        }x the SDK's)`;
      print(`    ${way.label.padEnd(32)} ${ms(x).padStart(9)}${extra}`);
    }
  }
  await Deno.remove(workspace, { recursive: true });
  await Deno.remove(configDir, { recursive: true });
}

/** A configuration of servers for the start-up cases. */
interface Setup {
  readonly label: string;
  readonly config: string;
  /** Measured in the interactive case only (`amber run` would wait its whole startupWait). */
  readonly interactiveOnly?: boolean;
}

function setups(): Setup[] {
  const fast = (i: number) => [`s${i}`, serverEntry("basic", [`--name=s${i}`])];
  const slow = ["slow", serverEntry("slow", [`--seconds=${slowSeconds}`])];
  // A process that never answers and takes no CPU: what having servers costs amber itself.
  const idle = (i: number) => [`idle${i}`, { command: "sleep", args: ["600"] }];
  const yaml = (servers: unknown[][], wait?: number) =>
    JSON.stringify({
      mcp: {
        ...(wait === undefined ? {} : { startupWait: wait }),
        servers: Object.fromEntries(servers),
      },
    });
  const fourAndSlow = [...[1, 2, 3, 4].map(fast), slow];
  return [
    { label: "no server", config: "" },
    { label: "5 servers", config: yaml([1, 2, 3, 4, 5].map(fast)) },
    { label: `5 servers, one slow (${slowSeconds} s)`, config: yaml(fourAndSlow) },
    { label: `the same, startupWait: 1`, config: yaml(fourAndSlow, 1) },
    {
      label: "5 idle processes (sleep 600)",
      config: yaml([1, 2, 3, 4, 5].map(idle)),
      interactiveOnly: true,
    },
  ];
}

interface Dirs {
  readonly config: string;
  readonly workspace: string;
}

async function prepare(setup: Setup): Promise<Dirs> {
  const config = await Deno.makeTempDir({ prefix: "amber-bench-mcp-" });
  const workspace = await Deno.makeTempDir({ prefix: "amber-bench-mcp-ws-" });
  if (setup.config !== "") await Deno.writeTextFile(`${config}/config.yaml`, setup.config);
  return { config, workspace };
}

const ENV = (dirs: Dirs) => ({
  AMBER_CONFIG_DIR: dirs.config,
  INIT_CWD: dirs.workspace,
  OPENAI_API_KEY: "sk-bench",
  NO_COLOR: "1",
});

/** Waits until the provider has `count` requests; the time it took from `start`, in ms. */
async function firstRequest(provider: FakeProvider, count: number, start: number) {
  while (provider.chats.length < count) {
    if (performance.now() - start > 60_000) throw new Error("no request within 60 s");
    await sleep(5);
  }
  return performance.now() - start;
}

async function runCase(provider: FakeProvider): Promise<void> {
  const all = setups().filter((setup) => !setup.interactiveOnly);
  const dirs = new Map<Setup, Dirs>();
  for (const setup of all) dirs.set(setup, await prepare(setup));
  const first = new Map<Setup, number[]>(all.map((s) => [s, []]));
  const whole = new Map<Setup, number[]>(all.map((s) => [s, []]));
  const once = async (setup: Setup, keep: boolean) => {
    const at = dirs.get(setup)!;
    provider.script({ text: "hello" });
    const before = provider.chats.length;
    const start = performance.now();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "run", "hi", "--base-url", `${provider.url}/v1`],
      env: ENV(at),
      cwd: at.workspace,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const toFirst = await firstRequest(provider, before + 1, start);
    const status = await child.status;
    if (!status.success) throw new Error(`amber run failed with ${setup.label}`);
    if (keep) {
      first.get(setup)!.push(toFirst);
      whole.get(setup)!.push(performance.now() - start);
    }
  };
  // The servers' own start, for scale: the five started at once by the SDK's client, until every
  // one answered initialize.
  const own: number[] = [];
  const ownStart = async (keep: boolean) => {
    const start = performance.now();
    const clients = await Promise.all([1, 2, 3, 4, 5].map(async (i) => {
      const { command, args } = serverEntry("basic", [`--name=s${i}`]);
      const client = new Client({ name: "bench", version: "1.0.0" });
      await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
      return client;
    }));
    if (keep) own.push(performance.now() - start);
    await Promise.all(clients.map((client) => client.close()));
  };
  for (const setup of all) await once(setup, false);
  await ownStart(false);
  for (let round = 0; round < rounds; round++) {
    for (const setup of inOrder(round, all)) await once(setup, true);
    await ownStart(true);
  }
  print(`amber run "hi" (${rounds} rounds; ${load()}): to the first request / to exit, median`);
  const floor = median(first.get(all[0])!);
  for (const setup of all) {
    const a = median(first.get(setup)!);
    const b = median(whole.get(setup)!);
    print(
      `  ${setup.label.padEnd(34)} ${ms(a).padStart(11)} (${(a / floor).toFixed(2)}x) / ${
        ms(b).padStart(11)
      }`,
    );
  }
  print(`  (the 5 servers' own start, SDK client, in parallel: ${ms(median(own))})`);
  for (const at of dirs.values()) {
    await Deno.remove(at.config, { recursive: true });
    await Deno.remove(at.workspace, { recursive: true });
  }
}

function hasTmux(): boolean {
  try {
    return new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

const quote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

async function tmux(socket: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command("tmux", {
    args: ["-L", socket, "-f", "/dev/null", ...args],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(output.stdout);
}

const PROMPT = /^›\s*$/m;

async function interactiveCase(provider: FakeProvider): Promise<void> {
  if (!hasTmux()) {
    print("interactive: skipped (no tmux)");
    return;
  }
  const all = setups();
  const dirs = new Map<Setup, Dirs>();
  for (const setup of all) dirs.set(setup, await prepare(setup));
  const shown = new Map<Setup, number[]>(all.map((s) => [s, []]));
  const sent = new Map<Setup, number[]>(all.map((s) => [s, []]));
  const once = async (setup: Setup, keep: boolean) => {
    const at = dirs.get(setup)!;
    const socket = `amber-bench-${crypto.randomUUID().slice(0, 8)}`;
    const env = Object.entries({ ...ENV(at), TERM: "xterm-256color" })
      .map(([k, v]) => `${k}=${quote(v)}`).join(" ");
    provider.script({ text: "hello" });
    const before = provider.chats.length;
    const start = performance.now();
    await tmux(
      socket,
      "new-session",
      "-d",
      "-x",
      "100",
      "-y",
      "30",
      `cd ${quote(at.workspace)} && env ${env} ${quote(Deno.execPath())} run -A ${quote(MAIN)} ` +
        `--base-url ${quote(`${provider.url}/v1`)}; sleep 60`,
    );
    try {
      while (!PROMPT.test(await tmux(socket, "capture-pane", "-p"))) {
        if (performance.now() - start > 60_000) throw new Error("no prompt within 60 s");
        await sleep(5);
      }
      const toPrompt = performance.now() - start;
      await tmux(socket, "send-keys", "-l", "hi");
      await tmux(socket, "send-keys", "Enter");
      const toFirst = await firstRequest(provider, before + 1, start);
      if (keep) {
        shown.get(setup)!.push(toPrompt);
        sent.get(setup)!.push(toFirst);
      }
    } finally {
      await tmux(socket, "kill-server");
    }
  };
  for (const setup of all) await once(setup, false);
  for (let round = 0; round < rounds; round++) {
    for (const setup of inOrder(round, all)) await once(setup, true);
  }
  print(
    `amber interactive (${rounds} rounds; ${load()}): to the prompt / to the first request ` +
      `("hi" typed when the prompt shows), median`,
  );
  const floor = median(shown.get(all[0])!);
  for (const setup of all) {
    const a = median(shown.get(setup)!);
    const b = median(sent.get(setup)!);
    print(
      `  ${setup.label.padEnd(34)} ${ms(a).padStart(11)} (${(a / floor).toFixed(2)}x) / ${
        ms(b).padStart(11)
      }`,
    );
  }
  for (const at of dirs.values()) {
    await Deno.remove(at.config, { recursive: true });
    await Deno.remove(at.workspace, { recursive: true });
  }
}

// `deno task bench` finds this file too, without the permission to start processes; there it
// says how to run it instead.
if (!granted({ name: "run", command: Deno.execPath() })) {
  print("bench/mcp_bench.ts starts MCP servers and amber: deno run -A bench/mcp_bench.ts");
} else {
  if (wanted("call")) await callCase();
  if (wanted("run") || wanted("interactive")) {
    const provider = await FakeProvider.start({ encoders: [openaiEncoder] });
    try {
      if (wanted("run")) await runCase(provider);
      if (wanted("interactive")) await interactiveCase(provider);
    } finally {
      await provider.close();
    }
  }
}
