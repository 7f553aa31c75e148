// A third-party plugin in its own process beside the same plugin in amber's process: a tool call
// round trip, the start of one plugin, the memory and CPU of one plugin process, and `amber run`
// with 5 such plugins sandboxed against the same 5 `trusted` (in-process). The cases of a comparison
// alternate in one run and their order reverses every round, so a change in the machine's load
// falls on both alike; medians and ratios are printed.
//
// deno run -A bench/sandbox_bench.ts [--cases=call,memory,start,process,run] [--bundle=FILE]
//   [rounds]
//
// call: after a warm-up, every round times CALLS tool calls one by one through each host (the
//   plugin's `echo` tool, via the tool registry as the kernel calls it).
// start: every round starts the plugin afresh each way: sandboxed is spawn + describe +
//   initialize + install; in-process is import (a fresh module instance) + register +
//   initialize + install. Both through `testPluginModule` of `@amber/core/testing`.
// memory: the plugin process's VmRSS (from /proc) after start and after the call case's calls,
//   beside this process's own RSS (a host with the runtime and registries loaded).
// process: one plugin process alone, started as amber starts it, answering describe and
//   initialize, beside `deno run` of a one-line file (Deno's floor), in CPU and peak RSS; with
//   --bundle=FILE (`deno task bundle` writes dist/amber.js) also as the single-file amber starts
//   it, with the bundle as the plugin process's entry.
// run: `amber run` (a fresh process, FakeProvider on loopback scripting one call to the first
//   plugin's tool, then the answer) with no third-party plugin, with 5 trusted and with 5
//   sandboxed, under /usr/bin/time -v (and `perf stat` for CPU where it may run, as in
//   bench/command_bench.ts). CPU includes the plugin processes (amber waits for them).

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type TestHost, testPluginModule } from "@amber/core/testing";
import { Method, pluginProcessCommand, PROTOCOL_VERSION } from "@amber/core/sandbox";
import { benchArgs, inOrder, median } from "./_cases.ts";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { createRegistries } from "@amber/registries";

const HERE = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const { rounds, wanted, option } = benchArgs(9);
const bundle = option("bundle");
const CALLS = 500;
const PLUGINS = 5;

const print = (line: string): void => console.log(line);
const quantile = (xs: readonly number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const ms = (x: number): string => x >= 1 ? `${x.toFixed(2)} ms` : `${(x * 1000).toFixed(1)} µs`;
const mb = (kb: number): string => `${(kb / 1024).toFixed(1)} MB`;
// `deno task bench` finds this file too, without the permission to start a plugin process
// (nor to read the load average); there it says how to run it instead.
const granted = (descriptor: Deno.PermissionDescriptor): boolean =>
  Deno.permissions.querySync(descriptor).state === "granted";
const load = (): string =>
  granted({ name: "sys", kind: "loadavg" })
    ? `load average ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`
    : "load average unknown";

// The plugin as an author would write it: a factory over the host API with one tool, asking for
// no permissions (so the sandboxed start spawns once).
function pluginSource(id: string, tool: string): string {
  return `export default (api) => ({
  id: ${JSON.stringify(id)},
  version: "1.0.0",
  name: ${JSON.stringify(`Bench ${id}`)},
  bound: { tools: api.exact(${JSON.stringify(tool)}) },
  initialize: () => true,
  shutdown() {},
  capabilities: () => [{
    kind: "tool",
    name: ${JSON.stringify(tool)},
    tools: [{
      name: ${JSON.stringify(tool)},
      description: "Echo the text.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      readOnly: true,
      execute: (args) => ({ ok: true, output: args.text }),
    }],
  }],
});
`;
}

async function writePlugin(work: string, id: string, tool: string): Promise<string> {
  const dir = join(work, id);
  await Deno.mkdir(dir, { recursive: true });
  const file = join(dir, "mod.js");
  await Deno.writeTextFile(file, pluginSource(id, tool));
  return file;
}

function statusKb(pid: number | "self", field: "VmRSS" | "VmHWM"): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]);
}

const host = (module: URL, sandboxed: boolean): Promise<TestHost> =>
  testPluginModule(module, { registries: createRegistries(), sandboxed });

