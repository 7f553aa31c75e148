/**
 * Terminal cell widths, for hosts that lay text out on a grid of cells (a status bar, a terminal
 * UI): how many columns a string takes, how to cut it to a number of columns, and how to walk it
 * one cluster at a time, so a CJK model name or an emoji cannot push a line past the edge of the
 * screen.
 *
 * Text is walked in grapheme clusters (`Intl.Segmenter`), so a character keeps its combining
 * marks, and an emoji its skin tone, its joined emoji and its variation selector. A code point
 * takes the cells its East Asian Width gives (`get-east-asian-width`: Wide and Fullwidth take
 * 2, which covers CJK and emoji with emoji presentation); combining marks, format characters
 * (zero-width space, joiners), conjoining Hangul vowels and finals, and control characters take
 * none. A cluster that is an emoji (a pictograph, a flag, or anything with variation selector
 * 16) takes 2 cells however many code points it has; any other cluster takes the sum of its code
 * points, which keeps spacing marks visible the way terminals draw them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cellWidth, truncateToCells } from "@amber/core/cells";
 * assert.equal(cellWidth("中文 ok"), 7);
 * assert.equal(cellWidth("👨‍👩‍👧"), 2);
 * assert.equal(truncateToCells("deepseek-chat", 8), "deepsee…");
 * ```
 *
 * @module
 */

import { eastAsianWidth } from "get-east-asian-width";

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;
const VS16 = 0xfe0f;
// Code points below this are cached (the first two planes); the rest are computed each time.
const CACHE_LIMIT = 0x20000;
// Cache byte: width + 1 in the low two bits (0 = not computed yet), and this bit when the code
// point can make its cluster an emoji, which is the only case where a cluster is not measured
// as the sum of its code points.
const EMOJI_BIT = 4;

let cache: Uint8Array | undefined;
let segmenter: Intl.Segmenter | undefined;

function isRegionalIndicator(codePoint: number): boolean {
  return codePoint >= 0x1f1e6 && codePoint <= 0x1f1ff;
}

function computeWidth(codePoint: number): number {
  if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint < 0xa0)) return 0;
  // Hangul medial vowels and final consonants join the preceding syllable block.
  if (
    (codePoint >= 0x1160 && codePoint <= 0x11ff) || (codePoint >= 0xd7b0 && codePoint <= 0xd7ff)
  ) {
    return 0;
  }
  // The soft hyphen is a format character, but terminals print it as a visible hyphen.
  if (codePoint === 0xad) return 1;
  // Half a flag: alone, terminals give it the two cells of the pair.
  if (isRegionalIndicator(codePoint)) return 2;
  // Before the width table: a few combining marks (ideographic tone marks, kana voicing marks)
  // are East Asian Wide, yet render inside the character they follow.
  if (ZERO_WIDTH.test(String.fromCodePoint(codePoint))) return 0;
  return eastAsianWidth(codePoint);
}

function computeEntry(codePoint: number): number {
  const emoji = codePoint === VS16 || isRegionalIndicator(codePoint) ||
    PICTOGRAPH.test(String.fromCodePoint(codePoint));
  return (computeWidth(codePoint) + 1) | (emoji ? EMOJI_BIT : 0);
}

// The Unicode lookups run once per distinct character of the first two planes; after that a
// code point costs an array read.
function entry(codePoint: number): number {
  if (codePoint >= CACHE_LIMIT) return computeEntry(codePoint);
  const table = cache ??= new Uint8Array(CACHE_LIMIT);
  const known = table[codePoint];
  if (known !== 0) return known;
  return table[codePoint] = computeEntry(codePoint);
}

/**
 * The width in cells of one code point taken alone: 0, 1 or 2.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codePointWidth } from "@amber/core/cells";
 * assert.equal(codePointWidth(0x41), 1); // A
 * assert.equal(codePointWidth(0x4e2d), 2); // 中
 * assert.equal(codePointWidth(0x301), 0); // a combining acute accent
 * assert.equal(codePointWidth(0x7), 0); // a control character
 * ```
 */
export function codePointWidth(codePoint: number): number {
  if (codePoint >= 0x20 && codePoint < 0x7f) return 1;
  return (entry(codePoint) & 3) - 1;
}

// The cells of one grapheme cluster.
function clusterWidth(cluster: string): number {
  let width = 0;
  let widest = 0;
  let emoji = false;
  let selected = false;
  for (let index = 0; index < cluster.length;) {
    const codePoint = cluster.codePointAt(index)!;
    index += codePoint > 0xffff ? 2 : 1;
    const known = codePoint >= 0x20 && codePoint < 0x7f ? 2 : entry(codePoint);
    const cells = (known & 3) - 1;
    width += cells;
    if (cells > widest) widest = cells;
    if (known & EMOJI_BIT) {
      emoji = true;
      if (codePoint === VS16) selected = true;
    }
  }
  if (!emoji) return width;
  // One glyph: variation selector 16 asks a narrow base for emoji presentation.
  return widest === 0 ? 0 : selected ? 2 : widest;
}

