/**
 * One frame of the interactive session, composed into the screen from the bottom up: the status
 * bar, the input line (or the question showing), the hint, the command drawer, the rule with the
 * turn's spinner, the todo panel when it is open, and the transcript in the rows left. A panel
 * (`/panel`), when one is open and no question shows, takes the whole screen instead.
 *
 * @module
 */

import type { CommandRoot } from "@amber/core";
import { cellWidth, truncateToCells } from "@amber/core/cells";
import type { Dialogs } from "./dialogs.ts";
import type { Drawer } from "./drawer.ts";
import { layoutInput, type LineEditor } from "./line_editor.ts";
import type { StyledLine } from "./lines.ts";
import type { PanelView } from "./panel_view.ts";
import type { Screen } from "./screen.ts";
import { Styles } from "./style.ts";
import type { TranscriptView } from "./transcript_view.ts";

const SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
const PROMPT = [{ text: "› ", style: Styles.accent }];

/** How many frames the spinner takes to go round. */
export const SPINNER_FRAMES: number = SPINNER.length;

/** What one frame shows. */
export interface FrameParts {
  /** Composes the status bar for a width (only when the frame shows it). */
  readonly status: (width: number) => StyledLine;
  /** The dialog queue: a question showing replaces the input line. */
  readonly dialogs: Dialogs;
  /** The input line. */
  readonly editor: LineEditor;
  /** The command drawer. */
  readonly drawer: Drawer;
  /** The live command tree, for the drawer. */
  readonly tree: readonly CommandRoot[];
  /** The panel open, if any (it exists). */
  readonly panel: PanelView | undefined;
  /** The transcript. */
  readonly transcript: TranscriptView;
  /** Rows scrolled back from the bottom of the transcript. */
  readonly scroll: number;
  /** A hint over the input line, or "". */
  readonly hint: string;
  /**
   * The turn running: what it does ("" while the model answers), the figures for the right of
   * the rule (elapsed time, live tokens), and the spinner's frame.
   */
  readonly turn:
    | { readonly doing: string; readonly figures: string; readonly spinner: number }
    | undefined;
  /** The todo panel's lines for a width in at most so many rows (none while it is closed). */
  readonly todos?: (width: number, rows: number) => readonly StyledLine[];
}

/**
 * Composes frames into a screen, remembering the transcript rows of the last one so that text
 * that moved up can be scrolled on the terminal instead of rewritten.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Dialogs } from "./dialogs.ts";
 * import { Drawer } from "./drawer.ts";
 * import { FrameComposer } from "./frame.ts";
 * import { LineEditor } from "./line_editor.ts";
 * import { Screen } from "./screen.ts";
 * import { TranscriptView } from "./transcript_view.ts";
 * const screen = new Screen(30, 6);
 * const transcript = new TranscriptView();
 * transcript.notice("hello");
 * new FrameComposer(screen).compose({
 *   status: () => [{ text: "model-x", style: 0 }],
 *   dialogs: new Dialogs(),
 *   editor: new LineEditor(),
 *   drawer: new Drawer(),
 *   tree: [],
 *   panel: undefined,
 *   transcript,
 *   scroll: 0,
 *   hint: "",
 *   turn: undefined,
 * });
 * assert.equal(screen.rowText(0).trim(), "hello");
 * assert.equal(screen.rowText(4).trim(), "›");
 * assert.equal(screen.rowText(5).trim(), "model-x");
 * ```
 */
export class FrameComposer {
  readonly #screen: Screen;
  // The transcript lines of the last frame, to tell when the new frame shows them scrolled up.
  #lastView: readonly StyledLine[] = [];
  #lastWidth = 0;

  /** Frames into `screen`. */
  constructor(screen: Screen) {
    this.#screen = screen;
  }

