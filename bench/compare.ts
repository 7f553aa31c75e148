// Compares one benchmark file across two checkouts of amber (before and after a change) in one
// run: each round runs the file once in each checkout, alternating which goes first, and the
// median of each case's average is printed beside its ratio (after / before). Cases present in
// only one checkout are listed with a dash on the other side.
//
// deno run -A bench/compare.ts <before checkout> <after checkout> bench/<file>.ts [rounds]

const [before, after, file, roundsArg] = Deno.args;
if (!before || !after || !file) {
  console.error(
    "usage: deno run -A bench/compare.ts <before dir> <after dir> <bench file> [rounds]",
  );
  Deno.exit(2);
}
const rounds = Number(roundsArg ?? 5);

interface BenchJson {
  benches: { name: string; results: { ok?: { avg: number } }[] }[];
}

// A checkout whose benchmarks keep their packages in their own import map and lock (so that a
// plain `deno task test` never installs them) is benchmarked with those.
async function benchArgs(dir: string): Promise<string[]> {
  try {
    await Deno.stat(`${dir}/bench/import_map.json`);
    return ["--import-map", "bench/import_map.json", "--lock=bench/deno.lock"];
  } catch {
    return [];
  }
}

async function averages(dir: string): Promise<Map<string, number>> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["bench", "-A", ...(await benchArgs(dir)), "--json", file],
    cwd: dir,
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  const found = new Map<string, number>();
  if (!output.success || text.trim() === "") return found;
  // A bench file may print its own lines (bytes written, sizes) before deno's JSON report.
  const report = text.slice(text.search(/^\{/m));
  for (const bench of (JSON.parse(report) as BenchJson).benches) {
    const avg = bench.results[0]?.ok?.avg;
    if (avg !== undefined) found.set(bench.name, avg);
  }
  return found;
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

const median = (xs: number[] | undefined) =>
  xs === undefined || xs.length === 0
    ? undefined
    : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const show = (ns: number | undefined) =>
  ns === undefined
    ? "-"
    : ns >= 1e6
    ? `${(ns / 1e6).toFixed(2)} ms`
    : `${(ns / 1e3).toFixed(2)} µs`;
const names = [...new Set([...samples.before.keys(), ...samples.after.keys()])];
console.log(`${"before".padStart(10)}  ${"after".padStart(10)}  ratio  case (${file})`);
for (const name of names) {
  const b = median(samples.before.get(name));
  const a = median(samples.after.get(name));
  const ratio = a !== undefined && b !== undefined ? `${(a / b).toFixed(2)}x` : "  -  ";
  console.log(`${show(b).padStart(10)}  ${show(a).padStart(10)}  ${ratio}  ${name}`);
}
