/**
 * The plugin runtime: registers plugins, activates the ones that are on in dependency order,
 * installs their capabilities into the registries within their bounds, ledgers every
 * contribution, unwinds them on disable, and re-resolves plugins whose live version moved.
 * Nothing a plugin throws, rejects or hangs on reaches the host.
 *
 * This file is the facade; each job is a module of its own: validation in
 * `plugin_validation.ts`, the requirement graph in `_dependency_index.ts`, activation and
 * deactivation in `_lifecycle.ts`, live re-resolution in `_refresh.ts`, state files in
 * `_state_io.ts`, the records, queue, diagnostics and wiring of those parts in
 * `_runtime_state.ts`.
 *
 * @module
 */

import { planDisable } from "./_disable.ts";
import { redecode } from "./_lifecycle.ts";
import { standInPlugin } from "./_plugin_record.ts";
import { refreshLive } from "./_refresh.ts";
import { RuntimeState } from "./_runtime_state.ts";
import { startAll, stopAll, switchPlugin } from "./_transitions.ts";
import type { AmberConfig } from "./config.ts";
import type { DisablePlan, DisablePlanOptions } from "./disable_plan.ts";
import type { EventBus } from "./event_bus.ts";
import type { ResolvedExecutionEnv } from "./execution_env.ts";
import type { PluginLedger } from "./ledger.ts";
import type { Plugin, PluginState } from "./plugin.ts";
import { validatePlugin } from "./plugin_validation.ts";
import type { Registries } from "./registries.ts";
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
import type { HostServices } from "./services.ts";

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
  readonly ledger: PluginLedger;

  // The records, the queue, the diagnostics and the wiring of the parts: see _runtime_state.ts.
  readonly #s: RuntimeState;

  /** Creates a runtime over `options.registries`. */
  constructor(options: PluginRuntimeOptions) {
    this.#s = new RuntimeState(options);
    this.events = this.#s.events;
    this.registries = this.#s.registries;
    this.ledger = this.#s.ledger;
  }

  /**
   * Adds a plugin in the `registered` state. Throws a {@linkcode PluginRegistrationError} for a
   * bad id, version, name or requirement (a `PluginValidationError`, from the same check
   * `amber plugins add` makes), or an id already registered. `options.source` says where it
   * came from, for hosts to show.
   */
  register(plugin: Plugin, options: RegisterOptions = {}): void {
    this.#s.add(validatePlugin(plugin, options.source), options.source, undefined);
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
    this.#s.add(standIn, failure.source, String(failure.reason));
  }

  /** Every registered plugin id, in registration order. */
  ids(): readonly string[] {
    return [...this.#s.records.keys()];
  }

  /** The state of plugin `id`; throws {@linkcode UnknownPluginError} for an unknown id. */
  state(id: string): PluginState {
    return this.#s.record(id).state;
  }

  /** Everything the runtime knows of plugin `id`. */
  info(id: string): PluginRecordView {
    return this.#s.view(id);
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
    return this.#s.index.order();
  }

  /** The diagnostics so far, oldest first (the last 200). */
  diagnostics(): readonly Diagnostic[] {
    return this.#s.diagnostics();
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
    this.#s.report(diagnostic);
  }

  /**
   * A contained fault that ends plugin `id` for this session at once, whatever the quarantine
   * count: a sandboxed plugin whose process died, was killed or wrote garbage. The host's
   * `onFault` is told it as a fault; the plugin is switched off like a quarantine (the plugins
   * that require it first, its `plugin.conf` left as it is) and is then `failed` with the reason
   * `<where>: <message>; switch it back on with \`/set plugin on <id>\``. `setState(id, true)`
   * activates it again (a sandboxed plugin starts a new process). A plugin that is not active
   * when the switch-off runs is left as it is; an unknown id is ignored.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { any, type FaultEvent, PluginRuntime } from "@amber/core";
   * import { createRegistries } from "@amber/registries";
   * const told: FaultEvent["kind"][] = [];
   * const runtime = new PluginRuntime({
   *   registries: createRegistries(),
   *   onFault: (event) => told.push(event.kind),
   * });
   * const prompt = { kind: "prompt" as const, name: "p", priority: 400, render: () => "hi" };
   * const life = { initialize: () => true, shutdown: () => {}, capabilities: () => [prompt] };
   * runtime.register({ id: "boxed", version: "1.0.0", name: "Boxed", bound: { prompts: any() }, ...life });
   * await runtime.start();
   * runtime.fail("boxed", "its process", "exited with code 1");
   * await runtime.settled();
   * assert.deepEqual(runtime.state("boxed"), {
   *   status: "failed",
   *   reason: "its process: exited with code 1; switch it back on with `/set plugin on boxed`",
   * });
   * assert.deepEqual(told, ["fault"]);
   * assert.equal(runtime.registries.prompt.assemble([]).blocks.length, 0);
   * await runtime.setState("boxed", true);
   * assert.equal(runtime.state("boxed").status, "active");
   * ```
   */
  fail(id: string, where: string, message: string): void {
    this.#s.faults.fail(id, where, message);
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
   * const noop = { initialize: () => true, shutdown: () => {}, capabilities: () => [] };
   * runtime.register({ id: "slow", version: "1.0.0", name: "Slow", ...noop });
   * runtime.hold("slow", "its initialize hung before; `amber plugins enable slow` retries it");
   * await runtime.start();
   * assert.equal(runtime.state("slow").status, "failed");
   * await runtime.setState("slow", true);
   * assert.equal(runtime.state("slow").status, "active");
   * ```
   */
  hold(id: string, reason: string): void {
    this.#s.faults.hold(this.#s.record(id), reason);
  }

  /** Resolves once every state change queued so far (switches, a quarantine) is done. */
  settled(): Promise<void> {
    return this.#s.settled();
  }

  /** The configuration plugins see now. */
  config(): AmberConfig {
    return this.#s.config;
  }

  /**
   * Attaches the host's live configuration; plugins read it at use time, so they see it. Each
   * active plugin's section is decoded again; a section that no longer decodes is reported and
   * the plugin keeps the value it had.
   */
  attachConfig(config: AmberConfig): void {
    this.#s.config = config;
    for (const record of this.#s.records.values()) redecode(this.#s.lifecycle, record);
  }

  /** Attaches host services; capabilities installed from now on see them. */
  attachHost(host: HostServices): void {
    this.#s.host = host;
  }

  /**
   * Activates every registered plugin that is on (its `plugin.conf`, or its default when there
   * is none or the file is corrupt, which is reported and left as it is), dependencies first. A
   * plugin whose requirement is off or failed is `blocked` and says why.
   */
  start(): Promise<void> {
    return this.#s.serial(() => startAll(this.#s.transitions));
  }

  /**
   * The one write path of plugin state: persists `plugins/<id>/plugin.conf` atomically, then
   * activates or deactivates the plugin. Switching off a plugin that active plugins require is
   * refused with a {@linkcode PluginDependentsError} (nothing is written), unless `cascade`
   * switches them off first, furthest dependents first; they stay on in their own files and
   * come back when this plugin does. A switch-off carries out the plan
   * {@linkcode PluginRuntime.planDisable} shows. Calls are serialized: concurrent calls never
   * tear the file and the last call wins. Only the plugin and the plugins that require it are looked at, so a
   * call costs the same however many plugins are installed. With `persist: false` nothing is
   * written: the switch holds for this runtime only (a served session's own selection).
   */
  setState(id: string, on: boolean, options: SetStateOptions = {}): Promise<SetStateResult> {
    const record = this.#s.record(id);
    // Without a config directory the transitions keep the state in memory, as a quarantine does.
    const transitions = options.persist === false
      ? { ...this.#s.transitions, configDir: undefined }
      : this.#s.transitions;
    return this.#s.serial(() => {
      if (on) this.#s.faults.release(record);
      return switchPlugin(transitions, record, on, options);
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
    const record = this.#s.record(id);
    return planDisable(this.#s.index, this.ledger, record, options.cascade ?? false);
  }

  /**
   * Calls every active plugin's `tick()`. A throw or rejection is contained and reported once
   * until the plugin ticks cleanly again.
   */
  tick(): void {
    this.#s.tick();
  }

  /**
   * At a step boundary: re-resolves every active plugin whose `liveVersion()` moved. A refresh
   * that succeeds replaces the plugin's contributions and publishes `environmentChanged` with the
   * tools added, removed and changed; one that fails keeps the previous contributions and is
   * reported once per live version. Costs a call per live plugin when nothing moved.
   */
  refresh(): RefreshReport {
    return refreshLive(this.#s.lifecycle, () => this.#s.version());
  }

  /**
   * The resolved execution environment: an immutable snapshot of the tools, prompt blocks,
   * hooks, gates, guards, action kinds and state keys of the active plugins, in dependency
   * order. The same object until something in it changes.
   */
  environment(): ResolvedExecutionEnv {
    return this.#s.environment();
  }

  /**
   * Deactivates every active plugin, dependents first, without touching their state files: the
   * host is shutting down, not the user switching plugins off.
   */
  stop(): Promise<void> {
    return this.#s.serial(() => stopAll(this.#s.transitions));
  }
}
