/**
 * The todo panel: the plan the `todowrite` tool keeps (the host's todo list), shown above the
 * input while work goes on. {@linkcode composeTodoPanel} draws a list into a width and a number
 * of rows (a header with the count done, then each item with its status mark; a long list
 * shows the part around the item in progress); {@linkcode TodoPanel} is the session's panel:
 * it follows the host's list, opens by itself when the list first gets items, and Ctrl-T
 * toggles it. It sits above the input at every width: beside the transcript on a wide screen, it
 * would re-wrap the whole transcript each time it opens or closes.
 *
 * @module
 */

import type { TodoItem, TodoService } from "@amber/core";
import { truncateToCells } from "@amber/core/cells";
import { sanitize, type Span, type StyledLine } from "./lines.ts";
import { type Style, Styles } from "./style.ts";

// The same marks as the `todowrite` tool's checklist, so the panel and the tool's row agree.
const MARKS: { readonly [S in TodoItem["status"]]: { mark: string; style: Style } } = {
  completed: { mark: "[x]", style: Styles.dim },
  in_progress: { mark: "[~]", style: Styles.accent },
  pending: { mark: "[ ]", style: Styles.plain },
};

/** What the header says after the count: the key that hides the panel. */
export const TODO_PANEL_KEY_HINT = "Ctrl-T hides";

/**
 * The todo panel's lines for `items` in `width` cells and at most `rows` rows: a header rule
 * with the count done, then one line per item with its mark (`[x]` done, `[~]` in progress,
 * `[ ]` pending). When the items do not fit, the rows show a window around the first item not
 * done, and the last row says how many are above and below it. Nothing when `rows` is below 2.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { composeTodoPanel } from "./todo_panel.ts";
 * const lines = composeTodoPanel([
 *   { content: "Read the code", status: "completed" },
 *   { content: "Write the fix", status: "in_progress" },
 *   { content: "Run the tests", status: "pending" },
 * ], 40, 10);
 * const text = lines.map((line) => line.map((span) => span.text).join(""));
 * assert.deepEqual(text, [
 *   "─ Todos 1/3 done ──────── Ctrl-T hides ─",
 *   " [x] Read the code",
 *   " [~] Write the fix",
 *   " [ ] Run the tests",
 * ]);
 * ```
 */
export function composeTodoPanel(
  items: readonly TodoItem[],
  width: number,
  rows: number,
): StyledLine[] {
  if (rows < 2 || width < 8) return [];
  const done = items.filter((item) => item.status === "completed").length;
  const title = items.length === 0 ? "Todos: none yet" : `Todos ${done}/${items.length} done`;
  const lines: StyledLine[] = [header(title, width)];
  const room = rows - 1;
  if (items.length <= room) {
    for (const item of items) lines.push(itemLine(item, width));
    return lines;
  }
  // One row goes to the line saying what is left out; the rest show the window.
  const shown = Math.max(1, room - 1);
  const focus = items.findIndex((item) => item.status !== "completed");
  const at = focus === -1 ? items.length - 1 : focus;
  // The item before the one in focus stays in view: it is what was just finished.
  const start = Math.max(0, Math.min(at - 1, items.length - shown));
  for (const item of items.slice(start, start + shown)) lines.push(itemLine(item, width));
  const above = start;
  const below = items.length - start - shown;
  const more = [above > 0 ? `${above} above` : "", below > 0 ? `${below} more` : ""]
    .filter((part) => part !== "").join(", ");
  if (room > 1) lines.push([{ text: truncateToCells(`     … ${more}`, width), style: Styles.dim }]);
  return lines;
}

function header(title: string, width: number): StyledLine {
  const left = `─ ${title} `;
  const right = ` ${TODO_PANEL_KEY_HINT} ─`;
  // A narrow screen drops the key's hint before it cuts the title.
  const hint = width - left.length - right.length >= 1 ? right : "";
  const fill = width - left.length - hint.length;
  if (fill < 0) return [{ text: truncateToCells(left, width), style: Styles.bold }];
  return [
    { text: "─ ", style: Styles.dim },
    { text: title, style: Styles.bold },
    { text: ` ${"─".repeat(fill)}${hint}`, style: Styles.dim },
  ];
}

function itemLine(item: TodoItem, width: number): StyledLine {
  const { mark, style } = MARKS[item.status] ?? MARKS.pending;
  const prefix = ` ${mark} `;
  const spans: Span[] = [
    { text: prefix, style: item.status === "in_progress" ? Styles.accent : Styles.dim },
  ];
  const room = width - prefix.length;
  if (room > 0) {
    const content = sanitize(item.content).replaceAll("\n", " ");
    spans.push({ text: truncateToCells(content, room), style });
  }
  return spans;
}

/**
 * The session's todo panel over the host's todo list. It reads the list when drawn, and, when
 * the service offers `subscribe`, asks for a frame whenever `todowrite` changes it. It opens by
 * itself the first time the list has items; after that only the user opens or closes it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createTodoService } from "../todos.ts";
 * import { TodoPanel } from "./todo_panel.ts";
 * const todos = createTodoService();
 * let frames = 0;
 * const panel = new TodoPanel(todos, () => frames++);
 * assert.equal(panel.open, false);
 * todos.write([{ content: "Plan", status: "in_progress" }]);
 * assert.equal(panel.open, true);
 * assert.equal(frames, 1);
 * assert.equal(panel.lines(40, 5).length, 2);
 * panel.toggle();
 * assert.deepEqual(panel.lines(40, 5), []);
 * panel.close();
 * ```
 */
export class TodoPanel {
  readonly #todos: TodoService | undefined;
  readonly #unsubscribe: (() => void) | undefined;
  #open = false;
  #opened = false;

  /** A panel over `todos` (none: always empty); `changed` is called when it should be redrawn. */
  constructor(todos: TodoService | undefined, changed: () => void) {
    this.#todos = todos;
    this.#unsubscribe = todos?.subscribe?.(() => {
      this.#follow();
      changed();
    });
  }

  /** Whether the panel shows. */
  get open(): boolean {
    this.#follow();
    return this.#open;
  }

  /** Opens a closed panel, closes an open one (Ctrl-T). */
  toggle(): void {
    this.#follow();
    this.#open = !this.#open;
  }

  /** The panel's lines for a width and at most `rows` rows; none while it is closed. */
  lines(width: number, rows: number): StyledLine[] {
    if (!this.open) return [];
    return composeTodoPanel(this.#todos?.list() ?? [], width, rows);
  }

  /**
   * A new conversation (`/clear`, `/resume`): the list becomes `items` (what the conversation
   * left, or none) and the panel opens by itself again the next time the list has items.
   */
  restart(items: readonly TodoItem[]): void {
    this.#opened = false;
    this.#open = false;
    this.#todos?.write(items);
    this.#follow();
  }

  /** Stops following the list. */
  close(): void {
    this.#unsubscribe?.();
  }

  // The first time the list has items, the panel opens.
  #follow(): void {
    if (this.#opened || (this.#todos?.list().length ?? 0) === 0) return;
    this.#opened = true;
    this.#open = true;
  }
}
