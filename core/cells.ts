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
 * none. An emoji sequence (a pictograph with a skin tone or joined emoji, a flag, anything with
 * variation selector 16) is one glyph of 2 cells however many code points it has; any other
 * cluster takes the sum of its code points, which counts spacing marks the way terminals draw
 * them.
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

// The Unicode property classes are built the first time a code point outside the cache needs
// them (building the three took 1.1-1.4 ms, on every start, at import): most text is ASCII.
let zeroWidth: RegExp | undefined;
let pictograph: RegExp | undefined;
let joinsClass: RegExp | undefined;
const VS16 = 0xfe0f;
// Code points below this are cached (the first two planes); the rest are computed each time.
const CACHE_LIMIT = 0x20000;
// Cache byte: width + 1 in the low two bits (0 = not computed yet); EMOJI_BIT when the code
// point can make its cluster an emoji, the one case where a cluster is not measured as the sum
// of its code points; JOINS_BIT when it can share a cluster with a neighbour.
const EMOJI_BIT = 4;
const JOINS_BIT = 8;
// What can share a grapheme cluster with a neighbour (UAX #29): extending marks, joiners and
// skin tones, spacing marks, flag halves, controls and format characters (prepended marks among
// them), and, to be safe, unassigned code points and lone surrogates; Hangul jamo and syllables
// (in `joins`), and the few letters below. Text without any of these is one cluster per code
// point, and needs no segmenter.
const JOINING_LETTERS: ReadonlySet<number> = new Set([
  // Prepend: Malayalam dot reph, Sharada, Tulu-Tigalari, Dives Akuru, Zanabazar Square,
  // Soyombo, Masaram Gondi and Kawi signs that join the letter after them.
  0x0d4e,
  0x111c2,
  0x111c3,
  0x113d1,
  0x1193f,
  0x11941,
  0x11a3a,
  0x11a84,
  0x11a85,
  0x11a86,
  0x11a87,
  0x11a88,
  0x11a89,
  0x11d46,
  0x11f02,
  // SpacingMark letters: Thai and Lao sara am.
  0x0e33,
  0x0eb3,
]);

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
  zeroWidth ??= /^[\p{Mn}\p{Me}\p{Cf}]$/u;
  if (zeroWidth.test(String.fromCodePoint(codePoint))) return 0;
  return eastAsianWidth(codePoint);
}

function joins(codePoint: number): boolean {
  joinsClass ??=
    /^[\p{Grapheme_Extend}\p{Emoji_Modifier}\p{Regional_Indicator}\p{Mc}\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cn}\p{Cs}]$/u;
  return joinsClass.test(String.fromCodePoint(codePoint)) || JOINING_LETTERS.has(codePoint) ||
    (codePoint >= 0x1100 && codePoint <= 0x11ff) || (codePoint >= 0xa960 && codePoint <= 0xa97f) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) || (codePoint >= 0xd7b0 && codePoint <= 0xd7ff);
}

function computeEntry(codePoint: number): number {
  const emoji = codePoint === VS16 || isRegionalIndicator(codePoint) ||
    (pictograph ??= /^\p{Extended_Pictographic}$/u).test(String.fromCodePoint(codePoint));
  return (computeWidth(codePoint) + 1) | (emoji ? EMOJI_BIT : 0) |
    (joins(codePoint) ? JOINS_BIT : 0);
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
  // Two neighbours that can join nothing are two clusters, so the text is walked one code point
  // at a time; only a stretch around code points that can join is read from the segmenter
  // (costly): from the code point before the first of them to the next place where two that
  // cannot join meet.
  const length = text.length;
  let segments: Intl.Segments | undefined;
  let at = 0;
  while (at < length) {
    let start = at;
    let index = at;
    while (index < length) {
      const codePoint = text.codePointAt(index)!;
      if (joinsAt(codePoint)) break;
      start = index;
      index += codePoint > 0xffff ? 2 : 1;
    }
    if (index === length) start = length;
    while (at < start) {
      const codePoint = text.codePointAt(at)!;
      const next = at + (codePoint > 0xffff ? 2 : 1);
      visit(next === at + 1 ? text[at] : text.slice(at, next), codePointWidth(codePoint));
      at = next;
    }
    if (at === length) return;
    let end = index;
    let previousJoins = true;
    while (end < length) {
      const codePoint = text.codePointAt(end)!;
      const joins = joinsAt(codePoint);
      // Two in a row that cannot join: a cluster ends in front of this one.
      if (!joins && !previousJoins) break;
      previousJoins = joins;
      end += codePoint > 0xffff ? 2 : 1;
    }
    // One segmenter pass over the whole text at most, read where needed: each pass costs
    // microseconds before it yields anything.
    segmenter ??= new Intl.Segmenter("en", { granularity: "grapheme" });
    segments ??= segmenter.segment(text);
    while (at < end) {
      const { segment, index: from } = segments.containing(at)!;
      visit(segment, clusterWidth(segment));
      at = from + segment.length;
    }
  }
}

function joinsAt(codePoint: number): boolean {
  return (codePoint < 0x20 || codePoint >= 0x7f) && (entry(codePoint) & JOINS_BIT) !== 0;
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
