/**
 * The conversation left in the terminal's scrollback after the interactive session: the TUI
 * draws on the alternate screen, which the terminal throws away on exit, so the transcript is
 * written again, line by line, to the normal screen once the TUI has left. The lines are the
 * ones the screen showed, at the terminal's width; styles become colour and attribute codes
 * only (no cursor movement, nothing else), and nothing at all with colour off.
 *
 * @module
 */

import type { StyledLine } from "./lines.ts";
import { sgr } from "./style.ts";

/** What {@linkcode scrollbackText} reads: the transcript view's size and lines. */
export interface TranscriptLines {
  /** How many lines the transcript takes at `width`. */
  totalLines(width: number): number;
  /** `height` lines at `width`, `scroll` lines up from the end. */
  view(width: number, height: number, scroll: number): readonly StyledLine[];
}

/**
 * One styled line as terminal text: each span in its style when `color` is on (the line ends
 * with a reset), the bare text otherwise; trailing blanks are dropped either way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineText } from "./scrollback.ts";
 * import { Styles } from "./style.ts";
 * const line = [{ text: "› ", style: Styles.dim }, { text: "hi  ", style: Styles.plain }];
 * assert.equal(lineText(line, false), "› hi");
 * assert.match(lineText(line, true), /^\x1b\[[0-9;]*m› \x1b\[[0-9;]*mhi\x1b\[0m$/);
 * ```
 */
export function lineText(line: StyledLine, color: boolean): string {
  // Trailing blanks (padding, an empty last span) are dropped from the end of the line only.
  const spans = [...line];
  while (spans.length > 0 && spans.at(-1)!.text.trimEnd() === "") spans.pop();
  if (spans.length === 0) return "";
  const last = spans.length - 1;
  const texts = spans.map((span, i) => i === last ? span.text.trimEnd() : span.text);
  if (!color) return texts.join("");
  return spans.map((span, i) => sgr(span.style) + texts[i]).join("") + "\x1b[0m";
}

/**
 * The whole transcript at `width`, one line per screen line, joined with newlines (no final
 * newline); empty when the transcript is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scrollbackText } from "./scrollback.ts";
 * import { TranscriptView } from "./transcript_view.ts";
 * const view = new TranscriptView();
 * view.addUser("fix the typo");
 * view.notice("session abc", "dim");
 * const text = scrollbackText(view, 40, false);
 * assert.match(text, /fix the typo/);
 * assert.match(text, /session abc/);
 * assert.doesNotMatch(text, /\x1b/);
 * ```
 */
export function scrollbackText(view: TranscriptLines, width: number, color: boolean): string {
  const total = view.totalLines(width);
  if (total === 0) return "";
  return view.view(width, total, 0).map((line) => lineText(line, color)).join("\n");
}
