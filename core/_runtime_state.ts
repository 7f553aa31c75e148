// A PluginRuntime's state and how its parts are connected to it: the plugin records and their
// dependency index, the configuration, host services and workspace plugins see, the diagnostics,
// the queue that serializes state changes, the cached execution environment, and the hosts the
// lifecycle, the transitions and the fault keeper work against. `runtime.ts` is the public
// facade over it.

import { DependencyIndex } from "./_dependency_index.ts";
import { FaultKeeper } from "./_fault_keeper.ts";
import { isThenable, type LifecycleHost } from "./_lifecycle.ts";
import { newRecord, type PluginRecord } from "./_plugin_record.ts";
import { switchPlugin, type TransitionHost } from "./_transitions.ts";
import type { AmberConfig } from "./config.ts";
import { CAPABILITY_KINDS } from "./contribution.ts";
import {
  describeError,
  PluginFaultError,
  PluginRegistrationError,
  UnknownPluginError,
} from "./errors.ts";
import { EventBus } from "./event_bus.ts";
import type { ResolvedExecutionEnv } from "./execution_env.ts";
import { buildEnvironment } from "./kernel/environment.ts";
import { PluginLedger } from "./ledger.ts";
import { timeoutFor } from "./limits.ts";
import type { Plugin } from "./plugin.ts";
import type { Registries } from "./registries.ts";
import type { OwnedRegistry } from "./registry.ts";
import type { Diagnostic, PluginRecordView, PluginRuntimeOptions } from "./runtime_types.ts";
import type { HostServices, Workspace } from "./services.ts";

const DEFAULT_TIMEOUT_MS = 5_000;
const MAX_DIAGNOSTICS = 200;

/** One runtime's state, shared by its facade and its parts. */
export class RuntimeState {
  readonly registries: Registries;
  readonly ledger: PluginLedger = new PluginLedger();
  readonly events: EventBus;
  readonly records: Map<string, PluginRecord> = new Map();
  readonly index: DependencyIndex = new DependencyIndex(this.records);
  readonly lifecycle: LifecycleHost;
  readonly transitions: TransitionHost;
  readonly faults: FaultKeeper;
  config: AmberConfig;
  host: HostServices;
  readonly #workspace: Workspace;
  readonly #onDiagnostic?: (diagnostic: Diagnostic) => void;
  readonly #diagnostics: Diagnostic[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  #env: ResolvedExecutionEnv | undefined;

  constructor(options: PluginRuntimeOptions) {
    const registries = options.registries;
    this.registries = registries;
    const allOn = options.allOn ?? false;
    const configDir = allOn ? undefined : options.configDir;
    this.config = options.config ?? { plugins: {} };
    this.#workspace = options.workspace ?? { root: Deno.cwd() };
    this.host = options.host ?? {};
    this.#onDiagnostic = options.onDiagnostic;
    this.events = options.events ??
      new EventBus((error, type) =>
        this.diagnose({ pluginId: "core", where: `event ${type}`, message: describeError(error) })
      );
    const tools = registries.tool;
    const config = (): AmberConfig => this.config;
    const fixedTimeout = options.timeoutMs;
    this.lifecycle = {
      registries,
      registryList: CAPABILITY_KINDS.map((kind) => registries[kind] as OwnedRegistry<unknown>),
      ledger: this.ledger,
      events: this.events,
      records: this.records,
      live: new Set(),
      timeoutMs: fixedTimeout ?? DEFAULT_TIMEOUT_MS,
      initializeTimeout: (id) => fixedTimeout ?? timeoutFor(this.config, "initialize", id),
      config,
      diagnose: this.diagnose,
      scopeHost: {
        bus: this.events,
        ledger: this.ledger,
        // Plugins get the read half of the tool registry, never the registry itself.
        tools: Object.freeze({ get: (name: string) => tools.get(name), list: () => tools.list() }),
        config,
        // A section without a schema is read live; one with a schema is what it decoded to, and
        // attachConfig decodes it again.
        section: (id) => {
          const record = this.records.get(id);
          return record?.plugin.config === undefined ? this.config.plugins[id] : record.section;
        },
        hostServices: () => this.host,
        workspace: () => this.#workspace,
        report: (pluginId, where, message, error) =>
          this.diagnose({ pluginId, where, message, error }),
      },
    };
    this.transitions = {
      records: this.records,
      index: this.index,
      lifecycle: this.lifecycle,
      configDir,
      allOn,
      diagnose: this.diagnose,
    };
    // A quarantine is the ordinary switch-off minus the state file: the user's choice stays as
    // it was, so the plugin is back at the next start.
    const quarantine = { ...this.transitions, configDir: undefined };
    this.faults = new FaultKeeper({
      records: this.records,
      config,
      diagnose: this.diagnose,
      serial: (work) => this.serial(work),
      switchOff: (record) => switchPlugin(quarantine, record, false, { cascade: true }),
      onFault: options.onFault,
    });
  }

