/**
 * Terminal cell widths: how many columns a string takes in a monospace terminal, and how to cut
 * one down to a number of columns. The status bar measures in cells, not UTF-16 code units, so a
 * CJK model name or an emoji segment cannot push the bar past the edge of the screen.
 *
 * The rules follow what terminals do (the same model as `wcwidth`): East Asian Wide and Fullwidth
 * characters, which include CJK and emoji with emoji presentation, take 2 cells; combining marks,
 * format characters (zero-width space, joiners) and control characters take 0; a variation
 * selector 16 widens a narrow base to emoji presentation; an emoji joined by a zero-width joiner,
 * a skin-tone modifier on an emoji, and the second regional indicator of a flag add nothing.
 *
 * @module
 */

// East Asian Width W and F ranges (Unicode 17), as inclusive [first, last] pairs, sorted.
const WIDE_RANGES: Uint32Array = new Uint32Array([
  0x1100,
  0x115f,
  0x231a,
  0x231b,
  0x2329,
  0x232a,
  0x23e9,
  0x23ec,
  0x23f0,
  0x23f0,
  0x23f3,
  0x23f3,
  0x25fd,
  0x25fe,
  0x2614,
  0x2615,
  0x2630,
  0x2637,
  0x2648,
  0x2653,
  0x267f,
  0x267f,
  0x268a,
  0x268f,
  0x2693,
  0x2693,
  0x26a1,
  0x26a1,
  0x26aa,
  0x26ab,
  0x26bd,
  0x26be,
  0x26c4,
  0x26c5,
  0x26ce,
  0x26ce,
  0x26d4,
  0x26d4,
  0x26ea,
  0x26ea,
  0x26f2,
  0x26f3,
  0x26f5,
  0x26f5,
  0x26fa,
  0x26fa,
  0x26fd,
  0x26fd,
  0x2705,
  0x2705,
  0x270a,
  0x270b,
  0x2728,
  0x2728,
  0x274c,
  0x274c,
  0x274e,
  0x274e,
  0x2753,
  0x2755,
  0x2757,
  0x2757,
  0x2795,
  0x2797,
  0x27b0,
  0x27b0,
  0x27bf,
  0x27bf,
  0x2b1b,
  0x2b1c,
  0x2b50,
  0x2b50,
  0x2b55,
  0x2b55,
  0x2e80,
  0x2e99,
  0x2e9b,
  0x2ef3,
  0x2f00,
  0x2fd5,
  0x2ff0,
  0x3029,
  0x3030,
  0x303e,
  0x3041,
  0x3096,
  0x309b,
  0x30ff,
  0x3105,
  0x312f,
  0x3131,
  0x3163,
  0x3165,
  0x318e,
  0x3190,
  0x31e5,
  0x31ef,
  0x321e,
  0x3220,
  0x3247,
  0x3250,
  0xa48c,
  0xa490,
  0xa4c6,
  0xa960,
  0xa97c,
  0xac00,
  0xd7a3,
  0xf900,
  0xfaff,
  0xfe10,
  0xfe19,
  0xfe30,
  0xfe52,
  0xfe54,
  0xfe66,
  0xfe68,
  0xfe6b,
  0xff01,
  0xff60,
  0xffe0,
  0xffe6,
  0x16fe0,
  0x16fe3,
  0x16ff2,
  0x16ff6,
  0x17000,
  0x18cd5,
  0x18cff,
  0x18d1e,
  0x18d80,
  0x18df2,
  0x1aff0,
  0x1aff3,
  0x1aff5,
  0x1affb,
  0x1affd,
  0x1affe,
  0x1b000,
  0x1b122,
  0x1b132,
  0x1b132,
  0x1b150,
  0x1b152,
  0x1b155,
  0x1b155,
  0x1b164,
  0x1b167,
  0x1b170,
  0x1b2fb,
  0x1d300,
  0x1d356,
  0x1d360,
  0x1d376,
  0x1f004,
  0x1f004,
  0x1f0cf,
  0x1f0cf,
  0x1f18e,
  0x1f18e,
  0x1f191,
  0x1f19a,
  0x1f1e6,
  0x1f202,
  0x1f210,
  0x1f23b,
  0x1f240,
  0x1f248,
  0x1f250,
  0x1f251,
  0x1f260,
  0x1f265,
  0x1f300,
  0x1f320,
  0x1f32d,
  0x1f335,
  0x1f337,
  0x1f37c,
  0x1f37e,
  0x1f393,
  0x1f3a0,
  0x1f3ca,
  0x1f3cf,
  0x1f3d3,
  0x1f3e0,
  0x1f3f0,
  0x1f3f4,
  0x1f3f4,
  0x1f3f8,
  0x1f43e,
  0x1f440,
  0x1f440,
  0x1f442,
  0x1f4fc,
  0x1f4ff,
  0x1f53d,
  0x1f54b,
  0x1f54e,
  0x1f550,
  0x1f567,
  0x1f57a,
  0x1f57a,
  0x1f595,
  0x1f596,
  0x1f5a4,
  0x1f5a4,
  0x1f5fb,
  0x1f64f,
  0x1f680,
  0x1f6c5,
  0x1f6cc,
  0x1f6cc,
  0x1f6d0,
  0x1f6d2,
  0x1f6d5,
  0x1f6d8,
  0x1f6dc,
  0x1f6df,
  0x1f6eb,
  0x1f6ec,
  0x1f6f4,
  0x1f6fc,
  0x1f7e0,
  0x1f7eb,
  0x1f7f0,
  0x1f7f0,
  0x1f90c,
  0x1f93a,
  0x1f93c,
  0x1f945,
  0x1f947,
  0x1f9ff,
  0x1fa70,
  0x1fa7c,
  0x1fa80,
  0x1fa8a,
  0x1fa8e,
  0x1fac6,
  0x1fac8,
  0x1fac8,
  0x1facd,
  0x1fadc,
  0x1fadf,
  0x1faea,
  0x1faef,
  0x1faf8,
  0x20000,
  0x2fffd,
  0x30000,
  0x3fffd,
]);