  /** Composes one frame into the screen. */
  compose(parts: FrameParts): void {
    const screen = this.#screen;
    const width = screen.width;
    const height = screen.height;
    screen.clear();
    if (parts.panel !== undefined) {
      parts.panel.draw(screen);
      screen.setCursor(0, 0, false);
      return;
    }
    let bottom = height - 1;
    screen.writeLine(bottom, 0, parts.status(width));
    const dialog = parts.dialogs.layout(width, height);
    let cursor: { row: number; col: number } | undefined;
    const maxInput = Math.max(1, Math.floor(height / 3));
    let lines: StyledLine[];
    if (dialog !== undefined) {
      lines = dialog.lines.slice(-Math.max(1, height - 3));
      const top = bottom - lines.length;
      if (dialog.cursor !== undefined) {
        cursor = {
          row: top + dialog.cursor.row - (dialog.lines.length - lines.length),
          col: dialog.cursor.col,
        };
      }
    } else {
      const editor = parts.editor;
      const input = layoutInput(editor.text, editor.cursor, width, PROMPT);
      // Keep the cursor's row in view when the text is taller than the input area may be.
      const first = Math.max(0, Math.min(input.row - maxInput + 1, input.lines.length - maxInput));
      lines = input.lines.slice(first, first + maxInput);
      cursor = { row: bottom - lines.length + (input.row - first), col: input.col };
    }
    for (let i = 0; i < lines.length; i++) screen.writeLine(bottom - lines.length + i, 0, lines[i]);
    bottom -= lines.length;
    if (parts.hint !== "") {
      bottom--;
      screen.write(bottom, 2, truncateToCells(parts.hint, width - 2), Styles.warn);
    }
    if (dialog === undefined) parts.drawer.update(parts.tree, parts.editor.text);
    if (dialog === undefined && parts.drawer.open) {
      const rows = Math.max(0, Math.min(Math.floor(height / 2), bottom - 2));
      const drawerLines = parts.drawer.lines(width, rows);
      bottom -= drawerLines.length;
      for (let i = 0; i < drawerLines.length; i++) {
        screen.writeLine(bottom + i, 0, drawerLines[i]);
      }
    }
    bottom--;
    this.#rule(bottom, width, parts);
    // The todo panel sits over the rule, in rows taken from the transcript's share.
    const todoLines = parts.todos?.(width, Math.min(Math.floor(height / 3), bottom - 3)) ?? [];
    bottom -= todoLines.length;
    for (let i = 0; i < todoLines.length; i++) screen.writeLine(bottom + i, 0, todoLines[i]);
    const rows = Math.max(0, bottom);
    const view = parts.transcript.view(width, rows, parts.scroll);
    const shift = scrolledBy(this.#lastView, view);
    if (shift > 0 && this.#lastView.length === rows && this.#lastWidth === width) {
      screen.scrollUp(0, rows, shift);
    }
    this.#lastView = view;
    this.#lastWidth = width;
    for (let i = 0; i < view.length; i++) screen.writeLine(i, 0, view[i]);
    if (cursor !== undefined) screen.setCursor(cursor.row, cursor.col, true);
    else screen.setCursor(height - 1, 0, false);
  }

  // The turn's figures sit at the right end of the rule while there is room beside its label;
  // the label (and the way to cancel) is what stays on a narrow screen.
  #rule(row: number, width: number, parts: FrameParts): void {
    if (row < 0) return;
    this.#screen.fill(row, 0, width, "─", Styles.dim);
    let label = "";
    let figures = "";
    if (parts.turn !== undefined) {
      label = ` ${SPINNER[parts.turn.spinner]} ${parts.turn.doing || "working"} · Ctrl-C cancels `;
      if (parts.turn.figures !== "") figures = ` ${parts.turn.figures} `;
    } else if (parts.scroll > 0) {
      label = " scrolled back · PgDn or Esc returns ";
    }
    if (label === "") return;
    const right = cellWidth(figures);
    if (right > 0 && 2 + cellWidth(label) + 1 + right + 2 <= width) {
      this.#screen.write(row, width - 2 - right, figures, Styles.dim);
    }
    this.#screen.write(row, 2, truncateToCells(label, width - 4), Styles.accent);
  }
}

/**
 * How many rows `next` shows `previous` scrolled up by: the shift at which the most lines from
 * the top are the same line objects (rendered lines are cached, so an unchanged line is the same
 * object from frame to frame), when they are at least half of what the two frames share. The
 * last lines may differ: the line streaming in, and the ones it pushed, are rendered anew. 0
 * when the text did not move. A wrong answer only costs bytes: the screen still compares every
 * cell.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scrolledBy } from "./frame.ts";
 * const line = (text: string) => [{ text, style: 0 }];
 * const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map(line);
 * assert.equal(scrolledBy([a, b, c, d], [b, c, d, e]), 1);
 * assert.equal(scrolledBy([a, b, c, d], [a, b, c, e]), 0);
 * ```
 */
export function scrolledBy(
  previous: readonly StyledLine[],
  next: readonly StyledLine[],
): number {
  const rows = next.length;
  if (previous.length !== rows || rows < 2) return 0;
  let best = 0;
  let bestSame = 0;
  for (let shift = 0; shift < rows; shift++) {
    if (next[0] !== previous[shift]) continue;
    const overlap = rows - shift;
    let same = 0;
    // Blank lines are shared objects: only a line with text anchors a position.
    let anchored = false;
    while (same < overlap && next[same] === previous[same + shift]) {
      if (next[same].length > 0) anchored = true;
      same++;
    }
    if (anchored && same * 2 >= overlap && same > bestSame) {
      best = shift;
      bestSame = same;
    }
  }
  return best;
}
