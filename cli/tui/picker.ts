/**
 * A picker: a list to choose one thing from (a model, a provider, a session), shown as a panel
 * over the whole screen. Typing narrows it (every typed word must appear in the item, in any
 * case), ↑↓ and PgUp PgDn move the selection, Enter picks, Esc closes. The items may arrive
 * after it opens (a provider's model listing takes a moment): until then it says it is loading.
 * Columns are aligned under a header that stays at the top while the list scrolls.
 *
 * @module
 */

import { cellWidth, truncateToCells } from "@amber/core/cells";
import { padEndToCells } from "../text_table.ts";
import { type PanelSource, SELECTION_MARK } from "./panel_view.ts";

/** One thing to pick. */
export interface PickerItem {
  /** What picking it hands over: a model id, a session id. */
  readonly value: string;
  /** What the row shows, one text per column; the first is its name. */
  readonly columns: readonly string[];
  /** Whether it is the one in use: the selection starts on it. */
  readonly current?: boolean;
}

/** What a picker is. */
export interface PickerOptions {
  /** The panel id it opens as. */
  readonly id: string;
  /** The panel's title. */
  readonly title: string;
  /** The columns' titles. */
  readonly header: readonly string[];
  /** Called with the value picked (after Enter). */
  readonly onPick: (value: string) => void;
}

// The most rows PgUp and PgDn move by.
const PAGE = 10;

/**
 * A list to pick from, as a panel source for the host's panel view.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Picker } from "./picker.ts";
 * const picked: string[] = [];
 * const picker = new Picker({
 *   id: "models",
 *   title: "Models",
 *   header: ["model", "context"],
 *   onPick: (value) => picked.push(value),
 * });
 * assert.match(picker.lines(60).join("\n"), /loading/);
 * picker.setItems([
 *   { value: "gpt-5", columns: ["gpt-5", "400,000"] },
 *   { value: "gpt-5-mini", columns: ["gpt-5-mini", "400,000"], current: true },
 *   { value: "o3", columns: ["o3", "200,000"] },
 * ]);
 * assert.equal(picker.selected?.value, "gpt-5-mini", "the selection starts on the one in use");
 * for (const key of ["o", "3"]) picker.key(key);
 * assert.deepEqual(picker.visible.map((item) => item.value), ["o3"]);
 * picker.key("enter");
 * assert.deepEqual(picked, ["o3"]);
 * assert.equal(picker.done, true);
 * ```
 */
export class Picker {
  /** The panel id. */
  readonly id: string;
  readonly #options: PickerOptions;
  #items: readonly PickerItem[] | undefined;
  #notes: readonly string[] = [];
  #filter = "";
  #visible: readonly PickerItem[] = [];
  #selected = 0;
  #done = false;

  /** An empty picker, loading until {@linkcode Picker.setItems}. */
  constructor(options: PickerOptions) {
    this.id = options.id;
    this.#options = options;
  }

  /** Fills the list (in the order given); `notes` say what is missing from it, and why. */
  setItems(items: readonly PickerItem[], notes: readonly string[] = []): void {
    const selected = this.selected?.value;
    this.#items = items;
    this.#notes = notes;
    this.#narrow();
    const keep = selected ?? items.find((item) => item.current)?.value;
    const at = this.#visible.findIndex((item) => item.value === keep);
    this.#selected = Math.max(0, at);
  }

  /** What is typed to narrow the list. */
  get filter(): string {
    return this.#filter;
  }

  /** The items the filter lets through, in order. */
  get visible(): readonly PickerItem[] {
    return this.#visible;
  }

  /** The item Enter would pick. */
  get selected(): PickerItem | undefined {
    return this.#visible[this.#selected];
  }

  /** Whether an item was picked (the host closes the panel). */
  get done(): boolean {
    return this.#done;
  }

  /**
   * A key, by its name (`up`, `enter`, `backspace`, a typed character): whether the picker used
   * it. Esc is the host's: it closes the panel.
   */
  key(name: string): boolean {
    const count = this.#visible.length;
    switch (name) {
      case "up":
      case "down":
        if (count === 0) return false;
        this.#selected = (this.#selected + (name === "up" ? -1 : 1) + count) % count;
        return true;
      case "pageup":
      case "pagedown": {
        const by = name === "pageup" ? -PAGE : PAGE;
        this.#selected = Math.max(0, Math.min(count - 1, this.#selected + by));
        return true;
      }
      case "home":
      case "end":
        this.#selected = name === "home" ? 0 : Math.max(0, count - 1);
        return true;
      case "enter": {
        const item = this.selected;
        if (item === undefined) return false;
        this.#done = true;
        this.#options.onPick(item.value);
        return true;
      }
      case "backspace":
        return this.#setFilter([...this.#filter].slice(0, -1).join(""));
      case "ctrl+u":
        return this.#setFilter("");
      case "space":
        return this.#setFilter(`${this.#filter} `);
      default:
        // A typed character; every other named key (tab, ctrl+x...) is not the picker's.
        if ([...name].length !== 1) return false;
        return this.#setFilter(this.#filter + name);
    }
  }

  /**
   * The panel's lines at `width`: the filter and notes, the column header, an empty line, then
   * a row per item, the selected one starting with the selection mark.
   */
  lines(width: number): string[] {
    const heading = [
      `Filter: ${this.#filter}▏`,
      ...this.#notes,
    ];
    const items = this.#items;
    if (items === undefined) return [...heading, "", "  loading…"];
    const rows = [this.#options.header, ...this.#visible.map((item) => item.columns)];
    const widths = this.#options.header.map((_, column) =>
      Math.max(...rows.map((row) => cellWidth(row[column] ?? "")))
    );
    const line = (columns: readonly string[]) =>
      truncateToCells(
        columns.map((text, i) => i === columns.length - 1 ? text : padEndToCells(text, widths[i]))
          .join("  ").trimEnd(),
        Math.max(1, width - 2),
      );
    const body = this.#visible.map((item, i) =>
      `${i === this.#selected ? SELECTION_MARK : " "} ${line(item.columns)}`
    );
    if (items.length === 0) body.push("  (nothing to pick)");
    else if (body.length === 0) body.push(`  nothing matches '${this.#filter}'`);
    return [...heading, `  ${line(this.#options.header)}`, "", ...body];
  }

  /** The picker as a panel the host's panel view shows. */
  source(): PanelSource {
    const entry = { id: this.id, title: this.#options.title, owner: "core" };
    return {
      list: () => [entry],
      render: (id, width) => id === this.id ? this.lines(width) : undefined,
      key: (id, key) => id === this.id && this.key(key),
      done: () => this.#done,
      footer: () => "type to filter · ↑↓ select · Enter pick · Esc close",
    };
  }

  #setFilter(filter: string): boolean {
    if (filter === this.#filter) return false;
    this.#filter = filter;
    this.#narrow();
    this.#selected = 0;
    return true;
  }

  #narrow(): void {
    const words = this.#filter.toLowerCase().split(/\s+/).filter((word) => word !== "");
    this.#visible = (this.#items ?? []).filter((item) => {
      const text = [item.value, ...item.columns].join(" ").toLowerCase();
      return words.every((word) => text.includes(word));
    });
  }
}