  /** Adds a validated plugin's record; throws for the reserved id or one already taken. */
  add(plugin: Plugin, source: string | undefined, loadFailure: string | undefined): void {
    const id = plugin.id;
    if (id === "core") {
      throw new PluginRegistrationError(id, "plugin id 'core' is reserved for the harness itself");
    }
    if (this.records.has(id)) {
      throw new PluginRegistrationError(id, `plugin id '${id}' is already registered`);
    }
    const record = newRecord(plugin, this.records.size, source, loadFailure);
    this.records.set(id, record);
    this.index.add(record);
  }

  /** The record of plugin `id`; throws {@linkcode UnknownPluginError} for an unknown id. */
  record(id: string): PluginRecord {
    const record = this.records.get(id);
    if (record === undefined) throw new UnknownPluginError(id, [...this.records.keys()]);
    return record;
  }

  /** What the runtime shows of plugin `id`. */
  view(id: string): PluginRecordView {
    const record = this.record(id);
    return {
      plugin: record.plugin,
      state: record.state,
      on: record.on,
      contributions: this.ledger.contributions(id),
      declined: record.declined.slice(),
      failures: record.failures,
      ...(record.source !== undefined ? { source: record.source } : {}),
      ...(record.loadFailure !== undefined ? { loadFailure: record.loadFailure } : {}),
    };
  }

  /** Runs `work` after every state change queued before it. */
  serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work);
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Resolves once every state change queued so far is done. */
  settled(): Promise<void> {
    return this.#queue.then(() => {});
  }

  /** The diagnostics so far, oldest first (the last 200). */
  diagnostics(): readonly Diagnostic[] {
    return this.#diagnostics.slice();
  }

  /** Records `diagnostic`, passes it to the host's sink, and lets the fault keeper see it. */
  diagnose = (diagnostic: Diagnostic): void => {
    this.#diagnostics.push(diagnostic);
    if (this.#diagnostics.length > MAX_DIAGNOSTICS) this.#diagnostics.shift();
    try {
      this.#onDiagnostic?.(diagnostic);
    } catch {
      // A failing sink must not turn a contained fault into an uncontained one.
    }
    this.faults.diagnosed(diagnostic);
  };

  /** Records a fault of a registered plugin: the diagnostic, and the count toward quarantine. */
  report(diagnostic: Diagnostic): void {
    this.diagnose(diagnostic);
    if (diagnostic.error !== undefined) {
      this.faults.fault(diagnostic.pluginId, diagnostic.where, diagnostic.message);
    }
  }

  /** The sum of the registries' versions: it moves whenever any contribution does. */
  version(): number {
    let sum = 0;
    for (const registry of this.lifecycle.registryList) sum += registry.version;
    return sum;
  }

  /** The execution environment of the active plugins: the same object until something moves. */
  environment(): ResolvedExecutionEnv {
    const version = this.version();
    if (this.#env === undefined || this.#env.version !== version) {
      const order = this.index.order().filter((id) =>
        this.records.get(id)!.state.status === "active"
      );
      this.#env = buildEnvironment(this.registries, order, version);
    }
    return this.#env;
  }

  /** Calls every active plugin's `tick()`; a fault is reported once until a clean tick. */
  tick(): void {
    for (const record of this.records.values()) {
      if (record.state.status !== "active" || record.plugin.tick === undefined) continue;
      try {
        const result: unknown = record.plugin.tick();
        if (isThenable(result)) result.then(undefined, (error) => this.#tickFault(record, error));
        else record.tickFault = false;
      } catch (error) {
        this.#tickFault(record, error);
      }
    }
  }

  #tickFault(record: PluginRecord, error: unknown): void {
    if (record.tickFault) return;
    record.tickFault = true;
    const fault = new PluginFaultError(record.plugin.id, "tick", error);
    this.report({ pluginId: record.plugin.id, where: "tick", message: fault.message, error });
  }
}
