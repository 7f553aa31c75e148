/**
 * The input line: editing (by character cluster, by word, by line), multi-line text (Ctrl-J,
 * Alt-Enter, a trailing backslash, or a paste), and the history of what was sent, persisted in
 * the config directory as one JSON string per line so entries may span lines. Layout wraps the
 * text to the screen width in cells and says where the cursor goes.
 *
 * @module
 */

import { forEachCluster } from "@amber/core/cells";
import { dirname } from "node:path";
import type { Key } from "./input.ts";
import { lineWidth, type Span, type StyledLine } from "./lines.ts";
import { type Style, Styles } from "./style.ts";

/** What a key did to the editor. */
export type EditResult = "submit" | "edited" | "moved" | "ignored";

/**
 * The input history: oldest first, consecutive duplicates dropped, at most `max` entries kept.
 * With a path, each added entry is appended to the file as it is added, and the file is
 * compacted on load when it has grown past twice the limit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { History } from "./line_editor.ts";
 * const history = new History(["first", "second"]);
 * assert.equal(history.previous("draft"), "second");
 * assert.equal(history.previous("draft"), "first");
 * assert.equal(history.next(), "second");
 * assert.equal(history.next(), "draft");
 * ```
 */
export class History {
  #entries: string[];
  #path: string | undefined;
  #max: number;
  #index: number;
  #draft = "";

  /** A history holding `entries`, appended to `options.path` when given. */
  constructor(entries: readonly string[] = [], options: { path?: string; max?: number } = {}) {
    this.#max = options.max ?? 1000;
    this.#entries = entries.slice(-this.#max);
    this.#path = options.path;
    this.#index = this.#entries.length;
  }

  /**
   * Reads the history file at `path` (a missing file is an empty history; a line that is not a
   * JSON string is skipped).
   */
  static async load(path: string, max: number = 1000): Promise<History> {
    let text = "";
    try {
      text = await Deno.readTextFile(path);
    } catch {
      // No history yet, or unreadable: start empty rather than refuse to start.
    }
    const entries: string[] = [];
    for (const line of text.split("\n")) {
      if (line === "") continue;
      try {
        const entry: unknown = JSON.parse(line);
        if (typeof entry === "string") entries.push(entry);
      } catch {
        // A torn last line from a crash: skip it.
      }
    }
    const history = new History(entries, { path, max });
    if (entries.length > 2 * max) await history.#compact();
    return history;
  }

  /** The entries, oldest first. */
  get entries(): readonly string[] {
    return this.#entries;
  }

