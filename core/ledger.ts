/**
 * The ledger: every contribution a plugin made, so that disabling it removes exactly those.
 *
 * @module
 */

import type { Contribution } from "./capability.ts";

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
 * import { PluginLedger } from "@amber/core";
 * const ledger = new PluginLedger();
 * const removed: string[] = [];
 * ledger.record("hello", { kind: "tool", name: "a", ids: ["a"], remove: () => removed.push("a") });
 * ledger.record("hello", { kind: "tool", name: "b", ids: ["b"], remove: () => removed.push("b") });
 * ledger.unwind("hello");
 * console.log(removed); // ["b", "a"]
 * ```
 */
export class PluginLedger {
  #entries = new Map<string, Contribution[]>();

  /** Records `contribution` against `pluginId`. */
  record(pluginId: string, contribution: Contribution): void {
    const list = this.#entries.get(pluginId);
    if (list === undefined) this.#entries.set(pluginId, [contribution]);
    else list.push(contribution);
  }

  /**
   * Records several contributions against `pluginId` at once, in order: what one activation
   * installed. The array is taken over, not copied.
   */
  recordAll(pluginId: string, contributions: Contribution[]): void {
    if (contributions.length === 0) return;
    const list = this.#entries.get(pluginId);
    if (list === undefined) this.#entries.set(pluginId, contributions);
    else for (let i = 0; i < contributions.length; i++) list.push(contributions[i]);
  }

  /** Drops `contribution` from the record without calling its `remove` (it removed itself). */
  forget(pluginId: string, contribution: Contribution): void {
    const list = this.#entries.get(pluginId);
    if (list === undefined) return;
    const index = list.lastIndexOf(contribution);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.#entries.delete(pluginId);
  }

  /** How many contributions `pluginId` has. */
  size(pluginId: string): number {
    return this.#entries.get(pluginId)?.length ?? 0;
  }

  /** The contributions of `pluginId`, oldest first. */
  contributions(pluginId: string): readonly Contribution[] {
    return this.#entries.get(pluginId)?.slice() ?? [];
  }

  /** Every plugin id with at least one contribution. */
  owners(): readonly string[] {
    return [...this.#entries.keys()];
  }

  /**
   * Removes every contribution of `pluginId`, newest first. A `remove` that throws does not stop
   * the others; the faults are returned.
   */
  unwind(pluginId: string): readonly UnwindFault[] {
    const list = this.#entries.get(pluginId);
    if (list === undefined) return [];
    this.#entries.delete(pluginId);
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
    for (const owner of [...this.#entries.keys()].reverse()) faults.push(...this.unwind(owner));
    return faults;
  }
}
