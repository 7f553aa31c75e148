// Whole commands, each run a fresh process under /usr/bin/time -v, beside Deno's floor (`deno run`
// of a one-line file): `amber --version`, `amber plugins list`, `amber run` with one tool round
// trip against the fake provider, and `amber demo`, each run with the flags of the checkout's
// `deno task amber`. Wall time is taken around the spawn; peak
// memory comes from time's report, and so does CPU time (user + system, in steps of 10 ms) unless
// this may run `perf`: then `perf stat` counts it to the microsecond, which a loaded machine,
// where wall time mostly measures the others' work, needs. One warm-up round is discarded (Deno's module cache is
// then warm, as for any second run); the cases alternate and their order reverses every round, so
// a change in the machine's load falls on every case alike. Medians are printed.
//
// deno run -A bench/command_bench.ts [--cases=version,plugins,run,demo] [--installed | --task]
//   [rounds] [checkout...]
//
// Without checkouts it measures this one. With several (`/tmp/before .`), every case runs from each
// of them in the same rounds and the ratio to the first checkout is printed: a before/after
// comparison taken in one run. With `--installed`, a checkout that has a `deno task install` is
// installed into a temporary root first and its `amber` command is what runs (a checkout without
// one runs as its `deno task amber` does, which is how its users ran amber). With `--task`, each
// checkout runs as its users type it there: `deno task -q amber ...` (with `--config` naming the
// checkout's deno.json, from the bench's workspace, which amber takes from INIT_CWD), so the task
// runner's own start, its check of node_modules and whatever the task runs before amber count too.

import { median } from "./_cases.ts";
import { amberTaskFlags } from "../tools/amber_task.ts";
import { fileURLToPath } from "node:url";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";

const HERE = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const only = Deno.args.find((arg) => arg.startsWith("--cases="))?.slice("--cases=".length);
const installed = Deno.args.includes("--installed");
const task = !installed && Deno.args.includes("--task");
const [roundsArg, ...dirs] = Deno.args.filter((arg) => !arg.startsWith("--"));
const rounds = Number(roundsArg ?? 9);
const checkouts = dirs.length > 0 ? dirs.map((dir) => Deno.realPathSync(dir)) : [HERE];

const server = await FakeProvider.start({ encoders: [openaiEncoder] });
const configDir = await Deno.makeTempDir({ prefix: "amber-bench-" });
const workspace = await Deno.makeTempDir({ prefix: "amber-bench-ws-" });
// `amber demo` keeps its workspace and transcript in a temporary folder for the user to look at:
// every round's go there, removed with the rest at the end.
const tmpDir = await Deno.makeTempDir({ prefix: "amber-bench-tmp-" });
// amber's cache folder (the price table's answers): the bench's own, not the user's; warm after
// the first round, as a user's is.
const cacheDir = `${tmpDir}/cache`;
await Deno.writeTextFile(`${workspace}/notes.txt`, "forty-two\n");
const oneLine = `${workspace}/one_line.ts`;
await Deno.writeTextFile(oneLine, "console.log(1);\n");

interface Case {
  /** The short name `--cases` picks it by. */
  readonly key?: string;
  /** What runs, the same words for every checkout. */
  readonly what: string;
  /** The checkout, or undefined for the floor. */
  readonly checkout?: string;
  /** The program and its arguments. */
  readonly args: readonly string[];
  readonly before?: () => void;
}

const scriptOneToolCall = () =>
  server.script(
    { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
    { text: "It says forty-two.", usage: { promptTokens: 50, completionTokens: 5 } },
  );

const cases: Case[] = [
  { what: "deno run of a one-line file (floor)", args: [Deno.execPath(), "run", oneLine] },
];

// The checkout's `deno task install` into a temporary root: its `amber` command, or undefined when
// the checkout has no such task.
async function install(checkout: string): Promise<string | undefined> {
  const config = JSON.parse(Deno.readTextFileSync(`${checkout}/deno.json`));
  if (config.tasks?.install === undefined) return undefined;
  const root = await Deno.makeTempDir({ prefix: "amber-bench-root-" });
  roots.push(root);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "install"],
    cwd: checkout,
    env: { DENO_INSTALL_ROOT: root },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(
      `deno task install failed in ${checkout}:\n${new TextDecoder().decode(output.stderr)}`,
    );
  }
  return `${root}/bin/amber`;
}
const roots: string[] = [];
const forms: string[] = [];

