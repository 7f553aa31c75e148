// What the benchmarks that alternate their cases share: their command line
// (`[--cases=a,b] [--NAME=VALUE] [rounds]`), the order of a round's cases (reversed every other
// round, so a change in the machine's load falls on every case alike) and the median.

/** A benchmark's command line. */
export interface BenchArgs {
  /** The rounds asked for, or the benchmark's default. */
  readonly rounds: number;
  /** Whether case `key` is to run (every case without `--cases=`). */
  wanted(key: string): boolean;
  /** The value of `--NAME=VALUE`, if given. */
  option(name: string): string | undefined;
}

/** Reads `Deno.args`; `defaultRounds` stands when no round count is given. */
export function benchArgs(defaultRounds: number): BenchArgs {
  const option = (name: string) =>
    Deno.args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  const only = option("cases")?.split(",");
  const [rounds] = Deno.args.filter((arg) => !arg.startsWith("--"));
  return {
    rounds: Number(rounds ?? defaultRounds),
    wanted: (key) => only === undefined || only.includes(key),
    option,
  };
}

/** The cases of round `round`, in order or reversed. */
export function inOrder<T>(round: number, cases: readonly T[]): readonly T[] {
  return round % 2 === 0 ? cases : [...cases].reverse();
}

/** The median of `xs` (the mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
