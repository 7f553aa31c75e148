/**
 * "Did you mean": the known name closest to a mistyped one. The distance is the optimal string
 * alignment variant of Damerau-Levenshtein (an adjacent swap costs one edit, as typing errors
 * usually are), and only a close name is offered: a guess far from what was typed misleads more
 * than it helps.
 *
 * @module
 */

/**
 * The number of single-character insertions, deletions, substitutions and adjacent
 * transpositions that turn `a` into `b` (each substring edited at most once).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { editDistance } from "./did_you_mean.ts";
 * assert.equal(editDistance("run", "run"), 0);
 * assert.equal(editDistance("rnu", "run"), 1);
 * assert.equal(editDistance("modle", "model"), 1);
 * assert.equal(editDistance("plugin", "plugins"), 1);
 * assert.equal(editDistance("kitten", "sitting"), 3);
 * ```
 */
export function editDistance(a: string, b: string): number {
  // Three rows suffice: a transposition looks two rows back.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, before[j - 2] + 1);
      }
      current[j] = best;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length];
}

/**
 * The name in `known` closest to `typed`, when it is close enough to be what was meant: at most
 * one edit for names up to four characters, two up to eight, three beyond (case is ignored). A
 * tie goes to the name listed first. `undefined` when nothing is that close, or `typed` is
 * itself known.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { closest } from "./did_you_mean.ts";
 * const commands = ["run", "sessions", "plugins", "status"];
 * assert.equal(closest("sesions", commands), "sessions");
 * assert.equal(closest("stauts", commands), "status");
 * assert.equal(closest("deploy", commands), undefined);
 * assert.equal(closest("run", commands), undefined);
 * ```
 */
export function closest(typed: string, known: Iterable<string>): string | undefined {
  const wanted = typed.toLowerCase();
  const limit = wanted.length <= 4 ? 1 : wanted.length <= 8 ? 2 : 3;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const name of known) {
    if (name === typed) return undefined;
    // Far apart in length cannot be close in edits: skip the table.
    if (Math.abs(name.length - wanted.length) >= bestDistance) continue;
    const distance = editDistance(wanted, name.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  return best;
}

/**
 * `; did you mean '<name>'?` for the closest known name (see {@linkcode closest}), or `""`:
 * ready to end an error message with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { didYouMean } from "./did_you_mean.ts";
 * assert.equal(didYouMean("anthropik", ["openai", "anthropic"]), "; did you mean 'anthropic'?");
 * assert.equal(didYouMean("zzz", ["openai", "anthropic"]), "");
 * assert.equal(didYouMean("--modle", ["--model", "--mode"], (n) => n), "; did you mean --model?");
 * ```
 */
export function didYouMean(
  typed: string,
  known: Iterable<string>,
  quote: (name: string) => string = (name) => `'${name}'`,
): string {
  const name = closest(typed, known);
  return name === undefined ? "" : `; did you mean ${quote(name)}?`;
}
