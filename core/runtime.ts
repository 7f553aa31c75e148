/**
 * The plugin runtime: registers plugins, activates the ones that are on in dependency order,
 * installs their capabilities into the registries within their bounds, ledgers every
 * contribution, unwinds them on disable, and re-resolves plugins whose live version moved.
 * Nothing a plugin throws, rejects or hangs on reaches the host.
 *
 * This file is the facade; each job is a module of its own: validation in
 * `plugin_validation.ts`, the requirement graph in `_dependency_index.ts`, activation and
 * deactivation in `_lifecycle.ts`, live re-resolution in `_refresh.ts`, state files in
 * `_state_io.ts`.
 *
 * @module
 */

import { DependencyIndex } from "./_dependency_index.ts";
import { FaultKeeper } from "./_fault_keeper.ts";
import { planDisable } from "./_disable.ts";
import { isThenable, type LifecycleHost, redecode } from "./_lifecycle.ts";
import { newRecord, type PluginRecord, standInPlugin } from "./_plugin_record.ts";
import { refreshLive } from "./_refresh.ts";
import { startAll, stopAll, switchPlugin, type TransitionHost } from "./_transitions.ts";
import type { AmberConfig } from "./config.ts";
import { CAPABILITY_KINDS } from "./contribution.ts";
import type { DisablePlan, DisablePlanOptions } from "./disable_plan.ts";
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
import type { Plugin, PluginState } from "./plugin.ts";
import { validatePlugin } from "./plugin_validation.ts";
import type { Registries } from "./registries.ts";
import type { OwnedRegistry } from "./registry.ts";
import type {
  Diagnostic,
  FailedPluginRegistration,
  PluginRecordView,
  PluginRuntimeOptions,
  RefreshReport,
  RegisterOptions,
  SetStateOptions,
  SetStateResult,
} from "./runtime_types.ts";
import type { HostServices, Workspace } from "./services.ts";

const DEFAULT_TIMEOUT_MS = 5_000;
const MAX_DIAGNOSTICS = 200;

/**
 * Runs plugins. Registration never activates; `start()` activates every plugin whose state is
 * on, dependencies first; `setState(id, on)` is the one write path for plugin state.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { any, PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 *
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * runtime.register({
 *   id: "style",
 *   version: "1.0.0",
 *   name: "Style",
 *   bound: { prompts: any() },
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [
 *     { kind: "prompt", name: "style", priority: 400, render: () => "Answer briefly." },
 *   ],
 * });
 * await runtime.start();
 * assert.equal(runtime.state("style").status, "active");
 * await runtime.setState("style", false);
 * assert.equal(runtime.state("style").status, "disabled");
 * ```
 */
export class PluginRuntime {
  /** The event bus plugins subscribe to. */
  readonly events: EventBus;
  /** The registries. */
  readonly registries: Registries;
  /** The ledger of every live contribution. */
  readonly ledger: PluginLedger = new PluginLedger();

  #records = new Map<string, PluginRecord>();
  #index = new DependencyIndex(this.#records);
  #configDir?: string;
  #allOn: boolean;
  #config: AmberConfig;
  #workspace: Workspace;
  #host: HostServices;
  #onDiagnostic?: (diagnostic: Diagnostic) => void;
  #diagnostics: Diagnostic[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  #lifecycle: LifecycleHost;
  #transitions: TransitionHost;
  #env: ResolvedExecutionEnv | undefined;
  #envVersion = 0;
  #faults: FaultKeeper;

