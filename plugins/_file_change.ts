/**
 * Private helper for the file tools that change text (`edit`, `write`): the
 * {@linkcode FileChange} a front end shows as a diff, before the call (its `preview`) and after
 * it (its result's `change`), left out for files too large to diff on the way to a screen.
 *
 * @module
 */

import type { FileChange } from "@amber/core";

/**
 * The most text (before and after together, in UTF-16 code units) a change carries; a larger
 * change is left out rather than diffed and held in the session's memory.
 */
export const CHANGE_LIMIT = 1024 * 1024;

/** What a tool says in its output when a change was too large to carry. */
export const CHANGE_TOO_LARGE = "the change is too large to show as a diff";

/**
 * The change from `before` to `after` of the file shown as `path`; undefined when the two
 * together exceed {@linkcode CHANGE_LIMIT}. `outside` is set only when true.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CHANGE_LIMIT, fileChange } from "./_file_change.ts";
 * assert.deepEqual(fileChange("a.txt", "x", "y", false), { path: "a.txt", before: "x", after: "y" });
 * assert.equal(fileChange("big.txt", "", "z".repeat(CHANGE_LIMIT + 1), false), undefined);
 * ```
 */
export function fileChange(
  path: string,
  before: string,
  after: string,
  outside: boolean,
): FileChange | undefined {
  if (before.length + after.length > CHANGE_LIMIT) return undefined;
  return outside ? { path, before, after, outside } : { path, before, after };
}