async function callAndMemory(module: URL): Promise<void> {
  const inProcess = await host(module, false);
  const sandboxed = await host(module, true);
  const pid = sandboxed.pid!;
  const afterStartKb = statusKb(pid, "VmRSS");
  const samples = { inProcess: [] as number[], sandboxed: [] as number[] };
  const callAll = async (which: TestHost, into?: number[]): Promise<void> => {
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      const result = await which.execute("echo", { text: `hi ${i}` });
      const took = performance.now() - start;
      if (result.output !== `hi ${i}`) throw new Error(`echo answered ${JSON.stringify(result)}`);
      into?.push(took);
    }
  };
  await callAll(inProcess);
  await callAll(sandboxed);
  if (wanted("call")) {
    for (let round = 0; round < rounds; round++) {
      for (const way of inOrder(round, ["inProcess", "sandboxed"] as const)) {
        await callAll(way === "inProcess" ? inProcess : sandboxed, samples[way]);
      }
    }
    const a = median(samples.inProcess);
    const b = median(samples.sandboxed);
    print(`tool call round trip (${rounds} x ${CALLS} calls each way), median / p90:`);
    print(`  in-process: ${ms(a)} / ${ms(quantile(samples.inProcess, 0.9))}`);
    print(
      `  sandboxed:  ${ms(b)} / ${ms(quantile(samples.sandboxed, 0.9))}  ` +
        `(${(b / a).toFixed(1)}x in-process; target under 1 ms: ${b < 1 ? "met" : "NOT met"})`,
    );
  }
  if (wanted("memory")) {
    print("memory:");
    print(`  one plugin process, VmRSS after start: ${mb(afterStartKb)}`);
    print(
      `  the same after ${CALLS * (1 + (wanted("call") ? rounds : 0))} calls: ` +
        `${mb(statusKb(pid, "VmRSS"))} (peak ${mb(statusKb(pid, "VmHWM"))})`,
    );
    print(
      `  this host process (runtime, registries, both hosts): ${mb(statusKb("self", "VmRSS"))}`,
    );
  }
  await inProcess[Symbol.asyncDispose]();
  await sandboxed[Symbol.asyncDispose]();
  try {
    Deno.statSync(`/proc/${pid}`);
    throw new Error(`the plugin process ${pid} outlived its host's disposal`);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

async function startCase(module: URL): Promise<void> {
  const samples = { inProcess: [] as number[], sandboxed: [] as number[] };
  let fresh = 0;
  const start = async (sandboxed: boolean, into?: number[]): Promise<void> => {
    // A query makes a new module instance, so the in-process import is not a cache hit.
    const began = performance.now();
    const started = await host(new URL(`${module.href}?start=${fresh++}`), sandboxed);
    into?.push(performance.now() - began);
    await started[Symbol.asyncDispose]();
  };
  await start(false);
  await start(true);
  for (let round = 0; round < rounds; round++) {
    for (const way of inOrder(round, ["inProcess", "sandboxed"] as const)) {
      await start(way === "sandboxed", samples[way]);
    }
  }
  const a = median(samples.inProcess);
  const b = median(samples.sandboxed);
  print(`start of one plugin (${rounds} each way), median:`);
  print(`  in-process (import + register + initialize): ${ms(a)}`);
  print(`  sandboxed (spawn + describe + initialize):   ${ms(b)}  (${(b / a).toFixed(1)}x)`);
}

const PERF = "/usr/bin/perf";
const perf = granted({ name: "run", command: PERF }) && exists(PERF);

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

interface Timed {
  readonly ms: number;
  readonly cpuMs: number;
  readonly kb: number;
  readonly out: string;
}

// Runs `argv` under /usr/bin/time -v (peak RSS) and, where it may, `perf stat` (CPU to the
// microsecond, which a loaded machine needs; else time's user + system, in steps of 10 ms). The
// CPU counts the process and every process it waited for.
async function timed(
  argv: readonly string[],
  options: { env: Record<string, string>; cwd: string; clearEnv?: boolean; input?: string },
): Promise<Timed> {
  const time = ["/usr/bin/time", "-v", ...argv];
  const [command, ...args] = perf ? [PERF, "stat", "-x,", "-e", "task-clock", ...time] : time;
  const began = performance.now();
  const child = new Deno.Command(command, {
    args,
    env: options.env,
    clearEnv: options.clearEnv ?? false,
    cwd: options.cwd,
    stdin: options.input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // A plugin process exits when its stdin closes, so it stays open until every request is
  // answered (one line each).
  const answers = (async () => {
    let text = "";
    const decoder = new TextDecoder();
    const writer = options.input === undefined ? undefined : child.stdin.getWriter();
    await writer?.write(new TextEncoder().encode(options.input));
    const expected = options.input?.split("\n").length ?? 0;
    let open = writer !== undefined;
    for await (const chunk of child.stdout) {
      text += decoder.decode(chunk, { stream: true });
      if (open && text.split("\n").length >= expected) {
        open = false;
        await writer!.close();
      }
    }
    if (open) await writer!.close().catch(() => {});
    return text;
  })();
  const [out, status, report] = await Promise.all([
    answers,
    child.status,
    new Response(child.stderr).text(),
  ]);
  const ms = performance.now() - began;
  if (!status.success) throw new Error(`${argv.join(" ")} failed:\n${report}\n${out}`);
  const seconds = (label: string) =>
    Number(new RegExp(`${label} time \\(seconds\\): ([\\d.]+)`).exec(report)![1]);
  const counted = /^([\d.]+),msec,task-clock/m.exec(report);
  return {
    ms,
    cpuMs: counted !== null ? Number(counted[1]) : (seconds("User") + seconds("System")) * 1000,
    kb: Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(report)![1]),
    out,
  };
}

// One plugin process on its own, started exactly as amber starts it (`pluginProcessCommand`:
// the same flags and environment), answering `describe` and `initialize` and exiting when its
// stdin closes, beside `deno run` of a one-line file: what each sandboxed plugin adds to a
// start, whatever the host does meanwhile.
async function processCase(work: string, module: URL): Promise<void> {
  const command = pluginProcessCommand({
    specifier: module.href,
    pluginId: "echo",
    grant: {},
    workspace: work,
    dataDir: work,
    readFolders: [dirname(fileURLToPath(module))],
  });
  const requests = [
    { method: Method.describe, params: { protocolVersion: PROTOCOL_VERSION, hostVersion: "0" } },
    {
      method: Method.initialize,
      params: {
        pluginId: "echo",
        workspace: work,
        config: { plugins: {} },
        section: null,
        tools: [],
        services: {},
      },
    },
  ].map((request, i) => JSON.stringify({ jsonrpc: "2.0", id: i + 1, ...request }) + "\n");
  const oneLine = join(work, "one_line.js");
  await Deno.writeTextFile(oneLine, "console.log(1);\n");
  const answered = (sample: Timed): Timed => {
    if (sample.out.includes('"capabilities"')) return sample;
    throw new Error(`the plugin process did not initialize:\n${sample.out}`);
  };
  const run = (args: readonly string[], input?: string) =>
    timed([command.command, ...args], {
      env: { ...command.env },
      clearEnv: true,
      cwd: command.cwd,
      ...(input === undefined ? {} : { input }),
    });
  const cases: { [way: string]: { what: string; run: () => Promise<Timed> } } = {
    floor: { what: "deno run of a one-line file (floor)", run: () => run(["run", oneLine]) },
    source: {
      what: "plugin process from source, describe + initialize",
      run: async () => answered(await run(command.args, requests.join(""))),
    },
  };
  if (bundle !== undefined) {
    // As the single-file amber starts it: the bundle is the entry, and no deno.json applies.
    const [at, count] = command.args.includes("--config")
      ? [command.args.indexOf("--config"), 2]
      : [command.args.indexOf("--no-config"), 1];
    const args = [...command.args.slice(0, at), "--no-config", ...command.args.slice(at + count)];
    const entry = args.indexOf(new URL("../core/sandbox/child_main.ts", import.meta.url).href);
    const path = Deno.realPathSync(bundle);
    args.splice(entry, 1, `file://${path}`, "--amber-plugin-process");
    const read = args.findIndex((arg) => arg.startsWith("--allow-read="));
    args[read] = `--allow-read=${dirname(fileURLToPath(module))},${dirname(path)}`;
    cases.bundle = {
      what: "plugin process from the bundle, describe + initialize",
      run: async () => answered(await run(args, requests.join(""))),
    };
  }
  const ways = Object.keys(cases);
  const samples = new Map<string, Timed[]>(ways.map((way) => [way, []]));
  for (let round = -1; round < rounds; round++) {
    for (const way of inOrder(round, ways)) {
      const sample = await cases[way].run();
      if (round >= 0) samples.get(way)!.push(sample);
    }
  }
  const of = (way: string, key: "cpuMs" | "kb") => median(samples.get(way)!.map((x) => x[key]));
  print(
    `one plugin process alone (${rounds} rounds, medians, CPU from ${perf ? "perf" : "time"}):`,
  );
  for (const way of ways) {
    const versus = way === "floor"
      ? ""
      : ` (${(of(way, "cpuMs") / of("floor", "cpuMs")).toFixed(2)}x floor)`;
    print(
      `  ${cases[way].what}: CPU ${of(way, "cpuMs").toFixed(1)} ms${versus}, ` +
        `peak RSS ${mb(of(way, "kb"))}`,
    );
  }
}

async function runCase(work: string): Promise<void> {
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const workspace = join(work, "workspace");
  await Deno.mkdir(workspace, { recursive: true });
  const amber = ["run", "-A", join(HERE, "cli", "main.ts")];
  const files: string[] = [];
  for (let i = 1; i <= PLUGINS; i++) files.push(await writePlugin(work, `bench${i}`, `tool_${i}`));
  const configs = {
    none: join(work, "none"),
    trusted: join(work, "trusted"),
    sandboxed: join(work, "sandboxed"),
  };
  const amberIn = async (configDir: string, args: readonly string[]): Promise<string> => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [...amber, ...args],
      env: { AMBER_CONFIG_DIR: configDir, NO_COLOR: "1" },
      cwd: workspace,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      const text = new TextDecoder().decode(output.stderr) +
        new TextDecoder().decode(output.stdout);
      throw new Error(`amber ${args.join(" ")} failed:\n${text}`);
    }
    return new TextDecoder().decode(output.stdout);
  };
  for (const dir of Object.values(configs)) await Deno.mkdir(dir, { recursive: true });
  for (const file of files) {
    await amberIn(configs.trusted, ["plugins", "add", file, "--trusted"]);
    await amberIn(configs.sandboxed, ["plugins", "add", file]);
  }
  // What is measured must be what it says: every plugin listed active, and run the way named.
  for (const way of ["trusted", "sandboxed"] as const) {
    const list = await amberIn(configs[way], ["plugins", "list"]);
    const rows = list.split("\n").filter((row) => /^\s+bench\d /.test(row));
    if (rows.length !== PLUGINS || !rows.every((row) => / active .*\((\w+)\)$/.test(row))) {
      throw new Error(`the ${way} plugins are not all active:\n${list}`);
    }
    if (!rows.every((row) => row.endsWith(`(${way})`))) {
      throw new Error(`the plugins are not all ${way}:\n${list}`);
    }
  }

  type Way = keyof typeof configs;
  const samples = new Map<Way, Timed[]>(
    (Object.keys(configs) as Way[]).map((way) => [way, []]),
  );
  const measure = async (way: Way) => {
    server.script(
      { toolCalls: [{ name: "tool_1", arguments: { text: "forty-two" } }] },
      { text: "It says forty-two.", usage: { promptTokens: 50, completionTokens: 5 } },
    );
    const sample = await timed(
      [Deno.execPath(), ...amber, "run", "echo forty-two", "--base-url", `${server.url}/v1`],
      {
        env: { AMBER_CONFIG_DIR: configs[way], OPENAI_API_KEY: "sk-bench", NO_COLOR: "1" },
        cwd: workspace,
      },
    );
    if (!sample.out.includes("forty-two")) {
      throw new Error(`amber run (${way}) did not answer:\n${sample.out}`);
    }
    return sample;
  };
  const ways = Object.keys(configs) as Way[];
  for (let round = -1; round < rounds; round++) {
    for (const way of inOrder(round, ways)) {
      const sample = await measure(way);
      if (round >= 0) samples.get(way)!.push(sample);
    }
  }
  const of = (way: Way, key: "ms" | "cpuMs" | "kb") => median(samples.get(way)!.map((s) => s[key]));
  print(
    `amber run, one tool round trip to a third-party plugin's tool (${rounds} rounds, medians; ` +
      `CPU from ${perf ? "perf stat" : "time"}, with the plugin processes):`,
  );
  for (const way of ways) {
    const versus = way === "none"
      ? ""
      : `  [${(of(way, "ms") / of("trusted", "ms")).toFixed(2)}x / ` +
        `${(of(way, "cpuMs") / of("trusted", "cpuMs")).toFixed(2)}x trusted]`;
    const label = way === "none" ? "no third-party plugin" : `${PLUGINS} ${way}`;
    print(
      `  ${label.padEnd(21)} wall ${of(way, "ms").toFixed(1)} ms, CPU ${
        of(way, "cpuMs").toFixed(1)
      } ms, peak RSS of amber ${mb(of(way, "kb"))}${versus}`,
    );
  }
  await server.close();
}

if (!granted({ name: "run", command: Deno.execPath() })) {
  print("bench/sandbox_bench.ts starts plugin processes: deno run -A bench/sandbox_bench.ts");
} else {
  const work = await Deno.makeTempDir({ prefix: "amber-sandbox-bench-" });
  try {
    const module = new URL(`file://${await writePlugin(work, "echo", "echo")}`);
    print(`sandbox bench, ${rounds} rounds, Deno ${Deno.version.deno}; ${load()}`);
    if (wanted("call") || wanted("memory")) await callAndMemory(module);
    if (wanted("start")) await startCase(module);
    if (wanted("process")) await processCase(work, module);
    if (wanted("run")) await runCase(work);
    print(`at the end, ${load()}`);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}
