/**
 * The full-screen viewer of one tool call's whole output (`Ctrl-Y` on the last tool row): the
 * host's panel frame draws it (title bar, footer, ↑↓ PgUp PgDn Home End scrolling, Esc or `q`
 * closes); this module gives the lines and a search. `/` starts a search that moves to the first
 * match as it is typed, Enter ends the typing, `n` and `N` go to the next and previous match.
 * A search is case-insensitive unless it has a capital letter. The output of a call still
 * running grows in the viewer as it streams.
 *
 * The current match's line starts with {@linkcode SELECTION_MARK}, which the panel frame keeps
 * on the page; every other line starts with two spaces, so that the text does not move.
 *
 * @module
 */

import { cellWidth } from "@amber/core/cells";
import type { PanelEntry } from "@amber/core";
import { plainText, wrapSpans } from "./lines.ts";
import { type PanelSource, SELECTION_MARK } from "./panel_view.ts";
import type { ToolOutput } from "./tool_row.ts";

/** The viewer's panel id. */
export const OUTPUT_VIEWER_ID = "tool-output";

interface Layout {
  readonly text: string;
  readonly width: number;
  /** The wrapped lines. */
  readonly lines: readonly string[];
  /** For each line of the text, the index of its first wrapped line. */
  readonly starts: readonly number[];
}

/**
 * A tool call's output as a panel the host frames: pass it to a `PanelView` with
 * {@linkcode OUTPUT_VIEWER_ID}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OutputViewer, OUTPUT_VIEWER_ID } from "./output_viewer.ts";
 * const output = { title: "bash $ make", text: "cc a.c\nerror: b.c\ncc c.c\nerror: d.c", running: false };
 * const viewer = new OutputViewer(() => output);
 * assert.equal(viewer.list()[0].title, "⚙ bash $ make");
 * for (const key of ["/", "E", "r", "r", "enter"]) assert.equal(viewer.key(OUTPUT_VIEWER_ID, key), true);
 * // "Err" has a capital: the search minds case, and finds nothing.
 * assert.equal(viewer.render(OUTPUT_VIEWER_ID, 40)?.[0], "/Err: no match · / search again");
 * for (const key of ["/", "e", "r", "r", "enter", "n"]) viewer.key(OUTPUT_VIEWER_ID, key);
 * assert.deepEqual(viewer.render(OUTPUT_VIEWER_ID, 40)?.slice(2), [
 *   "  cc a.c",
 *   "  error: b.c",
 *   "  cc c.c",
 *   "› error: d.c",
 * ]);
 * ```
 */
export class OutputViewer implements PanelSource {
  /** Its panel id, {@linkcode OUTPUT_VIEWER_ID}. */
  readonly id: string = OUTPUT_VIEWER_ID;
  readonly #source: () => ToolOutput | undefined;
  #query = "";
  #typing = false;
  // Which match is current, by its place among the matches; kept in range when drawn.
  #current = 0;
  #layout: Layout | undefined;

  /** A viewer of what `source` gives, read again at every frame (a running call's grows). */
  constructor(source: () => ToolOutput | undefined) {
    this.#source = source;
  }

  /** The viewer as the one panel there is. */
  list(): readonly PanelEntry[] {
    const output = this.#source();
    if (output === undefined) return [];
    const title = `⚙ ${output.title}${output.running ? " (running)" : ""}`;
    return [{ id: OUTPUT_VIEWER_ID, title, owner: "core" }];
  }

  /** The lines at `width`: a line about the search, an empty line, then the output. */
  render(id: string, width: number): readonly string[] | undefined {
    const output = this.#source();
    if (id !== OUTPUT_VIEWER_ID || output === undefined) return undefined;
    const layout = this.#lay(output.text, Math.max(3, width));
    const matches = this.#matches(output.text, layout);
    if (matches.length > 0) {
      this.#current = ((this.#current % matches.length) + matches.length) % matches.length;
    }
    const marked = matches.length > 0 ? matches[this.#current] : -1;
    const body = layout.lines.map((line, i) => `${i === marked ? SELECTION_MARK : " "} ${line}`);
    return [this.#status(output, layout, matches), "", ...body];
  }

  /** A key: `/` searches, `n` and `N` move between matches; false for keys that scroll. */
  key(id: string, key: string): boolean {
    if (id !== OUTPUT_VIEWER_ID) return false;
    if (this.#typing) {
      if (key === "enter") this.#typing = false;
      else if (key === "backspace") this.#query = this.#query.slice(0, -1);
      else if (key === "space") this.#query += " ";
      else if ([...key].length === 1) this.#query += key;
      else return false;
      if (this.#typing) this.#current = 0;
      return true;
    }
    if (key === "/") {
      this.#typing = true;
      this.#query = "";
      this.#current = 0;
      return true;
    }
    if ((key === "n" || key === "N") && this.#query !== "") {
      this.#current += key === "n" ? 1 : -1;
      return true;
    }
    return false;
  }

  #status(output: ToolOutput, layout: Layout, matches: readonly number[]): string {
    if (this.#typing) {
      const found = this.#query === ""
        ? "type what to find"
        : matches.length === 0
        ? "no match"
        : `match ${this.#current + 1} of ${matches.length}`;
      return `/${this.#query}▏ ${found} · Enter ends the search`;
    }
    if (this.#query === "") {
      const count = layout.starts.length;
      return `${count} line${count === 1 ? "" : "s"}${
        output.running ? ", still coming" : ""
      } · / search · Esc or q closes`;
    }
    if (matches.length === 0) return `/${this.#query}: no match · / search again`;
    return `/${this.#query}: match ${this.#current + 1} of ${matches.length} · n next · N previous`;
  }

  // The first wrapped line of each text line that matches the query.
  #matches(text: string, layout: Layout): number[] {
    if (this.#query === "") return [];
    const folded = this.#query === this.#query.toLowerCase();
    const query = folded ? this.#query.toLowerCase() : this.#query;
    const matches: number[] = [];
    text.split("\n").forEach((line, i) => {
      if ((folded ? line.toLowerCase() : line).includes(query)) matches.push(layout.starts[i]);
    });
    return matches;
  }

  // The output wrapped to the width less the mark's two cells; kept until either changes.
  #lay(text: string, width: number): Layout {
    const known = this.#layout;
    if (known !== undefined && known.text === text && known.width === width) return known;
    const lines: string[] = [];
    const starts: number[] = [];
    const room = width - 2;
    for (const line of text === "" ? [] : text.split("\n")) {
      starts.push(lines.length);
      if (cellWidth(line) <= room) {
        lines.push(line);
        continue;
      }
      for (const wrapped of wrapSpans([{ text: line, style: 0 }], room, { hard: true })) {
        lines.push(plainText(wrapped));
      }
    }
    this.#layout = { text, width, lines, starts };
    return this.#layout;
  }
}
