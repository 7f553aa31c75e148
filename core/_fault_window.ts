// Counting each plugin's faults within a sliding window, for quarantine. Only the times inside
// the window are kept, so a plugin that faults now and then never accumulates anything.

/** The fault times of every plugin that faulted recently. */
export class FaultWindow {
  #times = new Map<string, number[]>();

  /**
   * Counts a fault of `pluginId` at `now` (ms) and says whether it makes `limit` faults within
   * the last `windowMs`.
   */
  add(pluginId: string, now: number, limit: number, windowMs: number): boolean {
    const since = now - windowMs;
    const times = (this.#times.get(pluginId) ?? []).filter((at) => at > since);
    times.push(now);
    this.#times.set(pluginId, times);
    return times.length >= limit;
  }

  /** Forgets `pluginId`'s faults: it was quarantined or switched back on. */
  clear(pluginId: string): void {
    this.#times.delete(pluginId);
  }
}
