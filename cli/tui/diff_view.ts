/**
 * Diff view: what an `edit` or a `write` did (or would do) to a file, as a coloured unified diff
 * of styled lines, for the approval question before the call and the transcript after it. The
 * hunks come from jsdiff (npm `diff`); this module only lays them out: a header naming the file
 * and the lines added and removed, hunk headers dimmed, `-` lines red and `+` lines green with
 * line numbers when the width allows, every line sanitized (a file's escape sequences never
 * reach the terminal) and wrapped to the width.
 *
 * @module
 */

import type { FileChange, ToolCall } from "@amber/core";
import { structuredPatch, type StructuredPatchHunk } from "diff";
import { cellWidth } from "@amber/core/cells";
import { isPrintableAscii, type Span, type StyledLine, wrapSpans } from "./lines.ts";
import { sgr, type Style, Styles } from "./style.ts";

/** Lines of unchanged text shown around each change. */
const CONTEXT = 3;
// A diff that takes longer than this to compute (two large, very different files) is not shown:
// the question and the transcript must not wait on it.
const DIFF_TIMEOUT_MS = 300;
// Line numbers take a column only when at least this much width is left for the text.
const MIN_TEXT_WIDTH = 20;

/** One line of a hunk. */
interface DiffLine {
  readonly kind: "+" | "-" | " " | "\\";
  readonly text: string;
  /** Its line number: in the new text for `+` and context, in the old text for `-`. */
  readonly number: number;
}

interface Hunk {
  readonly header: string;
  readonly lines: readonly DiffLine[];
}

/** A change's hunks and counts, computed once per change object. */
interface Diff {
  /** Undefined when the diff took too long to compute. */
  readonly hunks: readonly Hunk[] | undefined;
  readonly added: number;
  readonly removed: number;
  /** The widest line number. */
  readonly lastNumber: number;
}

// A question is drawn again on every key and a transcript on every frame: the diff of one change
// object is computed once.
const diffs = new WeakMap<FileChange, Diff>();

function diffOf(change: FileChange): Diff {
  const cached = diffs.get(change);
  if (cached !== undefined) return cached;
  const diff = computeDiff(change);
  diffs.set(change, diff);
  return diff;
}