const ZERO_WIDTH_CATEGORY = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const CACHE_LIMIT = 0x20000;

// One byte per code point of the first two planes, holding width + 1 once computed (0 = not
// yet): the Unicode lookups run once per distinct character, then a render costs an array read.
let widthCache: Uint8Array | undefined;

function isWide(codePoint: number): boolean {
  let low = 0;
  let high = (WIDE_RANGES.length >> 1) - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (codePoint < WIDE_RANGES[middle * 2]) high = middle - 1;
    else if (codePoint > WIDE_RANGES[middle * 2 + 1]) low = middle + 1;
    else return true;
  }
  return false;
}

function computeWidth(codePoint: number): number {
  // Hangul medial vowels and final consonants join the preceding syllable block.
  if (
    (codePoint >= 0x1160 && codePoint <= 0x11ff) || (codePoint >= 0xd7b0 && codePoint <= 0xd7ff)
  ) {
    return 0;
  }
  // The soft hyphen is a format character, but terminals print it as a visible hyphen.
  if (codePoint === 0xad) return 1;
  if (isWide(codePoint)) return 2;
  if (ZERO_WIDTH_CATEGORY.test(String.fromCodePoint(codePoint))) return 0;
  return 1;
}

/**
 * The width in cells of one code point taken alone: 0, 1 or 2.
 *
 * @example
 * ```ts
 * import { codePointWidth } from "./_cell_width.ts";
 * console.log(codePointWidth(0x41), codePointWidth(0x4e2d), codePointWidth(0x301)); // 1 2 0
 * ```
 */
export function codePointWidth(codePoint: number): number {
  if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint < 0xa0)) return 0;
  if (codePoint < 0x7f) return 1;
  if (codePoint >= CACHE_LIMIT) return computeWidth(codePoint);
  const cache = widthCache ??= new Uint8Array(CACHE_LIMIT);
  const known = cache[codePoint];
  if (known !== 0) return known - 1;
  const width = computeWidth(codePoint);
  cache[codePoint] = width + 1;
  return width;
}

// What the previous code points leave behind for the next one: the width of the last base
// character, whether a zero-width joiner is pending, and whether a flag's first half is open.
interface Cursor {
  last: number;
  joiner: boolean;
  flagOpen: boolean;
}

// How many cells `codePoint` adds after what `cursor` saw; updates the cursor.
function advance(cursor: Cursor, codePoint: number): number {
  if (codePoint === 0x200d) {
    cursor.joiner = true;
    return 0;
  }
  if (codePoint === 0xfe0f) {
    // Emoji presentation of a narrow base (a heart, a keycap digit) takes two cells.
    if (cursor.last === 1) {
      cursor.last = 2;
      return 1;
    }
    return 0;
  }
  if (codePoint >= 0x1f1e6 && codePoint <= 0x1f1ff) {
    cursor.joiner = false;
    if (cursor.flagOpen) {
      cursor.flagOpen = false;
      return 0;
    }
    cursor.flagOpen = true;
    cursor.last = 2;
    return 2;
  }
  const width = codePointWidth(codePoint);
  if (width === 0) return 0;
  const joined = cursor.joiner;
  cursor.joiner = false;
  cursor.flagOpen = false;
  if (cursor.last === 2 && width === 2) {
    // Skin tones modify the emoji before them; a joined emoji renders inside the first one.
    if (joined || (codePoint >= 0x1f3fb && codePoint <= 0x1f3ff)) return 0;
  }
  cursor.last = width;
  return width;
}

