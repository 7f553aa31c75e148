/**
 * The screen: a grid of cells the TUI composes each frame into, and the diff renderer that turns
 * a frame into the fewest escape sequences that bring the terminal from the last frame to this
 * one. Only cells that changed are written; a streamed token costs the cells it adds, a cursor
 * move and a few bytes of framing, never a repaint.
 *
 * A cell holds one cluster (a character with its combining marks, or one emoji sequence) and a
 * packed style. A wide cluster takes its cell and the next, which holds `""` (a continuation) so
 * the grid always says exactly which terminal columns are covered.
 *
 * @module
 */

import { forEachCluster } from "@amber/core/cells";
import type { Span, StyledLine } from "./lines.ts";
import { isPrintableAscii, sanitize } from "./lines.ts";
import { sgr, type Style } from "./style.ts";

/** Where rendered frames go. */
export interface Sink {
  /** Writes escape sequences and text to the terminal. */
  write(text: string): void;
}

const CONTINUATION = "";
const BLANK = " ";

/**
 * A double-buffered cell grid. Compose a frame with `clear`, `write`, `writeLine` and
 * `setCursor`, then `render()` returns what to send to the terminal: nothing when nothing
 * changed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Screen } from "./screen.ts";
 * const screen = new Screen(10, 2);
 * screen.write(0, 0, "hello", 0);
 * const first = screen.render();
 * screen.clear();
 * screen.write(0, 0, "help!", 0);
 * const second = screen.render();
 * assert.ok(first.includes("hello"));
 * assert.equal(second.replace(/\x1b\[\?\d+[hl]/g, ""), "\x1b[1;4Hp!");
 * ```
 */
export class Screen {
  #width: number;
  #height: number;
  #chars: string[];
  #styles: Uint32Array;
  #frontChars: string[];
  #frontStyles: Uint32Array;
  // False until the terminal is known to match the front buffer (at start and after a resize).
  #valid = false;
  #cursorRow = 0;
  #cursorCol = 0;
  #cursorVisible = false;
  #shownCursor: boolean | undefined;
  #shownRow = -1;
  #shownCol = -1;
  // Scroll sequences for the next render, set by scrollUp.
  #scrolls = "";
  #color: boolean;

  /** Creates a `width` x `height` screen; `color` false drops colours (NO_COLOR). */
  constructor(width: number, height: number, color: boolean = true) {
    this.#width = Math.max(1, width);
    this.#height = Math.max(1, height);
    this.#color = color;
    const size = this.#width * this.#height;
    this.#chars = new Array<string>(size).fill(BLANK);
    this.#styles = new Uint32Array(size);
    this.#frontChars = new Array<string>(size).fill(BLANK);
    this.#frontStyles = new Uint32Array(size);
  }

  /** Columns. */
  get width(): number {
    return this.#width;
  }

  /** Rows. */
  get height(): number {
    return this.#height;
  }

  /**
   * Changes the size. The terminal reflows or clears its contents on a resize, so the next
   * render repaints every cell.
   */
  resize(width: number, height: number): void {
    width = Math.max(1, width);
    height = Math.max(1, height);
    if (width === this.#width && height === this.#height) {
      this.invalidate();
      return;
    }
    this.#width = width;
    this.#height = height;
    const size = width * height;
    this.#chars = new Array<string>(size).fill(BLANK);
    this.#styles = new Uint32Array(size);
    this.#frontChars = new Array<string>(size).fill(BLANK);
    this.#frontStyles = new Uint32Array(size);
    this.invalidate();
  }

  /** Forgets what the terminal shows: the next render clears it and paints every cell. */
  invalidate(): void {
    this.#valid = false;
    this.#scrolls = "";
    this.#shownCursor = undefined;
  }

