// The runtime's view of the requirement graph, kept up to date as plugins register: the
// activation order (computed once per registration change), and, for each plugin, the plugins
// that require it. Switching one plugin on or off then looks only at that plugin's dependents,
// so it costs the same with ten plugins installed or ten thousand.

import type { PluginRecord } from "./_plugin_record.ts";
import { dependentsOf, orderPlugins } from "./dependency.ts";
import type { ResolutionError } from "./resolution_error.ts";

const ANY_VERSION = (range: string): boolean => range === "*" || range === "";
const NONE: readonly PluginRecord[] = Object.freeze([]);
const NO_FAILURES: ReadonlyMap<string, ResolutionError> = new Map();

/** The requirement graph of the registered plugins. */
export class DependencyIndex {
  readonly #records: ReadonlyMap<string, PluginRecord>;
  // Required id -> the records that require it directly, in registration order.
  readonly #requirers = new Map<string, PluginRecord[]>();
  #ranged = false;
  // Whether any plugin requires another: without one, the order is registration order.
  #requiring = false;
  #satisfies: ((version: string, range: string) => boolean) | undefined;
  #order: readonly string[] | undefined;
  #position: Map<string, number> | undefined;
  #failures: ReadonlyMap<string, ResolutionError> = NO_FAILURES;

  constructor(records: ReadonlyMap<string, PluginRecord>) {
    this.#records = records;
  }

  /** Takes in a newly registered plugin. */
  add(record: PluginRecord): void {
    const requires = record.plugin.requires;
    if (requires !== undefined) {
      this.#requiring = true;
      for (const dependency of Object.keys(requires)) {
        const list = this.#requirers.get(dependency);
        if (list === undefined) this.#requirers.set(dependency, [record]);
        else list.push(record);
        if (!ANY_VERSION(requires[dependency])) this.#ranged = true;
      }
    }
    this.#order = undefined;
  }

  // semver is loaded only when some plugin asks for a version range, so a harness without
  // ranges never pays for it.
  /** Loads the semver check if a requirement needs one and the order is not settled yet. */
  async prepare(): Promise<void> {
    if (this.#satisfies !== undefined || this.#order !== undefined || !this.#ranged) return;
    const semver = await import("semver");
    this.#satisfies = (version, range) => semver.satisfies(version, range);
  }

  /** Every plugin whose requirements resolve, dependencies first. */
  order(): readonly string[] {
    if (this.#order !== undefined) return this.#order;
    this.#position = undefined;
    if (!this.#requiring) {
      // Nothing to resolve: ids are unique (register refuses a taken one), so the order is the
      // registration order and nothing fails. Measured: the graph walk allocated more per plugin
      // than the rest of an activation of a plugin without capabilities (bench/runtime_bench.ts).
      this.#failures = NO_FAILURES;
      return this.#order = [...this.#records.keys()];
    }
    const nodes = [];
    for (const record of this.#records.values()) {
      const { id, version, requires } = record.plugin;
      nodes.push({ id, version, requires });
    }
    const satisfies = this.#satisfies ?? ((_version: string, range: string) => ANY_VERSION(range));
    const { order, failures } = orderPlugins(nodes, satisfies);
    this.#order = order;
    this.#failures = failures;
    return order;
  }

  /** The order as last computed, or undefined when a registration has unsettled it since. */
  settled(): readonly string[] | undefined {
    return this.#order;
  }

  /** Why plugin `id` is left out of the order, if it is. */
  failure(id: string): ResolutionError | undefined {
    this.order();
    return this.#failures.get(id);
  }

  /** The plugins that require `id`, directly or not, in registration order. */
  dependents(id: string): readonly PluginRecord[] {
    if (!this.#requirers.has(id)) return NONE;
    const seen = new Set<PluginRecord>();
    const queue = [id];
    for (let q = 0; q < queue.length; q++) {
      for (const record of this.#requirers.get(queue[q]) ?? NONE) {
        if (record.plugin.id === id || seen.has(record)) continue;
        seen.add(record);
        queue.push(record.plugin.id);
      }
    }
    return [...seen].sort((a, b) => a.seq - b.seq);
  }

  /** The active plugins that require `id`, furthest dependents first. */
  activeDependents(id: string): string[] {
    const nodes = this.dependents(id).map(({ plugin }) => ({
      id: plugin.id,
      version: plugin.version,
      requires: plugin.requires,
    }));
    if (nodes.length === 0) return [];
    return dependentsOf(nodes, id).filter((dependent) =>
      this.#records.get(dependent)?.state.status === "active"
    );
  }

  /** The plugins in the order that require `id`, directly or not, in activation order. */
  waitingOn(id: string): PluginRecord[] {
    const order = this.order();
    const dependents = this.dependents(id);
    if (dependents.length === 0) return [];
    const position = this.#position ??= new Map(order.map((id, i) => [id, i]));
    return dependents
      .filter((record) => position.has(record.plugin.id))
      .sort((a, b) => position.get(a.plugin.id)! - position.get(b.plugin.id)!);
  }
}
