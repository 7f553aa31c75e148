// Compares one benchmark file across two checkouts of amber (before and after a change) in one
// run: each round runs the file once in each checkout, alternating which goes first, and the
// median of each case's average is printed beside its ratio (after / before). Cases present in
// only one checkout are listed with a dash on the other side.
//
// deno run -A bench/compare.ts <before checkout> <after checkout> bench/<file>.ts [rounds]

import { benchConfig, formatNs, median, readAverages } from "./_bench_runner.ts";

const [before, after, file, roundsArg] = Deno.args;
if (!before || !after || !file) {
  console.error(
    "usage: deno run -A bench/compare.ts <before dir> <after dir> <bench file> [rounds]",
  );
  Deno.exit(2);
}
const rounds = Number(roundsArg ?? 5);

async function averages(dir: string): Promise<Map<string, number>> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["bench", "-A", ...benchConfig(dir), "--json", file],
    cwd: dir,
    stdout: "piped",
    stderr: "null",
  }).output();
  return readAverages(new TextDecoder().decode(output.stdout));
}

const samples = { before: new Map<string, number[]>(), after: new Map<string, number[]>() };
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? (["before", "after"] as const) : (["after", "before"] as const);
  for (const side of order) {
    for (const [name, avg] of await averages(side === "before" ? before : after)) {
      const list = samples[side].get(name) ?? [];
      list.push(avg);
      samples[side].set(name, list);
    }
  }
}

const names = [...new Set([...samples.before.keys(), ...samples.after.keys()])];
console.log(`${"before".padStart(10)}  ${"after".padStart(10)}  ratio  case (${file})`);
for (const name of names) {
  const b = median(samples.before.get(name));
  const a = median(samples.after.get(name));
  const ratio = a !== undefined && b !== undefined ? `${(a / b).toFixed(2)}x` : "  -  ";
  console.log(`${formatNs(b).padStart(10)}  ${formatNs(a).padStart(10)}  ${ratio}  ${name}`);
}