  /**
   * Says that rows `top` to `bottom` (exclusive) of the new frame show what the last frame showed
   * `lines` rows lower: text that scrolled up. The terminal is told to scroll that region, which
   * costs a few bytes, and only the rows that came in at the bottom are then written, instead of
   * every row of the region. The hint only saves bytes: a wrong one costs more cells to write,
   * never a wrong screen, since every cell is still compared.
   */
  scrollUp(top: number, bottom: number, lines: number): void {
    top = Math.max(0, top);
    bottom = Math.min(this.#height, bottom);
    if (!this.#valid || lines <= 0 || lines >= bottom - top) return;
    const width = this.#width;
    const front = this.#frontChars;
    const styles = this.#frontStyles;
    front.copyWithin(top * width, (top + lines) * width, bottom * width);
    styles.copyWithin(top * width, (top + lines) * width, bottom * width);
    front.fill(BLANK, (bottom - lines) * width, bottom * width);
    styles.fill(0, (bottom - lines) * width, bottom * width);
    // Set the region, scroll it, reset the region (which homes the cursor: render moves it).
    this.#scrolls += `\x1b[${top + 1};${bottom}r\x1b[${lines}S\x1b[r`;
  }

  /** Blanks the frame being composed. */
  clear(): void {
    this.#chars.fill(BLANK);
    this.#styles.fill(0);
  }

  /**
   * Writes `text` at (`row`, `col`) in `style`, clipped at column `limit` (the width by default);
   * returns the column after it. A wide cluster that would straddle the limit is left out and
   * its cell blanked. Control characters are never written.
   */
  write(row: number, col: number, text: string, style: Style, limit: number = this.#width): number {
    if (row < 0 || row >= this.#height) return col;
    const end = Math.min(limit, this.#width);
    const base = row * this.#width;
    if (isPrintableAscii(text)) {
      for (let i = 0; i < text.length && col < end; i++, col++) {
        this.#put(base, col, text[i], 1, style);
      }
      return col;
    }
    let stopped = false;
    forEachCluster(sanitize(text), (cluster, width) => {
      if (stopped) return;
      if (width === 0) return; // a mark with nothing to sit on
      if (col + width > end) {
        if (col < end) this.#put(base, col, BLANK, 1, style);
        stopped = true;
        return;
      }
      this.#put(base, col, cluster, width, style);
      col += width;
    });
    return stopped ? end : col;
  }

  /** Writes a styled line at (`row`, `col`); returns the column after it. */
  writeLine(row: number, col: number, line: StyledLine, limit: number = this.#width): number {
    for (const span of line as readonly Span[]) {
      col = this.write(row, col, span.text, span.style, limit);
      if (col >= limit) break;
    }
    return col;
  }

  /** Fills `count` cells from (`row`, `col`) with `char` (one narrow character). */
  fill(row: number, col: number, count: number, char: string, style: Style): void {
    if (row < 0 || row >= this.#height) return;
    const base = row * this.#width;
    const end = Math.min(this.#width, col + count);
    for (let c = Math.max(0, col); c < end; c++) this.#put(base, c, char, 1, style);
  }

  /** Where the terminal's cursor goes after the frame, and whether it shows. */
  setCursor(row: number, col: number, visible: boolean): void {
    this.#cursorRow = Math.max(0, Math.min(this.#height - 1, row));
    this.#cursorCol = Math.max(0, Math.min(this.#width - 1, col));
    this.#cursorVisible = visible;
  }

  /** The composed row as plain text (tests, benchmarks). */
  rowText(row: number): string {
    let text = "";
    const base = row * this.#width;
    for (let c = 0; c < this.#width; c++) text += this.#chars[base + c];
    return text;
  }

  /**
   * The escape sequences that make the terminal show the composed frame, given it shows the
   * last one rendered: the changed cells only, each run reached with one cursor move, styles set
   * only when they change. A frame that changes more than one run of cells is wrapped in a
   * synchronized update, so a terminal that supports it paints the frame at once. Returns ""
   * when nothing changed.
   */
  render(): string {
    const width = this.#width;
    const chars = this.#chars;
    const styles = this.#styles;
    const front = this.#frontChars;
    const frontStyles = this.#frontStyles;
    let out = this.#scrolls;
    this.#scrolls = "";
    if (!this.#valid) {
      // Clear to the default look, then only non-blank cells differ from the front.
      out = "\x1b[0m\x1b[2J";
      front.fill(BLANK);
      frontStyles.fill(0);
      this.#valid = true;
    }
    // Every frame ends with the attributes reset, and an invalid screen starts with a reset.
    let style = 0;
    let runs = out === "" ? 0 : 2;
    let atRow = -1;
    let atCol = -1;
    for (let row = 0; row < this.#height; row++) {
      const base = row * width;
      // Where the row's trailing blanks start: a change from there on is one erase to the end of
      // the line, which also clears whatever a terminal that measured a cluster differently has
      // left further right.
      let blankFrom = width;
      while (
        blankFrom > 0 && chars[base + blankFrom - 1] === BLANK && styles[base + blankFrom - 1] === 0
      ) blankFrom--;
      for (let col = 0; col < width; col++) {
        const i = base + col;
        const char = chars[i];
        if (char === CONTINUATION) continue;
        if (char === front[i] && styles[i] === frontStyles[i]) continue;
        if (col >= blankFrom) {
          if (atRow !== row || atCol !== col) {
            out += `\x1b[${row + 1};${col + 1}H`;
            runs++;
          }
          if (style !== 0) out += "\x1b[0m";
          style = 0;
          out += "\x1b[K";
          atRow = row;
          atCol = col;
          break;
        }
        if (atRow !== row || atCol !== col) {
          if (atRow === row && col > atCol && col - atCol < 4) {
            // A short gap: rewriting unchanged cells in the current style is shorter than a move.
            out += this.#gap(base + atCol, base + col, style) ?? `\x1b[${col - atCol}C`;
          } else {
            out += `\x1b[${row + 1};${col + 1}H`;
            runs++;
          }
        }
        if (styles[i] !== style) {
          style = styles[i];
          out += sgr(style, this.#color);
        }
        out += char;
        const cells = col + 1 < width && chars[i + 1] === CONTINUATION ? 2 : 1;
        atRow = row;
        atCol = col + cells;
        // Past the last column the terminal's cursor waits to wrap: its position is unknown. So
        // it is after a cluster of several code points (an emoji with a skin tone or VS16, a ZWJ
        // sequence), which terminals do not all measure alike: the next cell gets its own move.
        if (atCol >= width || (char.length > 1 && !isSinglePoint(char))) atRow = -1;
      }
    }
    const moved = out !== "";
    if (moved && style !== 0) out += "\x1b[0m";
    const wasShown = this.#shownCursor === true;
    let suffix = "";
    if (this.#cursorVisible) {
      // Painting moved the terminal's cursor; so may the caller (an arrow key moves no cell).
      if (
        moved || !wasShown || this.#shownRow !== this.#cursorRow ||
        this.#shownCol !== this.#cursorCol
      ) {
        suffix += `\x1b[${this.#cursorRow + 1};${this.#cursorCol + 1}H`;
      }
      if (!wasShown) suffix += "\x1b[?25h";
    } else if (this.#shownCursor !== false) {
      suffix += "\x1b[?25l";
    }
    this.#shownCursor = this.#cursorVisible;
    this.#shownRow = this.#cursorRow;
    this.#shownCol = this.#cursorCol;
    // The frame just drawn is now the terminal's. Copied rather than swapped, so a caller may
    // keep composing on top of the last frame instead of clearing it.
    for (let i = 0; i < chars.length; i++) front[i] = chars[i];
    frontStyles.set(styles);
    // A change of more than one run of cells is one synchronized update, so a terminal that
    // supports it never shows half a frame; a single run cannot tear and goes without.
    if (runs > 1) return `\x1b[?2026h${out}${suffix}\x1b[?2026l`;
    return out + suffix;
  }

  // The cells from `from` to `to` as text, if all are narrow and in `style`; else undefined.
  #gap(from: number, to: number, style: Style): string | undefined {
    const chars = this.#chars;
    let text = "";
    for (let i = from; i < to; i++) {
      if (this.#styles[i] !== style || chars[i] === CONTINUATION || chars[i + 1] === CONTINUATION) {
        return undefined;
      }
      text += chars[i];
    }
    return text;
  }

  // Places one cluster, repairing any wide cluster it cuts in half.
  #put(base: number, col: number, char: string, width: number, style: Style): void {
    const chars = this.#chars;
    const i = base + col;
    if (chars[i] === CONTINUATION && col > 0) chars[i - 1] = BLANK;
    if (col + 1 < this.#width && chars[i + 1] === CONTINUATION && width === 1) {
      chars[i + 1] = BLANK;
    }
    chars[i] = char;
    this.#styles[i] = style;
    if (width === 2) {
      if (col + 2 < this.#width && chars[i + 2] === CONTINUATION) chars[i + 2] = BLANK;
      chars[i + 1] = CONTINUATION;
      this.#styles[i + 1] = style;
    }
  }
}

function isSinglePoint(cluster: string): boolean {
  const code = cluster.charCodeAt(0);
  return cluster.length === 2 && code >= 0xd800 && code <= 0xdbff;
}
