/**
 * Fuzzy ranking of workspace paths for `@` completion: a path matches when the query's
 * characters appear in it in order (a subsequence, ignoring case). Hits in the file's own name
 * rank before hits spread over its directories, contiguous hits before scattered ones, and
 * shorter paths before longer ones, so `@read` offers `README.md` before
 * `docs/guides/reading/notes.md`.
 *
 * @module
 */

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

// How a path matches the lower-cased query `q`, given the path and its file name lower-cased:
// 0 the name contains the query, 1 the name holds it as a subsequence, 2 the path contains it,
// 3 the path holds it as a subsequence; undefined when it does not match. An empty query
// matches everything in tier 2, so that the shortest paths come first.
function tierOf(q: string, full: string, name: string): number | undefined {
  if (q === "") return 2;
  if (name.includes(q)) return 0;
  if (isSubsequence(q, name)) return 1;
  if (full.includes(q)) return 2;
  if (isSubsequence(q, full)) return 3;
  return undefined;
}

// Per list of paths (the file index hands out one array per build): the paths and their file
// names lower-cased, and the last ranking asked for. The drawer asks again at every frame while an
// `@` word is typed, and lower-casing twenty thousand paths each time would show.
interface Prepared {
  readonly lower: readonly string[];
  readonly names: readonly string[];
  last?: { readonly query: string; readonly limit: number; readonly result: string[] };
}

const prepared = new WeakMap<readonly string[], Prepared>();

function prepare(paths: readonly string[]): Prepared {
  let found = prepared.get(paths);
  if (found === undefined) {
    const lower = paths.map((path) => path.toLowerCase());
    found = { lower, names: lower.map((path) => path.slice(path.lastIndexOf("/") + 1)) };
    prepared.set(paths, found);
  }
  return found;
}

/**
 * The paths matching `query`, best first (by tier, then shorter paths, then alphabetically), at
 * most `limit` of them. Asked again with the same array and query, it answers from memory.
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
  const ready = prepare(paths);
  const last = ready.last;
  if (last !== undefined && last.query === query && last.limit === limit) return last.result;
  const q = query.toLowerCase();
  const tiers: number[][] = [[], [], [], []];
  for (let i = 0; i < paths.length; i++) {
    const tier = tierOf(q, ready.lower[i], ready.names[i]);
    if (tier !== undefined) tiers[tier].push(i);
  }
  const result: string[] = [];
  for (const tier of tiers) {
    if (result.length >= limit) break;
    for (const i of shortest(tier, paths, limit - result.length)) result.push(paths[i]);
  }
  ready.last = { query, limit, result };
  return result;
}

// The `count` shortest of `indices` (then alphabetically), in order. Only the paths no longer
// than the count-th shortest are sorted: a bare `@` in a big tree matches every path.
function shortest(indices: readonly number[], paths: readonly string[], count: number): number[] {
  let kept = indices;
  if (indices.length > count) {
    const byLength: number[] = [];
    for (const i of indices) byLength[paths[i].length] = (byLength[paths[i].length] ?? 0) + 1;
    let cut = 0;
    for (let seen = 0; cut < byLength.length && seen < count; cut++) seen += byLength[cut] ?? 0;
    kept = indices.filter((i) => paths[i].length < cut);
  }
  return [...kept].sort((a, b) =>
    paths[a].length - paths[b].length || (paths[a] < paths[b] ? -1 : 1)
  ).slice(0, count);
}
