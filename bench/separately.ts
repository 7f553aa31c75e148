// Runs every case of a benchmark file in its own process, alternating the order of the cases
// from round to round, and prints the median of each case's average with its ratio to the first
// case of its group. `deno bench` runs all cases in one isolate, where one case's garbage and JIT
// state can tilt another's.
//
// deno run -A bench/separately.ts <bench file> [rounds] [filter]
//
// `filter` (a substring of the case names) picks some cases. The case names are read by
// importing the file with `Deno.bench` replaced (in a child process, with bench/'s import map),
// so listing them runs no case.

import { benchConfig, formatNs, median, readAverages } from "./_bench_runner.ts";

// The benchmark-only packages (hookable, avvio...) resolve through bench/'s own import map.
const config = benchConfig(new URL("..", import.meta.url).pathname);

if (Deno.args[0] === "--list") {
  // Run in a child with the import map: prints the cases of Deno.args[1] as JSON.
  console.log(JSON.stringify(await collectCases(Deno.args[1])));
  Deno.exit(0);
}

// --before=<dir>: also run each case from a copy of the project in <dir> (same bench file path),
// alternating with this one, and print both medians and their ratio.
const before = Deno.args.find((arg) => arg.startsWith("--before="))?.slice("--before=".length);
const [file, roundsArg, filter] = Deno.args.filter((arg) => !arg.startsWith("--before="));
if (!file) {
  console.error(
    "usage: deno run -A bench/separately.ts <bench file> [rounds] [filter] [--before=<dir>]",
  );
  Deno.exit(2);
}
const rounds = Number(roundsArg ?? 5);

interface Case {
  readonly name: string;
  readonly group: string;
}

async function collectCases(path: string): Promise<Case[]> {
  const cases: Case[] = [];
  const collect = (definition: { name?: string; group?: string } | string) => {
    if (typeof definition === "string") cases.push({ name: definition, group: "" });
    else cases.push({ name: definition.name ?? "", group: definition.group ?? "" });
  };
  Object.defineProperty(Deno, "bench", { value: collect, configurable: true, writable: true });
  await import(new URL(path, `file://${Deno.cwd()}/`).href);
  return cases;
}

async function listCases(): Promise<Case[]> {
  const args = ["run", "-A", ...config, import.meta.filename!, "--list", file];
  const output = await new Deno.Command(Deno.execPath(), { args, stdout: "piped" }).output();
  const cases = JSON.parse(new TextDecoder().decode(output.stdout)) as Case[];
  return cases.filter((c) => filter === undefined || c.name.includes(filter));
}

async function run(name: string, cwd?: string): Promise<number | undefined> {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // Timing only: a type error elsewhere in the workspace must not lose a sample.
  const args = [
    "bench",
    "-A",
    "--no-check",
    ...config,
    "--json",
    "--filter",
    `/^${escaped}$/`,
    file,
  ];
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "null",
  }).output();
  return readAverages(new TextDecoder().decode(output.stdout)).get(name);
}

const cases = await listCases();
const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
const beforeSamples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let round = 0; round < rounds; round++) {
  for (const { name } of round % 2 ? [...cases].reverse() : cases) {
    const sides = before === undefined
      ? [undefined]
      : round % 2
      ? [undefined, before]
      : [before, undefined];
    for (const cwd of sides) {
      const avg = await run(name, cwd);
      if (avg !== undefined) (cwd === undefined ? samples : beforeSamples).get(name)!.push(avg);
      // Progress on stderr, so a long run shows where it is and what it has so far.
      const side = cwd === undefined ? "" : " (before)";
      console.error(
        `round ${round + 1}: ${name}${side}: ${avg === undefined ? "failed" : formatNs(avg)}`,
      );
    }
  }
}
const firstOfGroup = new Map<string, number>();
for (const { name, group } of cases) {
  const values = samples.get(name)!;
  if (values.length === 0) {
    console.log(`    failed         ${name}`);
    continue;
  }
  const m = median(values)!;
  if (!firstOfGroup.has(group)) firstOfGroup.set(group, m);
  const figure = formatNs(m);
  const ratio = (m / firstOfGroup.get(group)!).toFixed(2);
  const then = beforeSamples.get(name)!;
  const was = before === undefined
    ? ""
    : then.length === 0
    ? "  before: failed".padEnd(30)
    : `  before ${formatNs(median(then)).padStart(11)}  after/before ${
      (m / median(then)!).toFixed(2).padStart(5)
    }`;
  console.log(`${figure.padStart(11)}  ${ratio.padStart(6)}x${was}  ${name}`);
}
