/**
 * Styled lines: what every view of the TUI renders to before it reaches the screen. A line is a
 * list of spans, each a piece of text in one style; `wrapSpans` word-wraps one logical line to
 * a width counted in terminal cells (wide characters take two), with a prefix for the first
 * line and another for the rest (list bullets, gutters, hanging indents).
 *
 * @module
 */

import { cellWidth, forEachCluster } from "@amber/core/cells";
import type { Style } from "./style.ts";

/** A piece of text in one style. */
export interface Span {
  /** The text: one line, no control characters. */
  readonly text: string;
  /** Its style. */
  readonly style: Style;
}

/** One screen line. */
export type StyledLine = readonly Span[];

/** Prefixes of a wrapped line. */
export interface WrapOptions {
  /** Put in front of the first line. */
  readonly first?: readonly Span[];
  /** Put in front of every further line. */
  readonly rest?: readonly Span[];
  /** Break inside words only (code): keeps every space where it is. */
  readonly hard?: boolean;
}

// deno-lint-ignore no-control-regex -- removing control characters is the point
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;
// deno-lint-ignore no-control-regex -- finding control characters is the point
const HAS_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Makes text safe to put on one screen line: tabs become spaces, every other control character
 * (escape sequences from a tool's output included) is removed, so nothing a model or a tool
 * prints can move the cursor or restyle the terminal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sanitize } from "./lines.ts";
 * assert.equal(sanitize("a\tb\x1b[2Jc"), "a    b[2Jc");
 * ```
 */
export function sanitize(text: string): string {
  if (!HAS_CONTROL.test(text)) return text;
  return text.replaceAll("\t", "    ").replace(CONTROLS, "");
}

// Everything but tab and newline; a carriage return is dealt with first.
// deno-lint-ignore no-control-regex -- removing control characters is the point
const BLOCK_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// deno-lint-ignore no-control-regex -- finding control characters is the point
const BLOCK_HAS_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/**
 * Makes text of many lines safe to write to a terminal as it is (`amber run`'s answer and tool
 * lines): newlines and tabs stay, a CRLF becomes a newline, every other control character is
 * removed. What is left of an escape sequence is plain text: no clipboard write (OSC 52), no
 * screen clear, no cursor move, no carriage return printing over what a line said.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sanitizeText } from "./lines.ts";
 * assert.equal(sanitizeText("a\r\nb\x1b]52;c;aGk=\x07\tc\x1b[2J"), "a\nb]52;c;aGk=\tc[2J");
 * assert.equal(sanitizeText("safe\rfake"), "safefake");
 * ```
 */
export function sanitizeText(text: string): string {
  if (!BLOCK_HAS_CONTROL.test(text)) return text;
  return text.replaceAll("\r\n", "\n").replace(BLOCK_CONTROLS, "");
}

/**
 * The width of a line in cells.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineWidth } from "./lines.ts";
 * assert.equal(lineWidth([{ text: "中文", style: 0 }, { text: "ok", style: 0 }]), 6);
 * ```
 */
export function lineWidth(line: StyledLine): number {
  let width = 0;
  for (const span of line) width += cellWidth(span.text);
  return width;
}

/**
 * A line's plain text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainText } from "./lines.ts";
 * assert.equal(plainText([{ text: "• ", style: 2 }, { text: "item", style: 0 }]), "• item");
 * ```
 */
export function plainText(line: StyledLine): string {
  let text = "";
  for (const span of line) text += span.text;
  return text;
}

interface Cluster {
  readonly text: string;
  readonly width: number;
  readonly style: Style;
}

/**
 * Whether `text` is printable ASCII only: one cell per code unit, so the cluster walk can be
 * skipped (most of what a terminal shows).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isPrintableAscii } from "./lines.ts";
 * assert.equal(isPrintableAscii("abc"), true);
 * assert.equal(isPrintableAscii("中"), false);
 * ```
 */
export function isPrintableAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) return false;
  }
  return true;
}

function clustersOf(spans: readonly Span[]): Cluster[] {
  const clusters: Cluster[] = [];
  for (const span of spans) {
    const text = sanitize(span.text);
    const style = span.style;
    if (isPrintableAscii(text)) {
      for (let i = 0; i < text.length; i++) clusters.push({ text: text[i], width: 1, style });
    } else {
      forEachCluster(text, (cluster, width) => clusters.push({ text: cluster, width, style }));
    }
  }
  return clusters;
}

function spansOf(clusters: readonly Cluster[], from: number, to: number): Span[] {
  const spans: Span[] = [];
  let text = "";
  let style = -1;
  for (let i = from; i < to; i++) {
    const cluster = clusters[i];
    if (cluster.style !== style) {
      if (text !== "") spans.push({ text, style });
      text = "";
      style = cluster.style;
    }
    text += cluster.text;
  }
  if (text !== "") spans.push({ text, style });
  return spans;
}

/**
 * Word-wraps one logical line to `width` cells. Breaks go after spaces; a word longer than a
 * line is cut; the spaces at a break are dropped (unless `hard`). Every line gets its prefix,
 * and the prefixes count toward the width.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainText, wrapSpans } from "./lines.ts";
 * const lines = wrapSpans([{ text: "one two three four", style: 0 }], 11, {
 *   first: [{ text: "• ", style: 0 }],
 *   rest: [{ text: "  ", style: 0 }],
 * });
 * assert.deepEqual(lines.map(plainText), ["• one two", "  three", "  four"]);
 * ```
 */
export function wrapSpans(
  spans: readonly Span[],
  width: number,
  options: WrapOptions = {},
): StyledLine[] {
  const first = options.first ?? [];
  const rest = options.rest ?? first;
  const firstWidth = Math.max(1, width - lineWidth(first));
  const restWidth = Math.max(1, width - lineWidth(rest));
  const clusters = clustersOf(spans);
  const lines: StyledLine[] = [];
  let i = 0;
  const n = clusters.length;
  if (n === 0) return [[...first]];
  while (i < n) {
    const avail = lines.length === 0 ? firstWidth : restWidth;
    if (lines.length > 0 && !options.hard) {
      while (i < n && clusters[i].text === " ") i++;
      if (i === n) break;
    }
    let used = 0;
    let j = i;
    let lastSpace = -1;
    while (j < n && used + clusters[j].width <= avail) {
      if (clusters[j].text === " ") lastSpace = j;
      used += clusters[j].width;
      j++;
    }
    let end = j;
    if (j < n && !options.hard) {
      if (clusters[j].text === " ") end = j;
      else if (lastSpace > i) end = lastSpace;
    }
    if (end === i) end = i + 1; // a cluster wider than the line: it goes on a line of its own
    let trimmed = end;
    if (!options.hard) { while (trimmed > i && clusters[trimmed - 1].text === " ") trimmed--; }
    lines.push([...(lines.length === 0 ? first : rest), ...spansOf(clusters, i, trimmed)]);
    i = end;
  }
  return lines;
}
