// Runs every case of a benchmark file in its own process, alternating the cases, several rounds,
// and prints the median of each case's average with its ratio to the first case. `deno bench`
// runs all cases in one isolate, where one case's garbage and JIT state can tilt another's.
//
// deno run -A bench/separately.ts bench/runtime_bench.ts [rounds]

const [file, roundsArg] = Deno.args;
if (!file) {
  console.error("usage: deno run -A bench/separately.ts <bench file> [rounds]");
  Deno.exit(2);
}
const rounds = Number(roundsArg ?? 5);

interface BenchJson {
  benches: { name: string; results: { ok?: { avg: number } }[] }[];
}

async function run(filter?: string): Promise<BenchJson> {
  const args = ["bench", "-A", "--json", ...(filter ? ["--filter", filter] : []), file];
  const output = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "null" })
    .output();
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

const names = (await run()).benches.map((b) => b.name);
const samples = new Map<string, number[]>(names.map((n) => [n, []]));
for (let round = 0; round < rounds; round++) {
  for (const name of round % 2 ? [...names].reverse() : names) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const result = await run(`/^${escaped}$/`);
    const avg = result.benches[0]?.results[0]?.ok?.avg;
    if (avg !== undefined) samples.get(name)!.push(avg);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const first = median(samples.get(names[0])!);
for (const name of names) {
  const m = median(samples.get(name)!);
  const figure = m >= 1e6 ? `${(m / 1e6).toFixed(2)} ms` : `${(m / 1e3).toFixed(2)} µs`;
  console.log(`${figure.padStart(10)}  ${(m / first).toFixed(2)}x  ${name}`);
}
