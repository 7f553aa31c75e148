// The runtime's bookkeeping of plugin faults: each plugin's recent faults in a sliding window,
// the quarantine of one that makes too many, the plugins held back for the host, and what the
// host is told (see faults.ts). The runtime owns the transitions; this asks it for them.

import { blockCascaded } from "./_lifecycle.ts";
import type { PluginRecord } from "./_plugin_record.ts";
import type { AmberConfig } from "./config.ts";
import { describeError } from "./errors.ts";
import type { FaultEvent } from "./faults.ts";
import { DeadlineError, quarantineSettings } from "./limits.ts";
import type { Diagnostic, SetStateResult } from "./runtime_types.ts";

/** What the keeper needs of the runtime. */
export interface FaultKeeperHost {
  readonly records: ReadonlyMap<string, PluginRecord>;
  config(): AmberConfig;
  diagnose(diagnostic: Diagnostic): void;
  // Runs `work` in the runtime's queue of state changes.
  serial<T>(work: () => Promise<T>): Promise<T>;
  // The ordinary switch-off, dependents first, without writing the plugin's state file.
  switchOff(record: PluginRecord): Promise<SetStateResult>;
  readonly onFault?: (event: FaultEvent) => void;
}

/** Counts faults, quarantines, holds and releases plugins for one runtime. */
export class FaultKeeper {
  readonly #host: FaultKeeperHost;
  // Fault times within the window, per plugin.
  #times = new Map<string, number[]>();
  // Plugins held back, with the load failure each had before, which a release puts back.
  #held = new Map<string, string | undefined>();
  #quarantined = new Set<string>();

  constructor(host: FaultKeeperHost) {
    this.#host = host;
  }

  /**
   * A fault of plugin code the host contained: told to the host, counted, and the plugin
   * quarantined when it makes too many within the window.
   */
  fault(pluginId: string, where: string, message: string): void {
    const record = this.#host.records.get(pluginId);
    if (record === undefined) return;
    this.#tell({ kind: "fault", pluginId, where, message, at: Date.now() });
    if (record.state.status !== "active" || this.#quarantined.has(pluginId)) return;
    const { faults, windowSeconds } = quarantineSettings(this.#host.config());
    const now = performance.now();
    const times = (this.#times.get(pluginId) ?? []).filter((at) => at > now - windowSeconds * 1e3);
    times.push(now);
    this.#times.set(pluginId, times);
    if (times.length < faults) return;
    this.#times.delete(pluginId);
    this.#quarantined.add(pluginId);
    const why = `${faults} faults within ${windowSeconds} s (the last: ${where}: ${message})`;
    this.#host.serial(() => this.#quarantine(record, why)).catch((error) =>
      this.#host.diagnose({ pluginId, where: "quarantine", message: describeError(error), error })
    );
  }

  /**
   * A fault that ends the plugin for this session at once, whatever the count (its process
   * died): told to the host as a fault, then the plugin is switched off like a quarantine,
   * dependents first and its `plugin.conf` untouched, and left `failed` with `where: message`.
   * Nothing happens to a plugin that is not active by the time the switch-off runs.
   */
  fail(pluginId: string, where: string, message: string): void {
    const record = this.#host.records.get(pluginId);
    if (record === undefined) return;
    this.#tell({ kind: "fault", pluginId, where, message, at: Date.now() });
    this.#host.serial(() => this.#end(record, `${where}: ${message}`)).catch((error) =>
      this.#host.diagnose({ pluginId, where: "fail", message: describeError(error), error })
    );
  }

  /**
   * Looks at every diagnostic after it was delivered: an activation that failed on a deadline
   * is an initialize that hung (nothing else in an activation waits), which the host is told,
   * so it can hold the plugin at its next start.
   */
  diagnosed(diagnostic: Diagnostic): void {
    const { pluginId, error } = diagnostic;
    if (diagnostic.where !== "activation" || !(error instanceof DeadlineError)) return;
    const record = this.#host.records.get(pluginId);
    if (record !== undefined && !this.#held.has(pluginId)) {
      this.#held.set(pluginId, record.loadFailure);
    }
    const { message } = diagnostic;
    const at = Date.now();
    this.#tell({ kind: "timeout", pluginId, where: "initialize", message, at, seam: "initialize" });
  }

  /** Holds `record` back: its activations fail with `reason` until a release. */
  hold(record: PluginRecord, reason: string): void {
    const id = record.plugin.id;
    if (!this.#held.has(id)) this.#held.set(id, record.loadFailure);
    record.loadFailure = reason;
  }

  /** The user switched `record` on: a hold or a quarantine ends, and the host may forget them. */
  release(record: PluginRecord): void {
    const id = record.plugin.id;
    if (this.#held.has(id)) {
      record.loadFailure = this.#held.get(id);
      this.#held.delete(id);
    }
    this.#quarantined.delete(id);
    this.#times.delete(id);
    this.#tell({
      kind: "release",
      pluginId: id,
      where: "setState",
      message: "switched on",
      at: Date.now(),
    });
  }

  async #quarantine(record: PluginRecord, why: string): Promise<void> {
    const id = record.plugin.id;
    if (record.state.status !== "active") {
      this.#quarantined.delete(id);
      return;
    }
    const how = `switch it back on with \`/set plugin on ${id}\` (it starts as usual next time)`;
    const also = await this.#switchOff(record, `quarantined after ${why}; ${how}`);
    this.#host.diagnose({
      pluginId: id,
      where: "quarantine",
      message: `switched off for this session${also} after ${why}; ${how}`,
    });
    this.#tell({
      kind: "quarantine",
      pluginId: id,
      where: "quarantine",
      message: why,
      at: Date.now(),
    });
  }

  async #end(record: PluginRecord, why: string): Promise<void> {
    const id = record.plugin.id;
    if (record.state.status !== "active") return;
    const reason = `${why}; switch it back on with \`/set plugin on ${id}\``;
    const also = await this.#switchOff(record, reason);
    this.#host.diagnose({
      pluginId: id,
      where: "fail",
      message: `switched off for this session${also}: ${reason}`,
    });
  }

  // Switches `record` off for the session and leaves it failed with `reason`; says which
  // plugins that require it went with it ("" when none did).
  async #switchOff(record: PluginRecord, reason: string): Promise<string> {
    const result = await this.#host.switchOff(record);
    record.state = { status: "failed", reason };
    // The plugins switched off with it wait for it, and now say why it is gone.
    blockCascaded(this.#host.records, result.cascaded);
    return result.cascaded.length === 0
      ? ""
      : ` with the plugins that require it (${result.cascaded.join(", ")})`;
  }

  #tell(event: FaultEvent): void {
    try {
      this.#host.onFault?.(event);
    } catch {
      // Like a diagnostic sink, a failing fault sink must not turn into a fault of its own.
    }
  }
}
