/**
 * One tool call as the transcript shows it: a head line naming the tool and what the call is
 * about (`⚙ read notes.txt`), then, while it runs, the last lines of what it streams and, once
 * it ended, its outcome with its duration, a diff of the file it changed, and the output kept
 * after a failure or a cancel.
 *
 * A row is collapsed by default: the first line of the output, a few lines of a diff, the last
 * lines of a failed call's output. Expanded, it shows all of it; the whole output also opens in
 * the full-screen viewer (`output_viewer.ts`).
 *
 * @module
 */

import type { FileChange, ToolCall, ToolResult } from "@amber/core";
import { truncateToCells } from "@amber/core/cells";
import { renderChange } from "./diff_view.ts";
import { isPrintableAscii, sanitize, type Span, type StyledLine, wrapSpans } from "./lines.ts";
import { Styles } from "./style.ts";
import { formatDuration, type ToolLabel, toolTitle } from "./tool_title.ts";

/** Lines of output a collapsed row shows of a running call, and of a failed one. */
export const TAIL_LINES = 3;
/** Lines of a diff a collapsed row shows. */
export const DIFF_LINES = 8;
// Streamed output kept per row: a command that prints without end must not grow the session
// without end. The tail is what a row and the viewer show; the result keeps its own copy.
const STREAM_KEEP = 256 * 1024;

/** A row's whole output, for the full-screen viewer. */
export interface ToolOutput {
  /** The row's line: `read notes.txt`. */
  readonly title: string;
  /** Everything the call printed or returned so far (an error's text when it printed none). */
  readonly text: string;
  /** Whether the call is still running (its output may grow). */
  readonly running: boolean;
}

interface Outcome {
  readonly result: ToolResult;
  /** Undefined when unknown (a resumed session), or the call never ran. */
  readonly ms: number | undefined;
  readonly change: FileChange | undefined;
}

/**
 * One tool call's row.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainText } from "./lines.ts";
 * import { ToolRow } from "./tool_row.ts";
 * const call = { id: "c1", name: "bash", arguments: '{"command":"make"}' };
 * const row = new ToolRow(call, { verb: "running", summary: "$ make" });
 * row.start();
 * row.append("one\ntwo\nthree\nfour\n");
 * assert.deepEqual(row.render(40).map(plainText), [
 *   "⚙ bash $ make  running…",
 *   "  │ two",
 *   "  │ three",
 *   "  │ four",
 * ]);
 * row.end({ ok: true, output: "one\ntwo\nthree\nfour\n" }, 1200);
 * assert.deepEqual(row.render(40).map(plainText), ["⚙ bash $ make", "  ✓ one  … +3 lines  (1.2 s)"]);
 * row.expanded = true;
 * assert.equal(row.render(40).length, 5);
 * ```
 */
export class ToolRow {
  /** The call. */
  readonly call: ToolCall;
  /** Its label. */
  label: ToolLabel;
  /** Whether the row shows all of its output and diff. */
  expanded = false;
  #started = false;
  // What the call streamed, as it came: joined only when all of it is wanted, since a row
  // drawn on every chunk needs just the last lines.
  #chunks: string[] = [];
  #length = 0;
  // Bumped by every chunk: what the cleaned text below was made from.
  #version = 0;
  #outcome: Outcome | undefined;
  // The viewer reads the whole output at every frame: it is cleaned again only once it changed.
  #cleaned:
    | { readonly version: number; readonly outcome: Outcome | undefined; readonly text: string }
    | undefined;

  /** A row for `call`, labelled `label`. */
  constructor(call: ToolCall, label: ToolLabel) {
    this.call = call;
    this.label = label;
  }

  /** The call began to run (it was not denied or blocked). */
  start(): void {
    this.#started = true;
  }

  /** Whether the call is running: started and not yet ended. */
  get running(): boolean {
    return this.#started && this.#outcome === undefined;
  }

  /** Whether the call has ended. */
  get ended(): boolean {
    return this.#outcome !== undefined;
  }

