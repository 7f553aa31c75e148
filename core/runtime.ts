/**
 * The plugin runtime: registers plugins, activates the ones that are on, installs their
 * capabilities into the registries, ledgers every contribution, and unwinds them on disable.
 * Nothing a plugin throws, rejects or hangs on reaches the host.
 *
 * @module
 */

import type { Capability, CapabilityKind, Contribution, InstallResult } from "./capability.ts";
import { CAPABILITY_KINDS } from "./capability.ts";
import type { AmberConfig } from "./config.ts";
import {
  describeError,
  PluginFaultError,
  PluginRegistrationError,
  UnknownPluginError,
} from "./errors.ts";
import { EventBus } from "./events.ts";
import { PluginLedger } from "./ledger.ts";
import type { Plugin, PluginState } from "./plugin.ts";
import { PLUGIN_ID_PATTERN } from "./plugin.ts";
import { PluginScope, type ScopeHost } from "./_plugin_scope.ts";
import { readPluginState, writePluginState } from "./plugin_state.ts";
import type { OwnedRegistry, Registries } from "./registry.ts";
import type { HostServices, Workspace } from "./services.ts";

/**
 * Something the runtime wants the user to know: a plugin fault it contained, a corrupt state
 * file, a contribution left behind.
 */
export interface Diagnostic {
  /** The plugin concerned. */
  readonly pluginId: string;
  /** Where it happened: `initialize`, `tick`, `plugin.conf`, a capability name... */
  readonly where: string;
  /** What happened, in one line. */
  readonly message: string;
  /** The underlying error, when there is one. */
  readonly error?: unknown;
}

/** Options of {@linkcode PluginRuntime}. */
export interface PluginRuntimeOptions {
  /** The registries capabilities install into. */
  readonly registries: Registries;
  /**
   * The config directory whose `plugins/<id>/plugin.conf` files hold plugin state. Without one
   * the runtime keeps state in memory only (tests, embedding, benchmarks).
   */
  readonly configDir?: string;
  /** The event bus; a new one by default. */
  readonly events?: EventBus;
  /** The configuration at start; the host may attach a live one later. */
  readonly config?: AmberConfig;
  /** The workspace; the current directory by default. */
  readonly workspace?: Workspace;
  /** Host services; the host may attach them later. */
  readonly host?: HostServices;
  /** How long `initialize` and `shutdown` may take before they count as hung (ms). */
  readonly timeoutMs?: number;
  /** Receives every diagnostic as it happens. */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
}

/** A plugin as the runtime sees it. */
export interface PluginRecordView {
  /** The plugin. */
  readonly plugin: Plugin;
  /** Its state. */
  readonly state: PluginState;
  /** Its live contributions, oldest first. */
  readonly contributions: readonly Contribution[];
  /** Capabilities that declined at the last activation, with their reasons. */
  readonly declined: readonly { readonly name: string; readonly reason: string }[];
}

/** The outcome of {@linkcode PluginRuntime.setState}. */
export interface SetStateResult {
  /** The plugin's state afterwards. */
  readonly state: PluginState;
  /** The state file written. */
  readonly path?: string;
  /** Where a corrupt state file was moved before it was replaced. */
  readonly backup?: string;
}