/**
 * The width of `text` in terminal cells.
 *
 * @example
 * ```ts
 * import { cellWidth } from "./_cell_width.ts";
 * console.log(cellWidth("gpt-5"), cellWidth("中文"), cellWidth("e\u0301"), cellWidth("👍")); // 5 4 1 2
 * ```
 */
export function cellWidth(text: string): number {
  const length = text.length;
  let index = 0;
  // Printable ASCII is one cell per code unit: most segments never leave this loop.
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code >= 0x7f) break;
    index++;
  }
  if (index === length) return length;
  const cursor: Cursor = { last: index > 0 ? 1 : 0, joiner: false, flagOpen: false };
  let width = index;
  while (index < length) {
    const codePoint = text.codePointAt(index)!;
    index += codePoint > 0xffff ? 2 : 1;
    width += advance(cursor, codePoint);
  }
  return width;
}

/**
 * Cuts `text` to at most `cells` cells. Text that fits is returned as it is; otherwise as much as
 * fits in front of `ellipsis` is kept, trailing spaces trimmed, and the ellipsis appended. A
 * character is never split from the combining marks that follow it.
 *
 * @example
 * ```ts
 * import { truncateToCells } from "./_cell_width.ts";
 * console.log(truncateToCells("deepseek-chat", 8)); // "deepsee…"
 * console.log(truncateToCells("中文模型", 5)); // "中文…"
 * console.log(truncateToCells("short", 10)); // "short"
 * ```
 */
export function truncateToCells(text: string, cells: number, ellipsis: string = "…"): string {
  if (cellWidth(text) <= cells) return text;
  if (!(cells > 0)) return "";
  const ellipsisWidth = cellWidth(ellipsis);
  if (ellipsisWidth > cells) return truncateToCells(ellipsis, cells, "");
  const budget = cells - ellipsisWidth;
  const cursor: Cursor = { last: 0, joiner: false, flagOpen: false };
  let used = 0;
  let end = 0;
  for (let index = 0; index < text.length;) {
    const codePoint = text.codePointAt(index)!;
    const next = index + (codePoint > 0xffff ? 2 : 1);
    const width = advance(cursor, codePoint);
    if (used + width > budget) break;
    used += width;
    end = next;
    index = next;
  }
  return text.slice(0, end).trimEnd() + ellipsis;
}

/**
 * Walks `text` one terminal cell cluster at a time: a character with every zero-width mark,
 * joiner, joined emoji, skin tone, variation selector or second flag half that renders inside
 * it, and the cells the cluster takes (0, 1 or 2). Zero-width code points with nothing before
 * them form a cluster of width 0. A renderer that places text cell by cell uses this, so a cell
 * never holds half a character and wide characters take exactly the cells `cellWidth` counts.
 *
 * @example
 * ```ts
 * import { forEachCluster } from "./_cell_width.ts";
 * const cells: string[] = [];
 * forEachCluster("a中e\u0301👍🏽", (cluster, width) => cells.push(`${cluster}:${width}`));
 * console.log(cells); // [ "a:1", "中:2", "é:1", "👍🏽:2" ]
 * ```
 */
export function forEachCluster(
  text: string,
  visit: (cluster: string, width: number) => void,
): void {
  const cursor: Cursor = { last: 0, joiner: false, flagOpen: false };
  let start = 0;
  let width = 0;
  let open = false;
  for (let index = 0; index < text.length;) {
    const codePoint = text.codePointAt(index)!;
    const next = index + (codePoint > 0xffff ? 2 : 1);
    const added = advance(cursor, codePoint);
    // VS16 widens the cluster it follows instead of starting one.
    if (added > 0 && codePoint !== 0xfe0f) {
      if (open) visit(text.slice(start, index), width);
      start = index;
      width = added;
      open = true;
    } else if (open) {
      width += added;
    } else {
      start = index;
      width = added;
      open = true;
    }
    index = next;
  }
  if (open) visit(text.slice(start), width);
}