function computeDiff(change: FileChange): Diff {
  const patch = change.before === change.after
    ? { hunks: [] }
    : change.before === "" || change.after === ""
    ? { hunks: [wholeHunk(change.before, change.after)] }
    : structuredPatch(change.path, change.path, change.before, change.after, undefined, undefined, {
      context: CONTEXT,
      timeout: DIFF_TIMEOUT_MS,
    });
  if (patch === undefined) {
    return {
      hunks: undefined,
      added: countLines(change.after),
      removed: countLines(change.before),
      lastNumber: 0,
    };
  }
  let added = 0;
  let removed = 0;
  let lastNumber = 0;
  const hunks: Hunk[] = patch.hunks.map((hunk) => {
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    const lines: DiffLine[] = [];
    for (const raw of hunk.lines) {
      const kind = raw[0] as DiffLine["kind"];
      const text = raw.slice(1);
      if (kind === "+") {
        added++;
        lines.push({ kind, text, number: newLine++ });
      } else if (kind === "-") {
        removed++;
        lines.push({ kind, text, number: oldLine++ });
      } else if (kind === "\\") {
        lines.push({ kind, text: raw, number: 0 });
      } else {
        lines.push({ kind: " ", text, number: newLine++ });
        oldLine++;
      }
    }
    lastNumber = Math.max(lastNumber, oldLine - 1, newLine - 1);
    const header = `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
    return { header, lines };
  });
  return { hunks, added, removed, lastNumber };
}

// A file's whole text added or removed, as jsdiff would give it but without diffing: every line
// of one side, and the mark of a last line without a newline.
function wholeHunk(before: string, after: string): StructuredPatchHunk {
  const added = before === "";
  const text = added ? after : before;
  const lines = text.split("\n");
  const newline = lines.at(-1) === "";
  if (newline) lines.pop();
  const count = lines.length;
  const sign = added ? "+" : "-";
  const marked = lines.map((line) => sign + line);
  if (!newline) marked.push("\\ No newline at end of file");
  return {
    oldStart: 1,
    oldLines: added ? 0 : count,
    newStart: 1,
    newLines: added ? count : 0,
    lines: marked,
  };
}

function countLines(text: string): number {
  if (text === "") return 0;
  let count = 1;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) {
    if (at < text.length - 1) count++;
  }
  return count;
}

/**
 * A change as a coloured unified diff `width` cells wide: a header line (the path, `+added
 * -removed`, whether the file is new or lies outside the workspace), then each hunk's header and
 * lines, long lines wrapped. A new file's content shows as added lines. With `maxLines`, the
 * diff is cut to that many lines, the last saying how many more there are.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainText } from "./lines.ts";
 * import { renderChange } from "./diff_view.ts";
 * const change = { path: "a.txt", before: "one\ntwo\nthree\n", after: "one\n2\nthree\n" };
 * assert.deepEqual(renderChange(change, 40).map(plainText), [
 *   "a.txt +1 -1",
 *   "@@ -1,3 +1,3 @@",
 *   "1   one",
 *   "2 - two",
 *   "2 + 2",
 *   "3   three",
 * ]);
 * ```
 */
export function renderChange(change: FileChange, width: number, maxLines?: number): StyledLine[] {
  width = Math.max(1, Math.floor(width));
  const diff = diffOf(change);
  const lines: StyledLine[] = [...header(change, diff, width)];
  const limit = maxLines === undefined ? Infinity : Math.max(1, Math.floor(maxLines));
  if (diff.hunks === undefined) {
    lines.push(...wrapSpans([{
      text: "the diff is too large to show here",
      style: Styles.dim,
    }], width));
    return cut(lines, limit);
  }
  const numbers = !change.excerpt &&
    width - numberWidth(diff.lastNumber) - 3 >= MIN_TEXT_WIDTH;
  const gutter = numbers ? numberWidth(diff.lastNumber) : 0;
  // A new file is all one hunk starting at line 1: its header says nothing.
  const hunkHeaders = change.before !== "" || diff.hunks.length > 1;
  for (const hunk of diff.hunks) {
    if (hunkHeaders) {
      lines.push(...wrapSpans([{ text: hunk.header, style: Styles.diffHunk }], width));
    }
    for (const line of hunk.lines) {
      // An excerpt is cut from its file: where its text ends says nothing of the file's end.
      if (line.kind === "\\" && change.excerpt) continue;
      lines.push(...renderLine(line, gutter, width));
      // Past the limit nothing more is drawn; the count of the rest needs no layout.
      if (lines.length > limit) return cut(lines, limit, remaining(diff, hunk, line));
    }
  }
  return cut(lines, limit);
}

function header(change: FileChange, diff: Diff, width: number): StyledLine[] {
  const spans: Span[] = [{ text: change.path, style: Styles.bold }];
  const notes: string[] = [];
  // Outside the workspace an old text may not have been read: "" need not mean a new file.
  if (change.before === "" && !change.excerpt && !change.outside) notes.push("new file");
  if (change.outside) notes.push("outside the workspace");
  spans.push({ text: ` +${diff.added}`, style: Styles.diffAdd });
  spans.push({ text: ` -${diff.removed}`, style: Styles.diffRemove });
  if (notes.length > 0) spans.push({ text: ` (${notes.join(", ")})`, style: Styles.warn });
  return wrapSpans(spans, width);
}

function renderLine(line: DiffLine, gutter: number, width: number): StyledLine[] {
  if (line.kind === "\\") return wrapSpans([{ text: line.text, style: Styles.dim }], width);
  const style: Style = line.kind === "+"
    ? Styles.diffAdd
    : line.kind === "-"
    ? Styles.diffRemove
    : Styles.plain;
  const first: Span[] = [];
  const rest: Span[] = [];
  if (gutter > 0) {
    first.push({ text: `${String(line.number).padStart(gutter)} `, style: Styles.dim });
    rest.push({ text: " ".repeat(gutter + 1), style: Styles.plain });
  }
  first.push({ text: `${line.kind} `, style });
  rest.push({ text: "  ", style: Styles.plain });
  // A line ending in CRLF keeps its carriage return in the text; it is not part of what shows.
  const text = line.text.endsWith("\r") ? line.text.slice(0, -1) : line.text;
  // Most lines are plain ASCII that fits: nothing to sanitize or wrap (a 20,000-line file shows
  // in a blink rather than in a second).
  if (isPrintableAscii(text) && text.length <= width - gutter - (gutter > 0 ? 3 : 2)) {
    return [text === "" ? first : [...first, { text, style }]];
  }
  return wrapSpans(text === "" ? [] : [{ text, style }], width, { first, rest });
}

function numberWidth(last: number): number {
  return cellWidth(String(Math.max(1, last)));
}

// Diff lines after `line` of `hunk`, for the "more" line of a diff cut short.
function remaining(diff: Diff, hunk: Hunk, line: DiffLine): number {
  const hunks = diff.hunks ?? [];
  let after = hunk.lines.length - hunk.lines.indexOf(line) - 1;
  for (let i = hunks.indexOf(hunk) + 1; i < hunks.length; i++) after += hunks[i].lines.length + 1;
  return after;
}

// At most `limit` lines; when more there were, the last says how many were left out.
function cut(lines: StyledLine[], limit: number, beyond: number = 0): StyledLine[] {
  if (lines.length <= limit && beyond === 0) return lines;
  const kept = lines.slice(0, Math.max(0, limit - 1));
  const more = lines.length - kept.length + beyond;
  kept.push([{ text: `… ${more} more line${more === 1 ? "" : "s"}`, style: Styles.dim }]);
  return kept;
}

/**
 * A change as text for a terminal (`amber run` asking before an edit): {@linkcode renderChange}'s
 * lines, each ending in a newline, coloured with escape sequences, or with only attributes (bold,
 * dim) when `color` is false (NO_COLOR).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatChange } from "./diff_view.ts";
 * const text = formatChange({ path: "a.txt", before: "", after: "hi\n" }, 40, true);
 * assert.ok(text.includes("\x1b[0;32m+ hi\x1b[0m\n"));
 * assert.ok(!formatChange({ path: "a.txt", before: "", after: "hi\n" }, 40, false).includes("32m"));
 * ```
 */
export function formatChange(
  change: FileChange,
  width: number,
  color: boolean,
  maxLines?: number,
): string {
  let out = "";
  for (const line of renderChange(change, width, maxLines)) {
    let style: number | undefined;
    for (const span of line) {
      if (span.style !== style) out += sgr(span.style, color);
      out += span.text;
      style = span.style;
    }
    out += `${sgr(Styles.plain)}\n`;
  }
  return out;
}

/**
 * The change an `edit` or `write` call made, rebuilt from its arguments alone (for a resumed
 * session, whose results carry no change): an edit's `old_string` becoming its `new_string`, a
 * write's `content` as added text. Marked `excerpt` (an edit's region, a write's previous content
 * unknown): line numbers are not shown for it. Undefined for any other call, or arguments that
 * do not parse.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { changeOfCall } from "./diff_view.ts";
 * const call = {
 *   id: "c1",
 *   name: "edit",
 *   arguments: JSON.stringify({ path: "a.ts", old_string: "x", new_string: "y" }),
 * };
 * assert.deepEqual(changeOfCall(call), { path: "a.ts", before: "x", after: "y", excerpt: true });
 * assert.equal(changeOfCall({ id: "c2", name: "read", arguments: "{}" }), undefined);
 * ```
 */
export function changeOfCall(call: ToolCall): FileChange | undefined {
  if (call.name !== "edit" && call.name !== "write") return undefined;
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    return undefined;
  }
  if (typeof args !== "object" || args === null) return undefined;
  const { path, old_string, new_string, content } = args as Record<string, unknown>;
  if (typeof path !== "string") return undefined;
  if (call.name === "edit") {
    if (typeof old_string !== "string" || typeof new_string !== "string") return undefined;
    return { path, before: old_string, after: new_string, excerpt: true };
  }
  if (typeof content !== "string") return undefined;
  return { path, before: "", after: content, excerpt: true };
}