  /** Creates a runtime over `options.registries`. */
  constructor(options: PluginRuntimeOptions) {
    this.registries = options.registries;
    this.#allOn = options.allOn ?? false;
    this.#configDir = this.#allOn ? undefined : options.configDir;
    this.#config = options.config ?? { plugins: {} };
    this.#workspace = options.workspace ?? { root: Deno.cwd() };
    this.#host = options.host ?? {};
    this.#onDiagnostic = options.onDiagnostic;
    const fixedTimeout = options.timeoutMs;
    this.events = options.events ??
      new EventBus((error, type) =>
        this.#diagnose({ pluginId: "core", where: `event ${type}`, message: describeError(error) })
      );
    const tools = this.registries.tool;
    this.#lifecycle = {
      registries: this.registries,
      registryList: CAPABILITY_KINDS.map((kind) => this.registries[kind] as OwnedRegistry<unknown>),
      ledger: this.ledger,
      events: this.events,
      records: this.#records,
      live: new Set(),
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      initializeTimeout: (id) => fixedTimeout ?? timeoutFor(this.#config, "initialize", id),
      config: () => this.#config,
      diagnose: this.#diagnose,
      scopeHost: {
        bus: this.events,
        ledger: this.ledger,
        // Plugins get the read half of the tool registry, never the registry itself.
        tools: Object.freeze({ get: (name: string) => tools.get(name), list: () => tools.list() }),
        config: () => this.#config,
        // A section without a schema is read live; one with a schema is what it decoded to, and
        // attachConfig decodes it again.
        section: (id) => {
          const record = this.#records.get(id);
          return record?.plugin.config === undefined ? this.#config.plugins[id] : record.section;
        },
        hostServices: () => this.#host,
        workspace: () => this.#workspace,
        report: (pluginId, where, message, error) =>
          this.#diagnose({ pluginId, where, message, error }),
      },
    };
    this.#transitions = {
      records: this.#records,
      index: this.#index,
      lifecycle: this.#lifecycle,
      configDir: this.#configDir,
      allOn: this.#allOn,
      diagnose: this.#diagnose,
    };
    // A quarantine is the ordinary switch-off minus the state file: the user's choice stays as
    // it was, so the plugin is back at the next start.
    const quarantine = { ...this.#transitions, configDir: undefined };
    this.#faults = new FaultKeeper({
      records: this.#records,
      config: () => this.#config,
      diagnose: this.#diagnose,
      serial: (work) => this.#serial(work),
      switchOff: (record) => switchPlugin(quarantine, record, false, { cascade: true }),
      onFault: options.onFault,
    });
  }

  /**
   * Adds a plugin in the `registered` state. Throws a {@linkcode PluginRegistrationError} for a
   * bad id, version, name or requirement (a `PluginValidationError`, from the same check
   * `amber plugins add` makes), or an id already registered. `options.source` says where it
   * came from, for hosts to show.
   */
  register(plugin: Plugin, options: RegisterOptions = {}): void {
    this.#add(validatePlugin(plugin, options.source), options.source, undefined);
  }

  /**
   * Registers a plugin whose code could not be loaded (a syntax error, a module that throws, a
   * source whose hash changed...), so that it is listed like any other plugin and the user sees
   * why. It follows its `plugin.conf` like any plugin: while it is on, every activation (at
   * `start`, on `setState(id, true)`) leaves it `failed` with `failure.reason`, word for word,
   * and nothing of it runs; while it is off it is `disabled`. Throws a
   * {@linkcode PluginRegistrationError} for a bad or taken id.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { PluginRuntime } from "@amber/core";
   * import { createRegistries } from "@amber/registries";
   * const runtime = new PluginRuntime({ registries: createRegistries() });
   * runtime.registerFailed({ id: "broken", reason: "/p/mod.ts: SyntaxError: Unexpected token" });
   * await runtime.start();
   * assert.deepEqual(runtime.state("broken"), {
   *   status: "failed",
   *   reason: "/p/mod.ts: SyntaxError: Unexpected token",
   * });
   * ```
   */
  registerFailed(failure: FailedPluginRegistration): void {
    const standIn = validatePlugin(standInPlugin(failure), failure.source);
    this.#add(standIn, failure.source, String(failure.reason));
  }

  #add(plugin: Plugin, source: string | undefined, loadFailure: string | undefined): void {
    const id = plugin.id;
    if (id === "core") {
      throw new PluginRegistrationError(id, "plugin id 'core' is reserved for the harness itself");
    }
    if (this.#records.has(id)) {
      throw new PluginRegistrationError(id, `plugin id '${id}' is already registered`);
    }
    const record = newRecord(plugin, this.#records.size, source, loadFailure);
    this.#records.set(id, record);
    this.#index.add(record);
  }

  /** Every registered plugin id, in registration order. */
  ids(): readonly string[] {
    return [...this.#records.keys()];
  }

  /** The state of plugin `id`; throws {@linkcode UnknownPluginError} for an unknown id. */
  state(id: string): PluginState {
    return this.#record(id).state;
  }

  /** Everything the runtime knows of plugin `id`. */
  info(id: string): PluginRecordView {
    const record = this.#record(id);
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

  /** Every plugin, in registration order. */
  list(): readonly PluginRecordView[] {
    return this.ids().map((id) => this.info(id));
  }

  /**
   * The activation order: every registered plugin whose requirements resolve, dependencies
   * first (input order breaks ties). Plugins with a missing requirement, a version mismatch or
   * a cycle are left out; {@linkcode PluginRuntime.info} says why.
   */
  order(): readonly string[] {
    return this.#index.order();
  }

  /** The diagnostics so far, oldest first (the last 200). */
  diagnostics(): readonly Diagnostic[] {
    return this.#diagnostics.slice();
  }

  /**
   * Records a diagnostic, e.g. a render failure a registry contained. One that carries the
   * `error` a registered plugin's code threw or rejected with (a hook, a gate, a render, a
   * command handler, a floating rejection traced to its files) is a fault of that plugin: a
   * plugin that faults `quarantine.faults` times within `quarantine.windowSeconds` (see
   * `quarantineSettings`) is switched off for the session, dependents first, through the same
   * path as `setState(id, false)` except that its `plugin.conf` is left as it is. It is then
   * `failed` with a reason that says why and how to switch it back on; `setState(id, true)`
   * does.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { any, PluginRuntime } from "@amber/core";
   * import { createRegistries } from "@amber/registries";
   * const runtime = new PluginRuntime({
   *   registries: createRegistries(),
   *   config: { plugins: {}, quarantine: { faults: 2, windowSeconds: 60 } },
   * });
   * runtime.register({
   *   id: "flaky",
   *   version: "1.0.0",
   *   name: "Flaky",
   *   bound: { prompts: any() },
   *   initialize: () => true,
   *   shutdown: () => {},
   *   capabilities: () => [{ kind: "prompt", name: "p", priority: 400, render: () => "" }],
   * });
   * await runtime.start();
   * const fault = { pluginId: "flaky", where: "hook 'h'", message: "boom", error: new Error("boom") };
   * runtime.report(fault);
   * await runtime.settled();
   * assert.equal(runtime.state("flaky").status, "active");
   * runtime.report(fault);
   * await runtime.settled();
   * assert.equal(runtime.state("flaky").status, "failed");
   * await runtime.setState("flaky", true);
   * assert.equal(runtime.state("flaky").status, "active");
   * ```
   */
  report(diagnostic: Diagnostic): void {
    this.#diagnose(diagnostic);
    if (diagnostic.error !== undefined) {
      this.#faults.fault(diagnostic.pluginId, diagnostic.where, diagnostic.message);
    }
  }

  /**
   * Holds plugin `id` back, before `start()`: while it is on, activating it fails with `reason`
   * and none of its code runs, until the user switches it on with `setState(id, true)`, which
   * releases it (and tells `onFault`). A host calls this for a plugin whose `initialize` or
   * import overran its deadline in an earlier process, so that every later start does not wait
   * for it again. Throws {@linkcode UnknownPluginError} for an unknown id.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { PluginRuntime } from "@amber/core";
   * import { createRegistries } from "@amber/registries";
   * const runtime = new PluginRuntime({ registries: createRegistries(), allOn: true });
   * runtime.register({
   *   id: "slow",
   *   version: "1.0.0",
   *   name: "Slow",
   *   initialize: () => true,
   *   shutdown: () => {},
   *   capabilities: () => [],
   * });
   * runtime.hold("slow", "its initialize hung before; `amber plugins enable slow` retries it");
   * await runtime.start();
   * assert.equal(runtime.state("slow").status, "failed");
   * await runtime.setState("slow", true);
   * assert.equal(runtime.state("slow").status, "active");
   * ```
   */
  hold(id: string, reason: string): void {
    this.#faults.hold(this.#record(id), reason);
  }

  /** Resolves once every state change queued so far (switches, a quarantine) is done. */
  settled(): Promise<void> {
    return this.#queue.then(() => {});
  }

  /** The configuration plugins see now. */
  config(): AmberConfig {
    return this.#config;
  }

  /**
   * Attaches the host's live configuration; plugins read it at use time, so they see it. Each
   * active plugin's section is decoded again; a section that no longer decodes is reported and
   * the plugin keeps the value it had.
   */
  attachConfig(config: AmberConfig): void {
    this.#config = config;
    for (const record of this.#records.values()) redecode(this.#lifecycle, record);
  }

  /** Attaches host services; capabilities installed from now on see them. */
  attachHost(host: HostServices): void {
    this.#host = host;
  }

  /**
   * Activates every registered plugin that is on (its `plugin.conf`, or its default when there
   * is none or the file is corrupt, which is reported and left as it is), dependencies first. A
   * plugin whose requirement is off or failed is `blocked` and says why.
   */
  start(): Promise<void> {
    return this.#serial(() => startAll(this.#transitions));
  }

  /**
   * The one write path of plugin state: persists `plugins/<id>/plugin.conf` atomically, then
   * activates or deactivates the plugin. Switching off a plugin that active plugins require is
   * refused with a {@linkcode PluginDependentsError} (nothing is written), unless `cascade`
   * switches them off first, furthest dependents first; they stay on in their own files and
   * come back when this plugin does. A switch-off carries out the plan
   * {@linkcode PluginRuntime.planDisable} shows. Calls are serialized: concurrent calls never
   * tear the file and the last call wins. Only the plugin and the plugins that require it are looked at, so a
   * call costs the same however many plugins are installed.
   */
  setState(id: string, on: boolean, options: SetStateOptions = {}): Promise<SetStateResult> {
    const record = this.#record(id);
    return this.#serial(() => {
      if (on) this.#faults.release(record);
      return switchPlugin(this.#transitions, record, on, options);
    });
  }

  /**
   * What `setState(id, false, options)` would do now, changing nothing: the plugins that would
   * go, in order, and every contribution each would remove. `setState` carries out this same
   * plan. Without `cascade`, a plugin that active plugins require lists them as `stranded` and
   * would be refused. Throws {@linkcode UnknownPluginError} for an unknown id.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { any, PluginRuntime } from "@amber/core";
   * import { createRegistries } from "@amber/registries";
   * const runtime = new PluginRuntime({ registries: createRegistries() });
   * const plugin = (id: string, requires?: Record<string, string>) => ({
   *   id,
   *   version: "1.0.0",
   *   name: id,
   *   requires,
   *   bound: { prompts: any() },
   *   initialize: () => true,
   *   shutdown: () => {},
   *   capabilities: () => [{ kind: "prompt" as const, name: id, priority: 400, render: () => id }],
   * });
   * runtime.register(plugin("base"));
   * runtime.register(plugin("app", { base: "*" }));
   * await runtime.start();
   * assert.deepEqual(runtime.planDisable("base").stranded, ["app"]);
   * const plan = runtime.planDisable("base", { cascade: true });
   * assert.deepEqual(plan.plugins.map((step) => step.pluginId), ["app", "base"]);
   * ```
   */
  planDisable(id: string, options: DisablePlanOptions = {}): DisablePlan {
    const record = this.#record(id);
    return planDisable(this.#index, this.ledger, record, options.cascade ?? false);
  }

  /**
   * Calls every active plugin's `tick()`. A throw or rejection is contained and reported once
   * until the plugin ticks cleanly again.
   */
  tick(): void {
    for (const record of this.#records.values()) {
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

  /**
   * At a step boundary: re-resolves every active plugin whose `liveVersion()` moved. A refresh
   * that succeeds replaces the plugin's contributions and publishes `environmentChanged` with the
   * tools added, removed and changed; one that fails keeps the previous contributions and is
   * reported once per live version. Costs a call per live plugin when nothing moved.
   */
  refresh(): RefreshReport {
    return refreshLive(this.#lifecycle, () => this.#version());
  }

  /**
   * The resolved execution environment: an immutable snapshot of the tools, prompt blocks,
   * hooks, gates, guards, action kinds and state keys of the active plugins, in dependency
   * order. The same object until something in it changes.
   */
  environment(): ResolvedExecutionEnv {
    const version = this.#version();
    if (this.#env === undefined || this.#envVersion !== version) {
      const order = this.#index.order().filter((id) =>
        this.#records.get(id)!.state.status === "active"
      );
      this.#env = buildEnvironment(this.registries, order, version);
      this.#envVersion = version;
    }
    return this.#env;
  }

  /**
   * Deactivates every active plugin, dependents first, without touching their state files: the
   * host is shutting down, not the user switching plugins off.
   */
  stop(): Promise<void> {
    return this.#serial(() => stopAll(this.#transitions));
  }

  #record(id: string): PluginRecord {
    const record = this.#records.get(id);
    if (record === undefined) throw new UnknownPluginError(id, this.ids());
    return record;
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work);
    this.#queue = next.catch(() => {});
    return next;
  }

  #version(): number {
    let sum = 0;
    for (const registry of this.#lifecycle.registryList) sum += registry.version;
    return sum;
  }

  #tickFault(record: PluginRecord, error: unknown): void {
    if (record.tickFault) return;
    record.tickFault = true;
    const fault = new PluginFaultError(record.plugin.id, "tick", error);
    this.report({ pluginId: record.plugin.id, where: "tick", message: fault.message, error });
  }

  #diagnose = (diagnostic: Diagnostic): void => {
    this.#diagnostics.push(diagnostic);
    if (this.#diagnostics.length > MAX_DIAGNOSTICS) this.#diagnostics.shift();
    try {
      this.#onDiagnostic?.(diagnostic);
    } catch {
      // A failing sink must not turn a contained fault into an uncontained one.
    }
    this.#faults.diagnosed(diagnostic);
  };
}
