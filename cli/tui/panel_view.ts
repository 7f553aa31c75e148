/**
 * A panel on the whole screen. The host owns the frame (a title bar and a footer), scrolling and
 * the keys: Esc closes the panel; every other key goes first to the panel's own `onKey`, and
 * only while the panel is open (focused); a key the panel does not use scrolls. There is no
 * global key hook: a panel never sees a key typed anywhere else. `lines(width)` is called only
 * while a frame is composed.
 *
 * A panel that lets the user select a line (↑↓ over a list) marks it by starting it with
 * {@linkcode SELECTION_MARK}, as the `/plugins` console does. The host then keeps the selection
 * on the page: after a key the panel used, it scrolls so the marked line is shown, and the
 * panel's heading (its lines before the first empty line, when that comes before the marked
 * line) stays at the top while the rest scrolls below it, so what the panel says about the
 * selection stays in sight.
 *
 * @module
 */

import type { PanelRegistry } from "@amber/core";
import { truncateToCells } from "@amber/core/cells";
import { type Key, keyName } from "./input.ts";
import type { Screen } from "./screen.ts";
import { Styles } from "./style.ts";

/** What starts the line of a panel's selection, which the host keeps on the page. */
export const SELECTION_MARK = "›";

/**
 * Where a panel view finds its panel: the panel registry, or a view the TUI itself shows (the
 * `/mcp` console, a picker) in the same frame. A view of the TUI's own may say when it is
 * finished (a picker picked), and what its footer says.
 */
export type PanelSource = Pick<PanelRegistry, "list" | "render" | "key"> & {
  /** Whether the panel has finished: the host closes it after the key that finished it. */
  readonly done?: (id: string) => boolean;
  /** The footer's text, in place of the host's own key help. */
  readonly footer?: (id: string) => string;
};

/** What a key did to a panel. */
export type PanelKeyResult = "close" | "handled" | "ignored";

/**
 * The open panel: its id, scroll position and the last page height it was drawn with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPanelRegistry } from "@amber/registries/panels";
 * import { EventBus } from "@amber/core";
 * import { PanelView } from "./panel_view.ts";
 * import { Screen } from "./screen.ts";
 * const panels = createPanelRegistry();
 * panels.install("p", {
 *   kind: "panel", name: "n", id: "numbers", title: "Numbers",
 *   lines: () => Array.from({ length: 50 }, (_, i) => `line ${i}`),
 * }, {
 *   owner: "p", tools: { get: () => undefined, list: () => [] }, events: new EventBus(),
 *   config: () => ({ plugins: {} }), host: {}, workspace: { root: "/" },
 * });
 * const view = new PanelView("numbers", panels);
 * const screen = new Screen(30, 6);
 * view.draw(screen);
 * assert.equal(screen.rowText(1).trim(), "line 0");
 * view.key({ name: "pagedown", ctrl: false, alt: false, shift: false });
 * view.draw(screen);
 * assert.equal(screen.rowText(1).trim(), "line 3");
 * assert.equal(view.key({ name: "escape", ctrl: false, alt: false, shift: false }), "close");
 * ```
 *
 * @example A selection below the page is scrolled into view, under the panel's heading
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPanelRegistry } from "@amber/registries/panels";
 * import { EventBus } from "@amber/core";
 * import { PanelView } from "./panel_view.ts";
 * import { Screen } from "./screen.ts";
 * const panels = createPanelRegistry();
 * let selected = -1;
 * panels.install("p", {
 *   kind: "panel", name: "n", id: "pick", title: "Pick",
 *   lines: () => [
 *     `picked ${selected}`,
 *     "",
 *     ...Array.from({ length: 20 }, (_, i) => `${i === selected ? "›" : " "} item ${i}`),
 *   ],
 *   onKey: (key) => {
 *     if (key !== "up") return false;
 *     selected = 19;
 *     return true;
 *   },
 * }, {
 *   owner: "p", tools: { get: () => undefined, list: () => [] }, events: new EventBus(),
 *   config: () => ({ plugins: {} }), host: {}, workspace: { root: "/" },
 * });
 * const view = new PanelView("pick", panels);
 * const screen = new Screen(30, 8);
 * view.key({ name: "up", ctrl: false, alt: false, shift: false });
 * view.draw(screen);
 * const rows = Array.from({ length: 8 }, (_, row) => screen.rowText(row).trim());
 * assert.deepEqual(rows.slice(1, 7), ["picked 19", "", "item 16", "item 17", "item 18", "› item 19"]);
 * ```
 */
