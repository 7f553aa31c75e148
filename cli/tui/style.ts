/**
 * How a terminal cell looks, packed into one small integer so a screen can keep a style per cell
 * in a typed array and compare two cells with `===`: the foreground colour in bits 0-4, the
 * background in bits 5-9 (0 is the terminal's default, 1-16 the sixteen ANSI colours) and one
 * bit per attribute above them. `sgr` turns one into the escape sequence that sets it.
 *
 * @module
 */

/** A packed cell style; 0 is the terminal's default look. */
export type Style = number;

/** The sixteen ANSI colours by name. */
export type Color =
  | "black"
  | "red"
  | "green"
  | "yellow"
  | "blue"
  | "magenta"
  | "cyan"
  | "white"
  | "gray"
  | "brightRed"
  | "brightGreen"
  | "brightYellow"
  | "brightBlue"
  | "brightMagenta"
  | "brightCyan"
  | "brightWhite";

const COLORS: readonly Color[] = [
  "black",
  "red",
  "green",
  "yellow",
  "blue",
  "magenta",
  "cyan",
  "white",
  "gray",
  "brightRed",
  "brightGreen",
  "brightYellow",
  "brightBlue",
  "brightMagenta",
  "brightCyan",
  "brightWhite",
];

const BOLD = 1 << 10;
const DIM = 1 << 11;
const ITALIC = 1 << 12;
const UNDERLINE = 1 << 13;
const INVERSE = 1 << 14;
const STRIKE = 1 << 15;

/** What {@linkcode style} builds a style from. */
export interface StyleSpec {
  /** The foreground colour. */
  readonly fg?: Color;
  /** The background colour. */
  readonly bg?: Color;
  /** Bold. */
  readonly bold?: boolean;
  /** Dim (faint). */
  readonly dim?: boolean;
  /** Italic. */
  readonly italic?: boolean;
  /** Underlined. */
  readonly underline?: boolean;
  /** Foreground and background swapped. */
  readonly inverse?: boolean;
  /** Struck through. */
  readonly strike?: boolean;
}

/**
 * Packs a style.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sgr, style } from "./style.ts";
 * assert.equal(sgr(style({ fg: "red", bold: true })), "\x1b[0;1;31m");
 * ```
 */
export function style(spec: StyleSpec): Style {
  let packed = 0;
  if (spec.fg !== undefined) packed |= COLORS.indexOf(spec.fg) + 1;
  if (spec.bg !== undefined) packed |= (COLORS.indexOf(spec.bg) + 1) << 5;
  if (spec.bold) packed |= BOLD;
  if (spec.dim) packed |= DIM;
  if (spec.italic) packed |= ITALIC;
  if (spec.underline) packed |= UNDERLINE;
  if (spec.inverse) packed |= INVERSE;
  if (spec.strike) packed |= STRIKE;
  return packed;
}

/**
 * `base` with the attributes and colours `over` sets added (a colour in `over` replaces one in
 * `base`): emphasis inside a dimmed line stays dimmed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { merge, style } from "./style.ts";
 * assert.equal(merge(style({ dim: true }), style({ bold: true })), style({ dim: true, bold: true }));
 * ```
 */
export function merge(base: Style, over: Style): Style {
  let merged = base | (over & ~0x3ff);
  if ((over & 0x1f) !== 0) merged = (merged & ~0x1f) | (over & 0x1f);
  if ((over & 0x3e0) !== 0) merged = (merged & ~0x3e0) | (over & 0x3e0);
  return merged;
}

/**
 * The escape sequence that sets `packed`, starting from a reset so no attribute of the previous
 * cell leaks into this one. With `color` false (NO_COLOR) only the attributes are set.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sgr, style } from "./style.ts";
 * assert.equal(sgr(style({ fg: "gray", inverse: true }), false), "\x1b[0;7m");
 * ```
 */
export function sgr(packed: Style, color: boolean = true): string {
  let code = "\x1b[0";
  if (packed & BOLD) code += ";1";
  if (packed & DIM) code += ";2";
  if (packed & ITALIC) code += ";3";
  if (packed & UNDERLINE) code += ";4";
  if (packed & INVERSE) code += ";7";
  if (packed & STRIKE) code += ";9";
  if (color) {
    const fg = packed & 0x1f;
    const bg = (packed >> 5) & 0x1f;
    if (fg !== 0) code += fg <= 8 ? `;${29 + fg}` : `;${81 + fg}`;
    if (bg !== 0) code += bg <= 8 ? `;${39 + bg}` : `;${91 + bg}`;
  }
  return `${code}m`;
}

/** The styles the TUI uses, by role, so every view agrees on what "dim" or "error" looks like. */
export const Styles: {
  readonly plain: Style;
  readonly dim: Style;
  readonly bold: Style;
  readonly accent: Style;
  readonly good: Style;
  readonly warn: Style;
  readonly error: Style;
  readonly user: Style;
  readonly code: Style;
  readonly reasoning: Style;
  readonly title: Style;
  readonly selected: Style;
  readonly banner: Style;
  readonly diffAdd: Style;
  readonly diffRemove: Style;
  readonly diffHunk: Style;
} = {
  plain: 0,
  dim: style({ dim: true }),
  bold: style({ bold: true }),
  accent: style({ fg: "cyan" }),
  good: style({ fg: "green" }),
  warn: style({ fg: "yellow" }),
  error: style({ fg: "red" }),
  user: style({ bold: true }),
  code: style({ fg: "yellow" }),
  reasoning: style({ dim: true, italic: true }),
  title: style({ inverse: true, bold: true }),
  selected: style({ inverse: true }),
  banner: style({ fg: "black", bg: "yellow", bold: true }),
  diffAdd: style({ fg: "green" }),
  diffRemove: style({ fg: "red" }),
  diffHunk: style({ fg: "cyan", dim: true }),
};
