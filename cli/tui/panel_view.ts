/**
 * A panel on the whole screen. The host owns the frame (a title bar and a footer), scrolling and
 * the keys: Esc closes the panel; every other key goes first to the panel's own `onKey`, and
 * only while the panel is open (focused); a key the panel does not use scrolls. There is no
 * global key hook: a panel never sees a key typed anywhere else. `lines(width)` is called only
 * while a frame is composed.
 *
 * @module
 */

import type { PanelRegistry } from "@amber/core";
import { truncateToCells } from "@amber/core/cells";
import { type Key, keyName } from "./input.ts";
import type { Screen } from "./screen.ts";
import { Styles } from "./style.ts";

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
 */
export class PanelView {
  /** The panel's id. */
  readonly id: string;
  readonly #panels: PanelRegistry;
  #scroll = 0;
  #page = 1;
  #total = 0;

  /** Opens panel `id` of `panels`. */
  constructor(id: string, panels: PanelRegistry) {
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
    if (this.#panels.key(this.id, keyName(key))) return "handled";
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
    this.#page = Math.max(1, height - 2);
    this.#total = lines.length;
    this.#scroll = Math.max(0, Math.min(this.#scroll, lines.length - this.#page));
    screen.fill(0, 0, width, " ", Styles.title);
    screen.write(0, 1, truncateToCells(title, width - 2), Styles.title);
    for (let row = 0; row < this.#page; row++) {
      const line = lines[this.#scroll + row];
      if (line === undefined) break;
      screen.write(row + 1, 1, truncateToCells(line, width - 2), Styles.plain, width - 1);
    }
    const end = Math.min(lines.length, this.#scroll + this.#page);
    const position = lines.length > this.#page
      ? `  ${this.#scroll + 1}-${end} of ${lines.length}`
      : "";
    screen.write(
      height - 1,
      0,
      truncateToCells(`Esc close · ↑↓ PgUp PgDn scroll${position}`, width),
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