/**
 * Calls `visit` with each grapheme cluster of `text` (a character with every mark, joiner,
 * joined emoji, skin tone, variation selector or second flag half that renders inside it) and
 * the cells it takes (0, 1 or 2). A renderer that places text cell by cell uses this, so a cell
 * never holds half a character and wide characters take exactly the cells `cellWidth` counts.
 * A mark with nothing before it, and a control character, are clusters of width 0.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forEachCluster } from "@amber/core/cells";
 * const cells: string[] = [];
 * forEachCluster("a中e\u0301👍🏽", (cluster, width) => cells.push(`${cluster}:${width}`));
 * assert.deepEqual(cells, ["a:1", "中:2", "e\u0301:1", "👍🏽:2"]);
 * ```
 */
export function forEachCluster(
  text: string,
  visit: (cluster: string, width: number) => void,
): void {
  // Two printable ASCII characters never share a cluster: the printable ASCII run in front is
  // visited as it is, and only the rest, from its last character on, is segmented.
  const ascii = printableAsciiPrefix(text);
  if (ascii === text.length) {
    for (let index = 0; index < ascii; index++) visit(text[index], 1);
    return;
  }
  const from = ascii > 0 ? ascii - 1 : 0;
  for (let index = 0; index < from; index++) visit(text[index], 1);
  segmenter ??= new Intl.Segmenter("en", { granularity: "grapheme" });
  const rest = from === 0 ? text : text.slice(from);
  for (const { segment } of segmenter.segment(rest)) visit(segment, clusterWidth(segment));
}

function printableAsciiPrefix(text: string): number {
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code >= 0x7f) break;
    index++;
  }
  return index;
}

/**
 * The width of `text` in terminal cells: the sum of its clusters' widths.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cellWidth } from "@amber/core/cells";
 * assert.equal(cellWidth("gpt-5"), 5);
 * assert.equal(cellWidth("中文"), 4);
 * assert.equal(cellWidth("e\u0301"), 1);
 * assert.equal(cellWidth("👍🏽"), 2);
 * assert.equal(cellWidth("🇯🇵"), 2);
 * ```
 */
export function cellWidth(text: string): number {
  const length = text.length;
  // Printable ASCII is one cell per code unit: most strings are nothing else.
  let index = printableAsciiPrefix(text);
  if (index === length) return length;
  // Outside emoji a cluster is the sum of its code points, so the clusters need to be found
  // only when some code point can make one an emoji.
  let width = index;
  while (index < length) {
    const codePoint = text.codePointAt(index)!;
    const known = codePoint >= 0x20 && codePoint < 0x7f ? 2 : entry(codePoint);
    if (known & EMOJI_BIT) {
      let total = 0;
      forEachCluster(text, (_cluster, cells) => total += cells);
      return total;
    }
    width += (known & 3) - 1;
    index += codePoint > 0xffff ? 2 : 1;
  }
  return width;
}

/**
 * Cuts `text` to at most `cells` cells. Text that fits is returned as it is; otherwise as many
 * whole clusters as fit in front of `ellipsis` are kept, trailing spaces trimmed, and the
 * ellipsis appended. A character is never split from its marks, nor an emoji sequence cut.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { truncateToCells } from "@amber/core/cells";
 * assert.equal(truncateToCells("deepseek-chat", 8), "deepsee…");
 * assert.equal(truncateToCells("中文模型", 5), "中文…");
 * assert.equal(truncateToCells("short", 10), "short");
 * ```
 */
export function truncateToCells(text: string, cells: number, ellipsis: string = "…"): string {
  if (cellWidth(text) <= cells) return text;
  if (!(cells > 0)) return "";
  const ellipsisWidth = cellWidth(ellipsis);
  if (ellipsisWidth > cells) return truncateToCells(ellipsis, cells, "");
  const budget = cells - ellipsisWidth;
  // The cut falls between two printable ASCII characters: nothing to segment.
  if (printableAsciiPrefix(text) > budget) return text.slice(0, budget).trimEnd() + ellipsis;
  let used = 0;
  let end = 0;
  let full = false;
  forEachCluster(text, (cluster, width) => {
    if (full) return;
    if (used + width > budget) {
      full = true;
      return;
    }
    used += width;
    end += cluster.length;
  });
  return text.slice(0, end).trimEnd() + ellipsis;
}