export class PanelView {
  /** The panel's id. */
  readonly id: string;
  readonly #panels: PanelSource;
  // The scroll position, page height and line count of the part that scrolls: below the
  // heading, when a selection keeps one.
  #scroll = 0;
  #page = 1;
  #total = 0;
  // Set by a key the panel used: the next frame shows its selection.
  #reveal = false;

  /** Opens panel `id` of `panels`. */
  constructor(id: string, panels: PanelSource) {
    this.id = id;
    this.#panels = panels;
  }

  /** Whether the panel still exists (its plugin may have been switched off). */
  get exists(): boolean {
    return this.#panels.list().some((panel) => panel.id === this.id);
  }

  /** Routes a key: Esc closes; the panel's `onKey` next; unused keys scroll. */
  key(key: Key): PanelKeyResult {
    if (key.name === "escape" && !key.alt) return "close";
    if (this.#panels.key(this.id, keyName(key))) {
      this.#reveal = true;
      return this.#panels.done?.(this.id) ? "close" : "handled";
    }
    const page = Math.max(1, this.#page - 1);
    switch (key.name) {
      case "up":
        return this.#scrollTo(this.#scroll - 1);
      case "down":
        return this.#scrollTo(this.#scroll + 1);
      case "pageup":
        return this.#scrollTo(this.#scroll - page);
      case "pagedown":
      case "space":
        return this.#scrollTo(this.#scroll + page);
      case "home":
        return this.#scrollTo(0);
      case "end":
        return this.#scrollTo(this.#total);
      case "text":
        if (key.text === " ") return this.#scrollTo(this.#scroll + page);
        if (key.text === "q") return "close";
        return "ignored";
      default:
        return "ignored";
    }
  }

  /** Draws the panel over the whole screen: title bar, lines, footer. */
  draw(screen: Screen): void {
    const width = screen.width;
    const height = screen.height;
    const entry = this.#panels.list().find((panel) => panel.id === this.id);
    const title = entry === undefined ? this.id : entry.title;
    const lines = this.#panels.render(this.id, Math.max(1, width - 2)) ??
      [`panel '${this.id}' is gone (its plugin was switched off)`];
    const rows = Math.max(1, height - 2);
    const marked = lines.findIndex((line) => line.startsWith(SELECTION_MARK));
    const heading = headingOf(lines, marked, rows);
    this.#page = rows - heading;
    this.#total = lines.length - heading;
    if (this.#reveal && marked >= 0) {
      const at = marked - heading;
      if (at < this.#scroll) this.#scroll = at;
      else if (at >= this.#scroll + this.#page) this.#scroll = at - this.#page + 1;
    }
    this.#reveal = false;
    this.#scroll = Math.max(0, Math.min(this.#scroll, this.#total - this.#page));
    screen.fill(0, 0, width, " ", Styles.title);
    screen.write(0, 1, truncateToCells(title, width - 2), Styles.title);
    for (let row = 0; row < rows; row++) {
      // Below the heading, the lines from the scroll position on.
      const line = lines[row < heading ? row : this.#scroll + row];
      if (line === undefined) break;
      screen.write(row + 1, 1, truncateToCells(line, width - 2), Styles.plain, width - 1);
    }
    const first = heading + this.#scroll;
    const end = Math.min(lines.length, first + this.#page);
    const position = lines.length > rows ? `  ${first + 1}-${end} of ${lines.length}` : "";
    screen.write(
      height - 1,
      0,
      truncateToCells(
        `${this.#panels.footer?.(this.id) ?? "Esc close · ↑↓ PgUp PgDn scroll"}${position}`,
        width,
      ),
      Styles.dim,
    );
  }

  #scrollTo(line: number): PanelKeyResult {
    const next = Math.max(0, Math.min(line, this.#total - this.#page));
    if (next === this.#scroll) return "ignored";
    this.#scroll = next;
    return "handled";
  }
}

// How many lines at the top stay put: a panel's heading (up to and with its first empty line),
// kept only above a selection and only when it leaves room for the selection to scroll.
function headingOf(lines: readonly string[], marked: number, rows: number): number {
  if (marked < 0) return 0;
  const blank = lines.indexOf("");
  if (blank < 0 || blank > marked) return 0;
  return blank + 1 < rows ? blank + 1 : 0;
}