for (const checkout of checkouts) {
  const command = installed ? await install(checkout) : undefined;
  const [form, amber]: [string, string[]] = command !== undefined
    ? ["installed", [command]]
    : task
    ? ["deno task -q amber", [
      Deno.execPath(),
      "task",
      "-q",
      "--config",
      `${checkout}/deno.json`,
      "amber",
    ]]
    : ["as its deno task amber runs", [
      Deno.execPath(),
      "run",
      "-A",
      ...amberTaskFlags(checkout),
      `${checkout}/cli/main.ts`,
    ]];
  forms.push(`${checkout}: ${form}`);
  const mine: Case[] = [
    { key: "version", what: "amber --version", checkout, args: [...amber, "--version"] },
    { key: "plugins", what: "amber plugins list", checkout, args: [...amber, "plugins", "list"] },
    {
      key: "run",
      what: "amber run, one tool round trip",
      checkout,
      args: [...amber, "run", "what is in notes.txt?", "--base-url", `${server.url}/v1`],
      before: scriptOneToolCall,
    },
    { key: "demo", what: "amber demo", checkout, args: [...amber, "demo"] },
  ];
  cases.push(...mine.filter((c) => only === undefined || only.split(",").includes(c.key!)));
}

interface Sample {
  readonly ms: number;
  readonly cpuMs: number;
  readonly mb: number;
}

const PERF = "/usr/bin/perf";
const perf = Deno.permissions.querySync({ name: "run", command: PERF }).state === "granted" &&
  isFile(PERF);

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

async function measure(c: Case): Promise<Sample> {
  c.before?.();
  const time = ["/usr/bin/time", "-v", ...c.args];
  const [command, ...args] = perf ? [PERF, "stat", "-x,", "-e", "task-clock", ...time] : time;
  const start = performance.now();
  const output = await new Deno.Command(command, {
    args,
    env: {
      AMBER_CONFIG_DIR: configDir,
      AMBER_CACHE_DIR: cacheDir,
      OPENAI_API_KEY: "sk-bench",
      NO_COLOR: "1",
      TMPDIR: tmpDir,
    },
    cwd: workspace,
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - start;
  const report = new TextDecoder().decode(output.stderr);
  if (!output.success) throw new Error(`${c.what} (${c.checkout ?? "floor"}) failed:\n${report}`);
  const seconds = (label: string) =>
    Number(new RegExp(`${label} time \\(seconds\\): ([\\d.]+)`).exec(report)![1]);
  const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(report)![1]);
  const counted = /^([\d.]+),msec,task-clock/m.exec(report);
  const cpuMs = counted !== null
    ? Number(counted[1])
    : (seconds("User") + seconds("System")) * 1000;
  return { ms, cpuMs, mb: kb / 1024 };
}

const samples = new Map<Case, Sample[]>(cases.map((c) => [c, []]));
for (let round = -1; round < rounds; round++) {
  for (const c of round % 2 === 0 ? cases : [...cases].reverse()) {
    const sample = await measure(c);
    if (round >= 0) samples.get(c)!.push(sample);
  }
}

const medianOf = (c: Case, key: keyof Sample) => median(samples.get(c)!.map((s) => s[key]));
const floor = medianOf(cases[0], "ms");
const label = (c: Case) =>
  c.checkout === undefined || checkouts.length === 1 ? c.what : `${c.what} [${c.checkout}]`;
// The load says how far to trust the wall times; `deno task bench` does not grant reading it.
const load = Deno.permissions.querySync({ name: "sys", kind: "loadavg" }).state === "granted"
  ? `; load average ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`
  : "";
console.log(`${rounds} rounds, medians; CPU from ${perf ? "perf stat" : "time"}${load}`);
if (installed || task) console.log(`amber run from each checkout: ${forms.join("; ")}`);
for (const c of cases) {
  const ms = medianOf(c, "ms");
  const cpu = medianOf(c, "cpuMs");
  const first = cases.find((other) => other.what === c.what && other.checkout === checkouts[0]);
  const versus = c.checkout !== undefined && c.checkout !== checkouts[0] && first !== undefined
    ? ` [${(ms / medianOf(first, "ms")).toFixed(2)}x / ${
      (cpu / medianOf(first, "cpuMs")).toFixed(2)
    }x the first checkout]`
    : "";
  console.log(
    `${label(c)}: ${ms.toFixed(1)} ms (${(ms / floor).toFixed(2)}x floor), ` +
      `CPU ${cpu.toFixed(perf ? 1 : 0)} ms, ${medianOf(c, "mb").toFixed(1)} MB${versus}`,
  );
}
await server.close();
await Deno.remove(configDir, { recursive: true });
await Deno.remove(workspace, { recursive: true });
await Deno.remove(tmpDir, { recursive: true });
for (const root of roots) await Deno.remove(root, { recursive: true });