  /** Adds an entry (unless blank or equal to the last) and appends it to the file. */
  async add(entry: string): Promise<void> {
    this.reset();
    if (entry.trim() === "" || this.#entries.at(-1) === entry) return;
    this.#entries.push(entry);
    if (this.#entries.length > this.#max) this.#entries.shift();
    this.#index = this.#entries.length;
    if (this.#path === undefined) return;
    await Deno.mkdir(dirname(this.#path), { recursive: true });
    await Deno.writeTextFile(this.#path, `${JSON.stringify(entry)}\n`, { append: true });
  }

  /** The entry before the one shown; `current` is kept as the draft when browsing starts. */
  previous(current: string): string | undefined {
    if (this.#index === 0) return undefined;
    if (this.#index === this.#entries.length) this.#draft = current;
    return this.#entries[--this.#index];
  }

  /** The entry after the one shown; the draft after the newest; undefined when not browsing. */
  next(): string | undefined {
    if (this.#index >= this.#entries.length) return undefined;
    this.#index++;
    return this.#index === this.#entries.length ? this.#draft : this.#entries[this.#index];
  }

  /** Stops browsing. */
  reset(): void {
    this.#index = this.#entries.length;
    this.#draft = "";
  }

  async #compact(): Promise<void> {
    if (this.#path === undefined) return;
    const temp = `${this.#path}.tmp-${Deno.pid}`;
    await Deno.writeTextFile(temp, this.#entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
    await Deno.rename(temp, this.#path);
  }
}

// Where each cluster starts, plus the end: a line break is a cluster of its own.
function clusterStarts(text: string): number[] {
  const starts: number[] = [];
  let offset = 0;
  const lines = text.split("\n");
  for (let l = 0; l < lines.length; l++) {
    const line = lines[l];
    forEachCluster(line, (cluster) => {
      starts.push(offset);
      offset += cluster.length;
    });
    if (l < lines.length - 1) {
      starts.push(offset);
      offset += 1;
    }
  }
  starts.push(offset);
  return starts;
}

function cellsBetween(text: string): number {
  let width = 0;
  forEachCluster(text, (_cluster, w) => width += w);
  return width;
}

const WORD = /[\p{L}\p{N}_]/u;
// Every control character but the line break: what a paste may carry that the text must not.
// deno-lint-ignore no-control-regex -- dropping control characters is the point
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f]/g;

/**
 * The editor's text and cursor, and what each key does to them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LineEditor } from "./line_editor.ts";
 * const editor = new LineEditor();
 * const k = (name: string, text?: string) => ({ name, text, ctrl: false, alt: false, shift: false });
 * editor.handle(k("text", "hello world"));
 * editor.handle({ ...k("w"), ctrl: true }); // delete the word before the cursor
 * editor.handle(k("text", "there"));
 * assert.equal(editor.text, "hello there");
 * assert.equal(editor.handle(k("enter")), "submit");
 * ```
 */
export class LineEditor {
  #text = "";
  #cursor = 0;
  readonly #history: History | undefined;

  /** An empty editor, browsing `history` with Up and Down. */
  constructor(history?: History) {
    this.#history = history;
  }

  /** The text. */
  get text(): string {
    return this.#text;
  }

  /** The cursor, as an index into the text. */
  get cursor(): number {
    return this.#cursor;
  }

  /** Replaces the text; the cursor goes to `cursor` (the end by default). */
  set(text: string, cursor: number = text.length): void {
    this.#text = text;
    this.#cursor = Math.max(0, Math.min(text.length, cursor));
  }

  /** Inserts text at the cursor (tabs become spaces; other control characters are dropped). */
  insert(text: string): void {
    const clean = text.replace(/\r\n?/g, "\n").replaceAll("\t", "    ").replace(CONTROLS, "");
    this.#text = this.#text.slice(0, this.#cursor) + clean + this.#text.slice(this.#cursor);
    this.#cursor += clean.length;
  }

  /** Returns the text and empties the editor. */
  take(): string {
    const text = this.#text;
    this.set("");
    this.#history?.reset();
    return text;
  }

  /** Applies one key. */
  handle(key: Key): EditResult {
    const { name, ctrl, alt } = key;
    if (name === "text" && !ctrl) {
      this.insert(key.text ?? "");
      return "edited";
    }
    if (name === "paste") {
      this.insert(key.text ?? "");
      return "edited";
    }
    if (name === "enter" && !alt) {
      if (this.#text.slice(0, this.#cursor).endsWith("\\")) {
        this.#text = this.#text.slice(0, this.#cursor - 1) + "\n" + this.#text.slice(this.#cursor);
        return "edited";
      }
      return "submit";
    }
    if ((name === "enter" && alt) || (name === "j" && ctrl)) {
      this.insert("\n");
      return "edited";
    }
    if (name === "backspace") return alt ? this.#deleteWordBack() : this.#deleteBack();
    if (ctrl && name === "h") return this.#deleteBack();
    if (ctrl && name === "w") return this.#deleteWordBack();
    if (name === "delete" || (ctrl && name === "d" && this.#text !== "")) {
      return this.#deleteForward();
    }
    if ((name === "left" && (ctrl || alt)) || (alt && name === "b")) return this.#wordLeft();
    if ((name === "right" && (ctrl || alt)) || (alt && name === "f")) return this.#wordRight();
    if (name === "left" || (ctrl && name === "b")) return this.#move(-1);
    if (name === "right" || (ctrl && name === "f")) return this.#move(1);
    if (name === "home" || (ctrl && name === "a")) return this.#to(this.#lineStart());
    if (name === "end" || (ctrl && name === "e")) return this.#to(this.#lineEnd());
    if (ctrl && name === "k") return this.#cut(this.#cursor, this.#lineEnd());
    if (ctrl && name === "u") return this.#cut(this.#lineStart(), this.#cursor);
    if (name === "up" || (ctrl && name === "p")) return this.#vertical(-1);
    if (name === "down" || (ctrl && name === "n")) return this.#vertical(1);
    return "ignored";
  }

  #lineStart(): number {
    return this.#text.lastIndexOf("\n", this.#cursor - 1) + 1;
  }

  #lineEnd(): number {
    const end = this.#text.indexOf("\n", this.#cursor);
    return end < 0 ? this.#text.length : end;
  }

  #to(index: number): EditResult {
    if (index === this.#cursor) return "ignored";
    this.#cursor = index;
    return "moved";
  }

  #cut(from: number, to: number): EditResult {
    if (from === to) return "ignored";
    this.#text = this.#text.slice(0, from) + this.#text.slice(to);
    this.#cursor = from;
    return "edited";
  }

  #move(direction: -1 | 1): EditResult {
    const starts = clusterStarts(this.#text);
    const at = starts.indexOf(this.#cursor);
    const target = starts[at + direction];
    return target === undefined ? "ignored" : this.#to(target);
  }

  #deleteBack(): EditResult {
    const starts = clusterStarts(this.#text);
    const at = starts.indexOf(this.#cursor);
    return at <= 0 ? "ignored" : this.#cut(starts[at - 1], this.#cursor);
  }

  #deleteForward(): EditResult {
    const starts = clusterStarts(this.#text);
    const at = starts.indexOf(this.#cursor);
    const next = starts[at + 1];
    return next === undefined ? "ignored" : this.#cut(this.#cursor, next);
  }

  #wordStartBefore(): number {
    let i = this.#cursor;
    const text = this.#text;
    while (i > 0 && !WORD.test(text[i - 1])) i--;
    while (i > 0 && WORD.test(text[i - 1])) i--;
    return i;
  }

  #wordLeft(): EditResult {
    return this.#to(this.#wordStartBefore());
  }

  #wordRight(): EditResult {
    let i = this.#cursor;
    const text = this.#text;
    while (i < text.length && !WORD.test(text[i])) i++;
    while (i < text.length && WORD.test(text[i])) i++;
    return this.#to(i);
  }

  #deleteWordBack(): EditResult {
    return this.#cut(this.#wordStartBefore(), this.#cursor);
  }

  #vertical(direction: -1 | 1): EditResult {
    const start = this.#lineStart();
    const end = this.#lineEnd();
    const onEdge = direction < 0 ? start === 0 : end === this.#text.length;
    if (onEdge) {
      if (this.#history === undefined) return "ignored";
      const entry = direction < 0 ? this.#history.previous(this.#text) : this.#history.next();
      if (entry === undefined) return "ignored";
      this.set(entry);
      return "edited";
    }
    // Keep the column in cells on the line above or below.
    const column = cellsBetween(this.#text.slice(start, this.#cursor));
    const lineStart = direction < 0 ? this.#text.lastIndexOf("\n", start - 2) + 1 : end + 1;
    let lineEnd = this.#text.indexOf("\n", lineStart);
    if (lineEnd < 0) lineEnd = this.#text.length;
    let index = lineStart;
    let cells = 0;
    forEachCluster(this.#text.slice(lineStart, lineEnd), (cluster, width) => {
      if (cells + width <= column) {
        cells += width;
        index += cluster.length;
      } else {
        cells = Number.POSITIVE_INFINITY;
      }
    });
    return this.#to(index);
  }
}

/** The input area laid out: its lines and where the cursor goes. */
export interface InputLayout {
  /** The screen lines, prompt included. */
  readonly lines: StyledLine[];
  /** The cursor's row within `lines`. */
  readonly row: number;
  /** The cursor's column. */
  readonly col: number;
}

/**
 * Lays the editor's text out at `width` cells: `prompt` before the first line, spaces of the same
 * width before the others, long lines broken at the width (by cluster, never inside one).
 * `masked` shows each cluster as `•` (secrets).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { layoutInput } from "./line_editor.ts";
 * import { plainText } from "./lines.ts";
 * const layout = layoutInput("abcdef\nxy", 4, 6, [{ text: "> ", style: 0 }]);
 * assert.deepEqual(layout.lines.map(plainText), ["> abcd", "  ef", "  xy"]);
 * assert.deepEqual([layout.row, layout.col], [1, 2]);
 * ```
 */
export function layoutInput(
  text: string,
  cursor: number,
  width: number,
  prompt: readonly Span[],
  masked: boolean = false,
  textStyle: Style = Styles.plain,
): InputLayout {
  const indent = lineWidth(prompt);
  const pad: Span = { text: " ".repeat(indent), style: Styles.plain };
  const lines: Span[][] = [];
  let current: Span[] = [...prompt];
  let piece = "";
  let col = indent;
  let row = 0;
  let cursorRow = -1;
  let cursorCol = indent;
  const avail = Math.max(indent + 1, width);
  const flush = () => {
    if (piece !== "") current.push({ text: piece, style: textStyle });
    piece = "";
  };
  const newRow = () => {
    flush();
    lines.push(current);
    current = [pad];
    col = indent;
    row++;
  };
  let offset = 0;
  const logical = text.split("\n");
  for (let l = 0; l < logical.length; l++) {
    if (l > 0) {
      if (offset - 1 === cursor && cursorRow < 0) {
        cursorRow = row;
        cursorCol = col;
      }
      newRow();
    }
    forEachCluster(logical[l], (cluster, w) => {
      const shown = masked ? "•" : cluster;
      const cells = masked ? 1 : w;
      if (col + cells > avail) newRow();
      if (offset === cursor && cursorRow < 0) {
        cursorRow = row;
        cursorCol = col;
      }
      piece += shown;
      col += cells;
      offset += cluster.length;
    });
    offset += 1; // the line break
  }
  if (cursorRow < 0) {
    cursorRow = row;
    cursorCol = col;
  }
  flush();
  lines.push(current);
  return { lines, row: cursorRow, col: cursorCol };
}
