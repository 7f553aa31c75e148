// What bench/separately.ts and bench/compare.ts share: the flags a checkout's benchmarks run
// with, the reading of `deno bench --json`, and the median and time format they print.

/** `deno bench --json`'s report, as far as these runners read it. */
export interface BenchJson {
  benches: { name: string; results: { ok?: { avg: number } }[] }[];
}

/**
 * The flags that make a checkout's benchmarks resolve their benchmark-only packages (hookable,
 * avvio, the AI SDK) through bench/'s own import map and lock, so that a plain `deno task test`
 * never installs them; none for a checkout older than that split.
 */
export function benchConfig(checkout: string): string[] {
  const dir = `${checkout.replace(/\/$/, "")}/bench`;
  return [
    ...(exists(`${dir}/import_map.json`) ? ["--import-map", `${dir}/import_map.json`] : []),
    ...(exists(`${dir}/deno.lock`) ? [`--lock=${dir}/deno.lock`] : []),
  ];
}

/**
 * Each case's average (ns) from `deno bench --json` output; a bench file may print lines of its
 * own (bytes written, sizes) before the report. Empty when there is no report.
 */
export function readAverages(stdout: string): Map<string, number> {
  const found = new Map<string, number>();
  const start = stdout.search(/^\{/m);
  if (start < 0) return found;
  try {
    for (const bench of (JSON.parse(stdout.slice(start)) as BenchJson).benches) {
      const avg = bench.results[0]?.ok?.avg;
      if (avg !== undefined) found.set(bench.name, avg);
    }
  } catch {
    // A run cut short leaves no whole report: no sample.
  }
  return found;
}

/** The median of `xs`, undefined for none. */
export function median(xs: readonly number[] | undefined): number | undefined {
  if (xs === undefined || xs.length === 0) return undefined;
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
}

/** A time in ns as ms or µs; `-` for none. */
export function formatNs(ns: number | undefined): string {
  if (ns === undefined) return "-";
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(2)} µs`;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
