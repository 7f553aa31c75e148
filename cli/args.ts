/**
 * Command-line parsing: words and `--flag value` / `--flag=value` options. Small on purpose:
 * the CLI must start in a few tens of milliseconds.
 *
 * @module
 */

import { didYouMean } from "./did_you_mean.ts";

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
 * An option nobody takes. The message names it, the closest known option when one is close
 * (`did you mean --model?`) and the options there are; `option` and `known` let a caller say
 * the same for a narrower set (one command's options).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseArgs, UnknownOptionError } from "@amber/cli/args";
 * assert.throws(() => parseArgs(["--modle", "x"], ["model"], ["json"]), (error) => {
 *   assert.ok(error instanceof UnknownOptionError);
 *   assert.equal(error.option, "modle");
 *   assert.equal(
 *     error.message,
 *     "unknown option '--modle'; did you mean --model?; options: --model <value>, --json",
 *   );
 *   return true;
 * });
 * ```
 */
export class UnknownOptionError extends UsageError {
  /** The option as typed, without dashes. */
  readonly option: string;
  /** The options there are, as the message lists them (`--model <value>`, `--json`). */
  readonly known: readonly string[];
  /** Creates the error for `option` among `valued` and `flags`. */
  constructor(option: string, valued: readonly string[], flags: readonly string[]) {
    const known = [...valued.map((v) => `--${v} <value>`), ...flags.map((f) => `--${f}`)];
    super(
      `unknown option '--${option}'${suggestOption(option, [...valued, ...flags])}; ` +
        `options: ${known.join(", ")}`,
    );
    this.name = "UnknownOptionError";
    this.option = option;
    this.known = known;
  }
}

/**
 * `; did you mean --NAME?` for the option among `names` (without dashes) closest to `option`,
 * or `""`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { suggestOption } from "@amber/cli/args";
 * assert.equal(suggestOption("max-step", ["max-steps", "model"]), "; did you mean --max-steps?");
 * assert.equal(suggestOption("colour", ["max-steps", "model"]), "");
 * ```
 */
export function suggestOption(option: string, names: readonly string[]): string {
  return didYouMean(option, names, (name) => `--${name}`);
}

/**
 * The first word of `args` that is not an option or an option's value: the command, before
 * the command's own options are known. An option not in `valued` is taken to have no value
 * (parsing the whole line later says what is wrong with it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandWord } from "@amber/cli/args";
 * assert.equal(commandWord(["--workspace", "w", "run", "hi"], ["workspace"]), "run");
 * assert.equal(commandWord(["--json", "tools"], ["workspace"]), "tools");
 * assert.equal(commandWord(["--provider=groq"], ["provider"]), undefined);
 * ```
 */
export function commandWord(
  args: readonly string[],
  valued: readonly string[],
): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") return args[i + 1];
    if (!arg.startsWith("--")) return arg;
    if (!arg.includes("=") && valued.includes(arg.slice(2))) i++;
  }
  return undefined;
}

/**
 * Splits `args` into words, valued options (those named in `valued`) and switches. `--` ends
 * options. An unknown option is an {@linkcode UnknownOptionError}.
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
      throw new UnknownOptionError(name, valued, flags);
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
