/**
 * Command-line parsing: words and `--flag value` / `--flag=value` options. Small on purpose:
 * the CLI must start in a few tens of milliseconds.
 *
 * @module
 */

/** Parsed command-line words and options. */
export interface ParsedArgs {
  /** The words that are not options, in order. */
  readonly words: readonly string[];
  /** Options with a value, by name without dashes (the last, when one is given again). */
  readonly options: ReadonlyMap<string, string>;
  /** Every value of each option with a value, in order (`--env A=1 --env B=2`). */
  readonly repeated: ReadonlyMap<string, readonly string[]>;
  /** Options without a value. */
  readonly switches: ReadonlySet<string>;
}

/** A command line that cannot be understood; the CLI exits 2 with it. */
export class UsageError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Splits `args` into words, valued options (those named in `valued`) and switches. `--` ends
 * options. An unknown option is a {@linkcode UsageError}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseArgs } from "@amber/cli/args";
 * const parsed = parseArgs(["status", "--width", "40"], ["width"], []);
 * assert.deepEqual(parsed.words, ["status"]);
 * assert.equal(parsed.options.get("width"), "40");
 * ```
 */
export function parseArgs(
  args: readonly string[],
  valued: readonly string[],
  flags: readonly string[],
): ParsedArgs {
  const words: string[] = [];
  const options = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  const switches = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      words.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "--") {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (valued.includes(name)) {
      const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      options.set(name, value);
      repeated.set(name, [...(repeated.get(name) ?? []), value]);
    } else if (flags.includes(name) && eq < 0) {
      switches.add(name);
    } else {
      const known = [...valued.map((v) => `--${v} <value>`), ...flags.map((f) => `--${f}`)];
      throw new UsageError(`unknown option '--${name}'; options: ${known.join(", ")}`);
    }
  }
  return { words, options, repeated, switches };
}

/**
 * Reads a positive integer option.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { intOption, parseArgs } from "@amber/cli/args";
 * assert.equal(intOption(parseArgs(["--width=50"], ["width"], []), "width", 80), 50);
 * assert.equal(intOption(parseArgs([], ["width"], []), "width", 80), 80);
 * ```
 */
export function intOption(parsed: ParsedArgs, name: string, fallback: number): number {
  const raw = parsed.options.get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new UsageError(`--${name} must be a positive whole number, got '${raw}'`);
  }
  return value;
}
