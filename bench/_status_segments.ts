// The status segments the benches compose: up to 40, half of them reading the snapshot's model,
// with priorities and drop priorities spread so that composition has real choices to make.

import { EventBus, type PluginServices, type StatusRegistry } from "@amber/core";

/** The services a bench installs capabilities with: nothing behind them. */
export const BENCH_SERVICES: PluginServices = {
  owner: "bench",
  tools: { get: () => undefined, list: () => [] },
  events: new EventBus(),
  config: () => ({ plugins: {} }),
  host: {},
  workspace: { root: "/" },
};

/** How to number and own the segments. */
export interface SegmentOptions {
  /** The first index installed (default 0); segments go up to index 39. */
  readonly from?: number;
  /** Segment `i` is owned by `${owner}${i}` (default "p"). */
  readonly owner?: string;
  /** Segment `i` has priority `(i * 37) % priorityModulo` (default 100). */
  readonly priorityModulo?: number;
}

/** Installs status segments into `registry` until there are 40 in all (indexes `from`..39). */
export function installSegments(registry: StatusRegistry, options: SegmentOptions = {}): void {
  const { from = 0, owner = "p", priorityModulo = 100 } = options;
  for (let i = from; i < 40; i++) {
    registry.install(`${owner}${i}`, {
      kind: "status",
      name: `segment_${i}`,
      priority: (i * 37) % priorityModulo,
      dropPriority: i % 10,
      render: (s) => ({ text: i % 2 ? `${s.model}:${i}` : `seg ${i}`, tone: "dim" }),
    }, BENCH_SERVICES);
  }
}