interface PluginRecord {
  readonly plugin: Plugin;
  state: PluginState;
  declined: { name: string; reason: string }[];
  // The scope of the current activation; closed when the plugin goes off, so a context the
  // plugin kept can no longer subscribe to anything.
  scope: PluginScope | undefined;
  tickFault: boolean;
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
const DEFAULT_TIMEOUT_MS = 5_000;
const REGISTERED: PluginState = Object.freeze({ status: "registered" });
const ACTIVE: PluginState = Object.freeze({ status: "active" });
const DISABLED: PluginState = Object.freeze({ status: "disabled" });
const MAX_DIAGNOSTICS = 200;

/**
 * Runs plugins. Registration never activates; `start()` activates every plugin whose state is
 * on; `setState(id, on)` is the one write path for plugin state.
 *
 * @example
 * ```ts
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 *
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * runtime.register({
 *   id: "style",
 *   version: "1.0.0",
 *   name: "Style",
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [
 *     { kind: "prompt", name: "style", priority: 400, render: () => "Answer briefly." },
 *   ],
 * });
 * await runtime.start();
 * console.log(runtime.state("style").status); // "active"
 * await runtime.setState("style", false);
 * console.log(runtime.state("style").status); // "disabled"
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
  #configDir?: string;
  #config: AmberConfig;
  #workspace: Workspace;
  #host: HostServices;
  #timeoutMs: number;
  #onDiagnostic?: (diagnostic: Diagnostic) => void;
  #diagnostics: Diagnostic[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  #scopeHost: ScopeHost;
  #registryList: readonly OwnedRegistry<unknown>[];

  /** Creates a runtime over `options.registries`. */
  constructor(options: PluginRuntimeOptions) {
    this.registries = options.registries;
    this.#configDir = options.configDir;
    this.#config = options.config ?? { plugins: {} };
    this.#workspace = options.workspace ?? { root: Deno.cwd() };
    this.#host = options.host ?? {};
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#onDiagnostic = options.onDiagnostic;
    this.events = options.events ??
      new EventBus((error, type) =>
        this.#diagnose({ pluginId: "core", where: `event ${type}`, message: describeError(error) })
      );
    const tools = this.registries.tool;
    this.#scopeHost = {
      bus: this.events,
      ledger: this.ledger,
      // Plugins get the read half of the tool registry, never the registry itself.
      tools: Object.freeze({
        get: (name: string) => tools.get(name),
        list: () => tools.list(),
      }),
      config: () => this.#config,
      hostServices: () => this.#host,
      workspace: () => this.#workspace,
      report: (pluginId, where, message, error) =>
        this.#diagnose({ pluginId, where, message, error }),
    };
    this.#registryList = CAPABILITY_KINDS.map((kind) =>
      this.registries[kind] as OwnedRegistry<unknown>
    );
  }

  /**
   * Adds a plugin in the `registered` state. Throws a {@linkcode PluginRegistrationError} for a
   * bad id, version or name, or an id already registered.
   */
  register(plugin: Plugin): void {
    const id = (plugin as { id?: unknown })?.id;
    if (typeof id !== "string" || !PLUGIN_ID_PATTERN.test(id)) {
      throw new PluginRegistrationError(
        String(id),
        `plugin id '${String(id)}' is not a slug: use lowercase letters, digits and '_'`,
      );
    }
    if (id === "core") {
      throw new PluginRegistrationError(id, "plugin id 'core' is reserved for the harness itself");
    }
    if (this.#records.has(id)) {
      throw new PluginRegistrationError(id, `plugin id '${id}' is already registered`);
    }
    if (typeof plugin.version !== "string" || !SEMVER.test(plugin.version)) {
      throw new PluginRegistrationError(
        id,
        `plugin '${id}': version '${String(plugin.version)}' is not semver (e.g. 1.0.0)`,
      );
    }
    if (typeof plugin.name !== "string" || plugin.name.trim() === "") {
      throw new PluginRegistrationError(id, `plugin '${id}': name is empty`);
    }
    for (const method of ["initialize", "shutdown", "capabilities"] as const) {
      if (typeof plugin[method] !== "function") {
        throw new PluginRegistrationError(id, `plugin '${id}': ${method} is not a function`);
      }
    }
    this.#records.set(id, {
      plugin,
      state: REGISTERED,
      declined: [],
      scope: undefined,
      tickFault: false,
    });
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
      contributions: this.ledger.contributions(id),
      declined: record.declined.slice(),
    };
  }

  /** Every plugin, in registration order. */
  list(): readonly PluginRecordView[] {
    return this.ids().map((id) => this.info(id));
  }

  /** The diagnostics so far, oldest first (the last 200). */
  diagnostics(): readonly Diagnostic[] {
    return this.#diagnostics.slice();
  }

  /** Records a diagnostic, e.g. a render failure a registry contained. */
  report(diagnostic: Diagnostic): void {
    this.#diagnose(diagnostic);
  }

  /** The configuration plugins see now. */
  config(): AmberConfig {
    return this.#config;
  }

  /** Attaches the host's live configuration; plugins read it at use time, so they see it. */
  attachConfig(config: AmberConfig): void {
    this.#config = config;
  }

  /** Attaches host services; capabilities installed from now on see them. */
  attachHost(host: HostServices): void {
    this.#host = host;
  }

  /**
   * Activates every registered plugin whose state is on: its `plugin.conf`, or its default when
   * there is none or the file is corrupt (which is reported and left as it is).
   */
  start(): Promise<void> {
    return this.#serial(async () => {
      for (const record of this.#records.values()) {
        if (record.state.status !== "registered") continue;
        const persisted = this.#persistedState(record);
        const on = typeof persisted === "boolean" ? persisted : await persisted;
        if (!on) record.state = DISABLED;
        else {
          const pending = this.#activate(record);
          if (pending !== undefined) await pending;
        }
      }
    });
  }

  /**
   * The one write path of plugin state: persists `plugins/<id>/plugin.conf` atomically, then
   * activates or deactivates the plugin. Calls are serialized, so concurrent calls never tear
   * the file and the last call wins.
   */
  setState(id: string, on: boolean): Promise<SetStateResult> {
    const record = this.#record(id);
    return this.#serial(async () => {
      let written: { path: string; backup?: string } | undefined;
      if (this.#configDir !== undefined) {
        written = await writePluginState(this.#configDir, id, { enabled: on });
        if (written.backup) {
          this.#diagnose({
            pluginId: id,
            where: "plugin.conf",
            message: `the corrupt state file was moved to ${written.backup}`,
          });
        }
      }
      if (on && record.state.status !== "active") await this.#activate(record);
      if (!on && record.state.status === "active") await this.#deactivate(record);
      if (!on) record.state = DISABLED;
      return { state: record.state, ...written };
    });
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
        if (isThenable(result)) {
          result.then(undefined, (error) => this.#tickFault(record, error));
        } else {
          record.tickFault = false;
        }
      } catch (error) {
        this.#tickFault(record, error);
      }
    }
  }

  /**
   * Deactivates every active plugin, newest first, without touching their state files: the
   * host is shutting down, not the user switching plugins off.
   */
  stop(): Promise<void> {
    return this.#serial(async () => {
      for (const record of [...this.#records.values()].reverse()) {
        if (record.state.status === "active") {
          const pending = this.#deactivate(record);
          if (pending !== undefined) await pending;
          record.state = REGISTERED;
        }
      }
    });
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

  // The lifecycle methods below return a promise only when the plugin's own code returned one
  // (or a state file has to be read), so a harness of synchronous plugins activates and
  // deactivates without a promise per plugin.

  #persistedState(record: PluginRecord): Promise<boolean> | boolean {
    const fallback = record.plugin.enabledByDefault ?? true;
    if (this.#configDir === undefined) return fallback;
    return readPluginState(this.#configDir, record.plugin.id).then((read) => {
      if (read.status === "ok") return read.record.enabled;
      if (read.status === "corrupt") {
        this.#diagnose({
          pluginId: record.plugin.id,
          where: "plugin.conf",
          message: `${read.error.message}; using the default (${
            fallback ? "on" : "off"
          }) and leaving the file as it is`,
          error: read.error,
        });
      }
      return fallback;
    });
  }

  #activate(record: PluginRecord): Promise<void> | void {
    const { plugin } = record;
    const id = plugin.id;
    record.declined = [];
    const scope = new PluginScope(id, this.#scopeHost);
    record.scope = scope;
    let ready: unknown;
    try {
      ready = plugin.initialize(scope);
    } catch (error) {
      return this.#fail(record, `initialize failed: ${describeError(error)}`, error, false);
    }
    if (isThenable(ready)) {
      return this.#within(ready, `plugin '${id}': initialize`).then(
        (value) => this.#install(record, scope, value),
        (error) => this.#fail(record, `initialize failed: ${describeError(error)}`, error, false),
      );
    }
    return this.#install(record, scope, ready);
  }

  #install(record: PluginRecord, scope: PluginScope, ready: unknown): Promise<void> | void {
    const id = record.plugin.id;
    if (ready !== true) {
      return this.#fail(record, "initialize returned false", undefined, false);
    }
    let capabilities: readonly Capability[];
    try {
      capabilities = record.plugin.capabilities();
      if (!Array.isArray(capabilities)) throw new TypeError("capabilities() must return an array");
    } catch (error) {
      return this.#fail(record, `capabilities() failed: ${describeError(error)}`, error, true);
    }
    const problem = checkCapabilities(capabilities);
    if (problem !== undefined) return this.#fail(record, problem, undefined, true);

    for (let i = 0; i < capabilities.length; i++) {
      const capability = capabilities[i];
      const kind: CapabilityKind = capability.kind;
      const registry = this.registries[kind] as OwnedRegistry<Capability>;
      let result: InstallResult;
      try {
        result = registry.install(id, capability, scope);
      } catch (error) {
        return this.#fail(
          record,
          `${label(capability)} failed: ${describeError(error)}`,
          error,
          true,
        );
      }
      if (result.status === "installed") {
        this.ledger.record(id, result.contribution);
        if (result.contribution.kind !== kind) {
          return this.#fail(
            record,
            `${label(capability)} installed a '${result.contribution.kind}' contribution`,
            undefined,
            true,
          );
        }
      } else if (result.status === "declined") {
        record.declined.push({ name: capability.name, reason: result.reason });
      } else {
        return this.#fail(record, `${label(capability)} failed: ${result.error}`, undefined, true);
      }
    }
    record.state = ACTIVE;
    record.tickFault = false;
    if (this.events.has("pluginEnabled")) this.events.publish("pluginEnabled", { id });
  }

  #deactivate(record: PluginRecord): Promise<void> | void {
    closeScope(record);
    const pending = this.#shutdown(record);
    if (pending !== undefined) return pending.then(() => this.#deactivated(record));
    this.#deactivated(record);
  }

  #deactivated(record: PluginRecord): void {
    const id = record.plugin.id;
    this.#unwind(id);
    record.state = DISABLED;
    if (this.events.has("pluginDisabled")) this.events.publish("pluginDisabled", { id });
  }

  #fail(
    record: PluginRecord,
    reason: string,
    error: unknown,
    initialized: boolean,
  ): Promise<void> | void {
    closeScope(record);
    // The plugin may hold resources from initialize; it gets the chance to release them.
    const pending = initialized ? this.#shutdown(record) : undefined;
    if (pending !== undefined) return pending.then(() => this.#failed(record, reason, error));
    this.#failed(record, reason, error);
  }

  #failed(record: PluginRecord, reason: string, error: unknown): void {
    const id = record.plugin.id;
    this.#unwind(id);
    record.declined = [];
    record.state = { status: "failed", reason };
    this.#diagnose({ pluginId: id, where: "activation", message: reason, error });
    this.events.publish("pluginFailed", { id, reason });
  }

  #shutdown(record: PluginRecord): Promise<void> | undefined {
    const id = record.plugin.id;
    const report = (error: unknown): void =>
      this.#diagnose({ pluginId: id, where: "shutdown", message: describeError(error), error });
    try {
      const done = record.plugin.shutdown();
      if (isThenable(done)) {
        return this.#within(done, `plugin '${id}': shutdown`).then(() => {}, report);
      }
    } catch (error) {
      report(error);
    }
    return undefined;
  }

  #unwind(id: string): void {
    const faults = this.ledger.unwind(id);
    if (faults.length === 0) return;
    for (const fault of faults) {
      this.#diagnose({
        pluginId: id,
        where: `remove of '${fault.contribution.name}'`,
        message: describeError(fault.error),
        error: fault.error,
      });
    }
    this.#sweep(id);
  }

  // A remove that threw may have left its entries behind: they are purged here and reported, so
  // a disable is clean whatever went wrong. Without a fault there is nothing to sweep, since a
  // plugin never reaches a registry except through the handles the ledger just used.
  #sweep(id: string): void {
    for (const registry of this.#registryList) {
      const left = registry.purge(id);
      if (left.length > 0) {
        this.#diagnose({
          pluginId: id,
          where: "unwind",
          message: `purged what its contributions left behind: ${left.join(", ")}`,
        });
      }
    }
  }

  #within<T>(promise: PromiseLike<T>, what: string): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${what} did not finish within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  #tickFault(record: PluginRecord, error: unknown): void {
    if (record.tickFault) return;
    record.tickFault = true;
    const fault = new PluginFaultError(record.plugin.id, "tick", error);
    this.#diagnose({ pluginId: record.plugin.id, where: "tick", message: fault.message, error });
  }

  #diagnose(diagnostic: Diagnostic): void {
    this.#diagnostics.push(diagnostic);
    if (this.#diagnostics.length > MAX_DIAGNOSTICS) this.#diagnostics.shift();
    try {
      this.#onDiagnostic?.(diagnostic);
    } catch {
      // A failing sink must not turn a contained fault into an uncontained one.
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}

function closeScope(record: PluginRecord): void {
  record.scope?.close();
  record.scope = undefined;
}

function label(capability: Capability): string {
  return `capability '${capability.name}' (${capability.kind})`;
}

const KINDS: ReadonlySet<string> = new Set(CAPABILITY_KINDS);

// The union of capability kinds is closed; a plugin written in JavaScript can still hand over
// anything, so the shape is checked before a registry sees it.
function checkCapabilities(capabilities: readonly Capability[]): string | undefined {
  for (let i = 0; i < capabilities.length; i++) {
    const capability = capabilities[i] as Partial<Capability> | null;
    if (capability === null || typeof capability !== "object") {
      return `capability #${i + 1} is not an object`;
    }
    const name = capability.name;
    if (typeof name !== "string" || name === "") return `capability #${i + 1} has no name`;
    if (!KINDS.has(capability.kind as string)) {
      return `capability '${name}' has unknown kind '${String(capability.kind)}' (kinds: ${
        CAPABILITY_KINDS.join(", ")
      })`;
    }
    // A plugin declares a handful of capabilities: a pairwise scan beats building a Set.
    for (let j = 0; j < i; j++) {
      if (capabilities[j].name === name) {
        return `capability name '${name}' is used twice in the plugin`;
      }
    }
  }
  return undefined;
}