  /** Appends output the running call streamed. */
  append(chunk: string): void {
    if (chunk === "") return;
    this.#chunks.push(chunk);
    this.#length += chunk.length;
    this.#version++;
    if (this.#length > 2 * STREAM_KEEP) {
      const kept = this.#streamed().slice(-STREAM_KEEP);
      this.#chunks = [kept];
      this.#length = kept.length;
    }
  }

  /**
   * The call ended with `result` after `ms` (undefined: unknown). `change`, when the result
   * carries none (a resumed session's call), is what the call did to a file.
   */
  end(result: ToolResult, ms: number | undefined, change?: FileChange): void {
    this.#outcome = { result, ms, change: result.change ?? change };
  }

  /** The row's whole output, for the viewer. */
  output(): ToolOutput {
    return { title: this.title(), text: this.#cleanText(), running: this.running };
  }

  /** The row's line: the tool's name and what the call is about. */
  title(): string {
    return sanitize(toolTitle(this.call.name, this.label.summary));
  }

  /** The row's lines at `width`. */
  render(width: number): StyledLine[] {
    const lines = this.#head(width);
    const outcome = this.#outcome;
    if (outcome === undefined) {
      if (!this.#started) return lines;
      const shown = this.expanded
        ? textLines(this.#streamed())
        : textLines(this.#tail(TAIL_LINES)).map((line) => lineEnd(line, width));
      for (const line of shown) lines.push(...bodyLine(line, width, "  │ "));
      return lines;
    }
    const { result, ms, change } = outcome;
    const took = ms === undefined || !this.#started ? "" : `  (${formatDuration(ms)})`;
    if (result.ok) {
      // The first line with something on it leads, as the call's answer in brief.
      const all = textLines(result.output.trimEnd());
      while (all.length > 0 && all[0].trim() === "") all.shift();
      const rest = all.length - 1;
      const more = rest > 0 && !this.expanded && change === undefined ? `  … +${rest} lines` : "";
      const room = Math.max(1, width - 4 - more.length - took.length);
      lines.push([
        { text: "  ✓ ", style: Styles.good },
        { text: truncateToCells(all[0]?.trim() || "done", room), style: Styles.dim },
        { text: more + took, style: Styles.dim },
      ]);
      if (change !== undefined) {
        const diff = renderChange(
          change,
          Math.max(1, width - 4),
          this.expanded ? undefined : DIFF_LINES,
        );
        for (const line of diff) lines.push([{ text: "    ", style: Styles.plain }, ...line]);
      } else if (this.expanded) {
        for (const line of all.slice(1)) lines.push(...bodyLine(line, width, "    "));
      }
      return lines;
    }
    const error = sanitize((result.error ?? "failed").split("\n")[0]);
    lines.push([
      { text: "  ✗ ", style: Styles.error },
      { text: truncateToCells(error, Math.max(1, width - 4 - took.length)), style: Styles.error },
      { text: took, style: Styles.dim },
    ]);
    // What a failed or cancelled call printed before it stopped.
    const body = textLines(this.#body());
    const shown = this.expanded
      ? body
      : body.slice(-TAIL_LINES).map((line) => lineEnd(line, width));
    if (shown.length < body.length) {
      lines.push([{ text: `    … ${body.length - shown.length} lines above`, style: Styles.dim }]);
    }
    for (const line of shown) lines.push(...bodyLine(line, width, "    "));
    return lines;
  }

  // A failed call's output (what it returned, else what it streamed), or the rest of its
  // error's lines when it printed nothing; nothing for a call that succeeded.
  #body(): string {
    const outcome = this.#outcome;
    if (outcome === undefined || outcome.result.ok) return "";
    const { result } = outcome;
    if (result.output !== "") return result.output;
    if (this.#length > 0) return this.#streamed();
    const error = result.error ?? "";
    const newline = error.indexOf("\n");
    return newline < 0 ? "" : error.slice(newline + 1);
  }

  #cleanText(): string {
    const outcome = this.#outcome;
    const known = this.#cleaned;
    if (known?.version === this.#version && known.outcome === outcome) return known.text;
    let text = this.#streamed();
    if (outcome !== undefined) {
      const { result } = outcome;
      text = result.output !== "" ? result.output : text;
      if (!result.ok && text === "") text = result.error ?? "failed";
    }
    this.#cleaned = { version: this.#version, outcome, text: sanitizeBlock(text) };
    return this.#cleaned.text;
  }

  #streamed(): string {
    if (this.#chunks.length > 1) this.#chunks = [this.#chunks.join("")];
    return this.#chunks[0] ?? "";
  }

  // The last `count` lines streamed, from the chunks at the end alone.
  #tail(count: number): string {
    let text = "";
    for (let i = this.#chunks.length - 1; i >= 0; i--) {
      text = this.#chunks[i] + text;
      if (newlines(text) > count) break;
    }
    return lastLines(text, count);
  }

  #head(width: number): StyledLine[] {
    const title = this.title();
    const name = sanitize(this.call.name);
    const spans: Span[] = title.startsWith(name)
      ? [
        { text: name, style: Styles.bold },
        { text: title.slice(name.length), style: Styles.plain },
      ]
      : [{ text: title, style: Styles.plain }];
    if (this.running) spans.push({ text: `  ${sanitize(this.label.verb)}…`, style: Styles.dim });
    const icon: Span = { text: "⚙ ", style: this.ended ? Styles.dim : Styles.warn };
    return wrapSpans(spans, width, { first: [icon], rest: [{ text: "  ", style: Styles.plain }] });
  }
}

function bodyLine(line: string, width: number, indent: string): StyledLine[] {
  // Most output is short ASCII lines: one screen line each, without the cluster walk.
  if (indent.length + line.length <= width && isPrintableAscii(line)) {
    return [[{ text: indent, style: Styles.dim }, { text: line, style: Styles.dim }]];
  }
  return wrapSpans(line === "" ? [] : [{ text: line, style: Styles.dim }], width, {
    first: [{ text: indent, style: Styles.dim }],
    rest: [{ text: " ".repeat(indent.length), style: Styles.plain }],
    hard: true,
  });
}

// A command's output as lines on screen: the last line's newline ends it (no empty line after),
// and a carriage return inside a line (a progress bar redrawing itself) leaves what came after
// it, as a terminal would show.
function textLines(text: string): string[] {
  if (text === "") return [];
  const lines = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
  return lines.map((line) => sanitize(overprinted(line)));
}

function overprinted(line: string): string {
  const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
  const at = trimmed.lastIndexOf("\r");
  return at < 0 ? trimmed : trimmed.slice(at + 1);
}

function sanitizeBlock(text: string): string {
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n").map((line) =>
    sanitize(overprinted(line))
  ).join("\n");
}

// The end of a line as a collapsed row shows it: about `TAIL_LINES` rows of `width` cells, less
// the row's indent. A command that prints one endless line (a blob, a progress bar without
// carriage returns) must neither take the screen nor make every frame wrap all of it.
function lineEnd(line: string, width: number): string {
  const keep = Math.max(1, TAIL_LINES * (width - 4) - 1);
  if (line.length <= keep) return line;
  let from = line.length - keep;
  const code = line.charCodeAt(from);
  if (code >= 0xdc00 && code <= 0xdfff) from++; // not half of a surrogate pair
  return `…${line.slice(from)}`;
}

function newlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

// The last `count` lines of `text`, found from its end.
function lastLines(text: string, count: number): string {
  let end = text.endsWith("\n") ? text.length - 1 : text.length;
  const stop = end;
  for (let i = 0; i < count; i++) {
    const at = text.lastIndexOf("\n", end - 1);
    if (at < 0) return text.slice(0, stop);
    end = at;
  }
  return text.slice(end + 1, stop);
}
