/**
 * The ledger: every contribution a plugin made, so that disabling it removes exactly those.
 *
 * @module
 */

import type { Contribution } from "./contribution.ts";

const NOTHING = Object.freeze([]) as unknown as Contribution[];

/** A `remove` that threw during an unwind. */
export interface UnwindFault {
  /** The contribution whose `remove` threw. */
  readonly contribution: Contribution;
  /** What it threw. */
  readonly error: unknown;
}

/**
 * Records contributions against their plugin and unwinds them newest first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginLedger } from "@amber/core";
 * const ledger = new PluginLedger();
 * const removed: string[] = [];
 * ledger.record("hello", { kind: "tool", name: "a", ids: ["a"], remove: () => removed.push("a") });
 * ledger.record("hello", { kind: "tool", name: "b", ids: ["b"], remove: () => removed.push("b") });
 * ledger.unwind("hello");
 * assert.deepEqual(removed, ["b", "a"]);
 * ```
 */
export class PluginLedger {
  // An owner whose contributions are all gone keeps its key with an empty list: V8 leaves a
  // deleted Map entry in its bucket until the table is rebuilt, so deleting and adding the same
  // owner again and again (a plugin switched off and on) made every lookup walk a chain as long
  // as the ledger is big. `at` orders owners by when they last went from nothing to something;
  // the map is rebuilt when empty owners outnumber the others.
  #entries = new Map<string, { list: Contribution[]; at: number }>();
  #next = 0;
  #empty = 0;

  /** Records `contribution` against `pluginId`. */
  record(pluginId: string, contribution: Contribution): void {
    const holding = this.#entries.get(pluginId);
    if (holding === undefined) {
      this.#entries.set(pluginId, { list: [contribution], at: this.#next++ });
    } else if (holding.list.length === 0) {
      this.#refill(holding);
      holding.list = [contribution];
    } else holding.list.push(contribution);
  }

  /**
   * Records several contributions against `pluginId` at once, in order: what one activation
   * installed. The array is taken over, not copied.
   */
  recordAll(pluginId: string, contributions: Contribution[]): void {
    if (contributions.length === 0) return;
    const holding = this.#entries.get(pluginId);
    if (holding === undefined) {
      this.#entries.set(pluginId, { list: contributions, at: this.#next++ });
    } else if (holding.list.length === 0) {
      this.#refill(holding);
      holding.list = contributions;
    } else for (let i = 0; i < contributions.length; i++) holding.list.push(contributions[i]);
  }

  /** Drops `contribution` from the record without calling its `remove` (it removed itself). */
  forget(pluginId: string, contribution: Contribution): void {
    const list = this.#entries.get(pluginId)?.list;
    if (list === undefined || list.length === 0) return;
    const index = list.lastIndexOf(contribution);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.#emptied();
  }

  /** How many contributions `pluginId` has. */
  size(pluginId: string): number {
    return this.#entries.get(pluginId)?.list.length ?? 0;
  }

  /** The contributions of `pluginId`, oldest first. */
  contributions(pluginId: string): readonly Contribution[] {
    return this.#entries.get(pluginId)?.list.slice() ?? [];
  }

  /** Every plugin id with at least one contribution. */
  owners(): readonly string[] {
    return [...this.#entries]
      .filter(([, holding]) => holding.list.length > 0)
      .sort(([, a], [, b]) => a.at - b.at)
      .map(([owner]) => owner);
  }

  /**
   * Removes every contribution of `pluginId`, newest first. A `remove` that throws does not stop
   * the others; the faults are returned.
   */
  unwind(pluginId: string): readonly UnwindFault[] {
    const holding = this.#entries.get(pluginId);
    if (holding === undefined || holding.list.length === 0) return [];
    const list = holding.list;
    // Never pushed to: record and recordAll replace an empty list.
    holding.list = NOTHING;
    this.#emptied();
    let faults: UnwindFault[] | undefined;
    for (let i = list.length - 1; i >= 0; i--) {
      const contribution = list[i];
      try {
        contribution.remove();
      } catch (error) {
        (faults ??= []).push({ contribution, error });
      }
    }
    return faults ?? [];
  }

  /** Unwinds every plugin, the most recently recorded owner first. */
  clear(): readonly UnwindFault[] {
    const faults: UnwindFault[] = [];
    for (const owner of [...this.owners()].reverse()) faults.push(...this.unwind(owner));
    return faults;
  }

  #refill(holding: { at: number }): void {
    holding.at = this.#next++;
    this.#empty--;
  }

  #emptied(): void {
    this.#empty++;
    if (this.#empty === this.#entries.size) {
      this.#entries = new Map();
      this.#empty = 0;
    } else if (this.#empty > 4 * (this.#entries.size - this.#empty) + 1024) {
      this.#entries = new Map([...this.#entries].filter(([, holding]) => holding.list.length > 0));
      this.#empty = 0;
    }
  }
}
