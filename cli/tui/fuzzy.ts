/**
 * Fuzzy ranking of workspace paths for `@` completion: a path matches when the query's
 * characters appear in it in order (a subsequence, ignoring case). Hits in the file's own name
 * rank before hits spread over its directories, contiguous hits before scattered ones, and
 * shorter paths before longer ones, so `@read` offers `README.md` before
 * `docs/guides/reading/notes.md`.
 *
 * @module
 */

/** How well a path matches: lower ranks first. */
export interface FuzzyHit {
  /** The path. */
  readonly path: string;
  /**
   * The tier of the match: 0 the name contains the query, 1 the name holds it as a
   * subsequence, 2 the path contains it, 3 the path holds it as a subsequence.
   */
  readonly tier: 0 | 1 | 2 | 3;
}

/**
 * Whether `query`'s characters appear in `text` in order (both already lower-cased).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSubsequence } from "./fuzzy.ts";
 * assert.equal(isSubsequence("mdt", "cli/mod.ts"), true);
 * assert.equal(isSubsequence("tdm", "cli/mod.ts"), false);
 * ```
 */
export function isSubsequence(query: string, text: string): boolean {
  let at = 0;
  for (const char of text) {
    if (at < query.length && char === query[at]) at++;
  }
  return at === query.length;
}

/**
 * How `path` matches `query`, or undefined when it does not (the query's characters are not in
 * it in order). An empty query matches everything in the last tier but one, so that the
 * shortest paths come first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fuzzyMatch } from "./fuzzy.ts";
 * assert.equal(fuzzyMatch("mod", "cli/mod.ts")?.tier, 0);
 * assert.equal(fuzzyMatch("mts", "cli/mod.ts")?.tier, 1);
 * assert.equal(fuzzyMatch("cli/m", "cli/mod.ts")?.tier, 2);
 * assert.equal(fuzzyMatch("cmt", "cli/mod.ts")?.tier, 3);
 * assert.equal(fuzzyMatch("xyz", "cli/mod.ts"), undefined);
 * ```
 */
export function fuzzyMatch(query: string, path: string): FuzzyHit | undefined {
  const q = query.toLowerCase();
  const full = path.toLowerCase();
  const name = full.slice(full.lastIndexOf("/") + 1);
  if (q === "") return { path, tier: 2 };
  if (name.includes(q)) return { path, tier: 0 };
  if (isSubsequence(q, name)) return { path, tier: 1 };
  if (full.includes(q)) return { path, tier: 2 };
  if (isSubsequence(q, full)) return { path, tier: 3 };
  return undefined;
}

/**
 * The paths matching `query`, best first (by tier, then shorter paths, then alphabetically), at
 * most `limit` of them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fuzzyRank } from "./fuzzy.ts";
 * const paths = ["docs/guides/reading/notes.md", "src/thread.ts", "README.md", "lib/read.ts"];
 * assert.deepEqual(fuzzyRank(paths, "read"), [
 *   "README.md",
 *   "lib/read.ts",
 *   "src/thread.ts",
 *   "docs/guides/reading/notes.md",
 * ]);
 * ```
 */
export function fuzzyRank(paths: readonly string[], query: string, limit: number = 50): string[] {
  const hits: FuzzyHit[] = [];
  for (const path of paths) {
    const hit = fuzzyMatch(query, path);
    if (hit !== undefined) hits.push(hit);
  }
  hits.sort((a, b) =>
    a.tier - b.tier || a.path.length - b.path.length || (a.path < b.path ? -1 : 1)
  );
  return hits.slice(0, limit).map((hit) => hit.path);
}
