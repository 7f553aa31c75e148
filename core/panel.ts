/**
 * Panels: full-screen views whose placement, framing, scrolling and keys the host owns.
 *
 * @module
 */

import type { OwnedRegistry } from "./registry.ts";

/**
 * A panel capability. `lines` is called on every repaint: pure and fast.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { PanelCapability } from "@amber/core";
 * const panel: PanelCapability = {
 *   kind: "panel",
 *   name: "models",
 *   id: "gemini_models",
 *   title: "Gemini models",
 *   lines: (width) => ["gemini-2.5-pro".slice(0, width)],
 * };
 * assert.deepEqual(panel.lines(6), ["gemini"]);
 * ```
 */
export interface PanelCapability {
  /** The dispatch key. */
  readonly kind: "panel";
  /** Unique within the plugin. */
  readonly name: string;
  /** Unique across the harness. */
  readonly id: string;
  /** The title the host frames it with. */
  readonly title: string;
  /** The panel's lines for a width. */
  lines(width: number): readonly string[];
  /** Sees keys only while the panel is focused; true when it used the key. */
  onKey?(key: string): boolean;
}

/** One registered panel. */
export interface PanelEntry {
  /** The panel's id. */
  readonly id: string;
  /** Its title. */
  readonly title: string;
  /** The plugin that contributed it. */
  readonly owner: string;
}

/**
 * The panel registry contract.
 */
export interface PanelRegistry extends OwnedRegistry<PanelCapability> {
  /** Every panel. */
  list(): readonly PanelEntry[];
  /** The panel's lines, or undefined when there is no such panel. A throwing panel shows its error. */
  render(id: string, width: number): readonly string[] | undefined;
  /** Routes a key to the focused panel; false when it did not use it or failed. */
  key(id: string, key: string): boolean;
}
