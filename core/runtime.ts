/**
 * The plugin runtime: registers plugins, activates the ones that are on in dependency order,
 * installs their capabilities into the registries within their bounds, ledgers every
 * contribution, unwinds them on disable, and re-resolves plugins whose live version moved.
 * Nothing a plugin throws, rejects or hangs on reaches the host.
 *
 * @module
 */

import { installCapabilities } from "./_install.ts";
import { PluginScope, type ScopeHost } from "./_plugin_scope.ts";
import type { Capability, Contribution } from "./capability.ts";
import { CAPABILITY_KINDS } from "./capability.ts";
import type { AmberConfig } from "./config.ts";
import { dependentsOf, orderPlugins } from "./dependency.ts";
import { buildEnvironment, type ResolvedExecutionEnv } from "./environment.ts";
import {
  AmberError,
  describeError,
  PluginFaultError,
  PluginRegistrationError,
  UnknownPluginError,
} from "./errors.ts";
import { EventBus } from "./events.ts";
import { PluginLedger } from "./ledger.ts";
import type { Plugin, PluginState } from "./plugin.ts";
import { PLUGIN_ID_PATTERN } from "./plugin.ts";
import { decodePluginConfig } from "./plugin_config.ts";
import { readPluginState, writePluginState } from "./plugin_state.ts";
import type { OwnedRegistry, Registries } from "./registry.ts";
import { ResolutionError } from "./resolution_error.ts";
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
   * the runtime keeps state in memory only (tests, embedding, benchmarks, programmatic runs).
   */
  readonly configDir?: string;
  /**
   * Every registered plugin is on, whatever its default: a programmatic run selected exactly
   * these plugins. Implies no state files.
   */
  readonly allOn?: boolean;
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
  /** Whether it is meant to be on (its `plugin.conf`, or its default). */
  readonly on: boolean;
  /** Its live contributions, oldest first. */
  readonly contributions: readonly Contribution[];
  /** Capabilities that declined at the last activation, with their reasons. */
  readonly declined: readonly { readonly name: string; readonly reason: string }[];
  /** Why it is failed or blocked, as typed errors (every config problem, or the one rule). */
  readonly failures: readonly ResolutionError[];
  /**
   * Where the plugin came from, as the host told {@linkcode PluginRuntime.register}: a path or
   * a package specifier for a plugin loaded at run time; undefined for one built into the host.
   */
  readonly source?: string;
  /** Why the plugin's code could not be loaded, for one registered with `registerFailed`. */
  readonly loadFailure?: string;
}

/** Options of {@linkcode PluginRuntime.register}. */
export interface RegisterOptions {
  /** Where the plugin came from (a path, `npm:...`); shown by hosts, not interpreted. */
  readonly source?: string;
}

/**
 * A plugin whose code could not be loaded, for {@linkcode PluginRuntime.registerFailed}: what
 * the host knows of it without its code, and why the code could not be had.
 */
export interface FailedPluginRegistration {
  /** The id the plugin had when it was added. */
  readonly id: string;
  /** Why it could not be loaded; it becomes the `failed` state's reason as is. */
  readonly reason: string;
  /** Where it came from. */
  readonly source?: string;
  /** Its display name when it was added; the id otherwise. */
  readonly name?: string;
  /** Its version when it was added; `0.0.0` otherwise. */
  readonly version?: string;
  /** Its category when it was added. */
  readonly category?: string;
  /** Its description when it was added. */
  readonly description?: string;
}

/** The outcome of {@linkcode PluginRuntime.setState}. */
export interface SetStateResult {
  /** The plugin's state afterwards. */
  readonly state: PluginState;
  /** The state file written. */
  readonly path?: string;
  /** Where a corrupt state file was moved before it was replaced. */
  readonly backup?: string;
  /** Plugins switched off first because they require this one (with `cascade`). */
  readonly cascaded: readonly string[];
  /** Plugins that were waiting for this one and are active now. */
  readonly unblocked: readonly string[];
}

/** Options of {@linkcode PluginRuntime.setState}. */
export interface SetStateOptions {
  /** When switching off a plugin that active plugins require, switch those off first. */
  readonly cascade?: boolean;
}

/** What {@linkcode PluginRuntime.refresh} found at a step boundary. */
export interface RefreshReport {
  /** The environment version afterwards. */
  readonly version: number;
  /** The plugins re-resolved successfully. */
  readonly refreshed: readonly string[];
  /** The plugins whose refresh failed (each reported once per live version). */
  readonly failed: readonly string[];
}

/**
 * Switching a plugin off was refused because active plugins require it.
 *
 * @example
 * ```ts
 * import { PluginDependentsError } from "@amber/core";
 * const error = new PluginDependentsError("base", ["app"]);
 * console.log(error.message);
 * // "cannot switch off 'base': active plugins require it: app (switch them off first, or cascade)"
 * ```
 */
export class PluginDependentsError extends AmberError {
  /** The plugin that was to be switched off. */
  readonly pluginId: string;
  /** The active plugins that require it. */
  readonly dependents: readonly string[];
  /** Creates the error. */
  constructor(pluginId: string, dependents: readonly string[]) {
    super(
      `cannot switch off '${pluginId}': active plugins require it: ${
        dependents.join(", ")
      } (switch them off first, or cascade)`,
    );
    this.name = "PluginDependentsError";
    this.pluginId = pluginId;
    this.dependents = dependents;
  }
}

interface PluginRecord {
  readonly plugin: Plugin;
  state: PluginState;
  // What the user wants: plugin.conf, the default, or the last setState.
  on: boolean;
  declined: readonly { name: string; reason: string }[];
  failures: readonly ResolutionError[];
  // The scope of the current activation; closed when the plugin goes off, so a context the
  // plugin kept can no longer subscribe to anything.
  scope: PluginScope | undefined;
  // The decoded config section the scope hands out.
  section: unknown;
  // What the current activation installed, for a live refresh to replace.
  capabilities: readonly Capability[];
  installed: Contribution[];
  liveSeen: number | undefined;
  liveFailed: number | undefined;
  tickFault: boolean;
  source: string | undefined;
  // Set for a plugin registered with registerFailed: its code was never loaded, so activating
  // it only ever fails with this reason and never calls the stand-in's methods.
  loadFailure: string | undefined;
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
const DEFAULT_TIMEOUT_MS = 5_000;
const REGISTERED: PluginState = Object.freeze({ status: "registered" });
const ACTIVE: PluginState = Object.freeze({ status: "active" });
const DISABLED: PluginState = Object.freeze({ status: "disabled" });
const MAX_DIAGNOSTICS = 200;
// Shared empty lists: most plugins decline and fail nothing, and a thousand activations should
// not allocate a thousand empty arrays.
const NO_FAILURES: readonly ResolutionError[] = Object.freeze([]);
const NOTHING_DECLINED: readonly { name: string; reason: string }[] = Object.freeze([]);
const ANY_VERSION = (range: string): boolean => range === "*" || range === "";

/**
 * Runs plugins. Registration never activates; `start()` activates every plugin whose state is
 * on, dependencies first; `setState(id, on)` is the one write path for plugin state.
 *
 * @example
 * ```ts
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
  #allOn: boolean;
  #config: AmberConfig;
  #workspace: Workspace;
  #host: HostServices;
  #timeoutMs: number;
  #onDiagnostic?: (diagnostic: Diagnostic) => void;
  #diagnostics: Diagnostic[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  #scopeHost: ScopeHost;
  #registryList: readonly OwnedRegistry<unknown>[];
  #order: readonly string[] | undefined;
  #orderFailures: ReadonlyMap<string, ResolutionError> = new Map();
  #satisfies: ((version: string, range: string) => boolean) | undefined;
  #live: PluginRecord[] = [];
  #env: ResolvedExecutionEnv | undefined;
  #envVersion = 0;

  /** Creates a runtime over `options.registries`. */
  constructor(options: PluginRuntimeOptions) {
    this.registries = options.registries;
    this.#allOn = options.allOn ?? false;
    this.#configDir = this.#allOn ? undefined : options.configDir;
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
    };
    this.#registryList = CAPABILITY_KINDS.map((kind) =>
      this.registries[kind] as OwnedRegistry<unknown>
    );
  }

  /**
   * Adds a plugin in the `registered` state. Throws a {@linkcode PluginRegistrationError} for a
   * bad id, version, name or requirement, or an id already registered. `options.source` says
   * where it came from, for hosts to show.
   */
  register(plugin: Plugin, options: RegisterOptions = {}): void {
    this.#add(plugin, options.source, undefined);
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
   * import { PluginRuntime } from "@amber/core";
   * import { createRegistries } from "@amber/registries";
   * const runtime = new PluginRuntime({ registries: createRegistries() });
   * runtime.registerFailed({ id: "broken", reason: "/p/mod.ts: SyntaxError: Unexpected token" });
   * await runtime.start();
   * console.log(runtime.state("broken")); // { status: "failed", reason: "/p/mod.ts: SyntaxError: Unexpected token" }
   * ```
   */
  registerFailed(failure: FailedPluginRegistration): void {
    const reason = String(failure.reason);
    const version = typeof failure.version === "string" && SEMVER.test(failure.version)
      ? failure.version
      : "0.0.0";
    const name = typeof failure.name === "string" && failure.name.trim() !== ""
      ? failure.name
      : String(failure.id);
    // A stand-in that carries what is known of the plugin for listings; the runtime never
    // calls it (see loadFailure), and it would refuse loudly if anything did.
    const refuse = (): never => {
      throw new AmberError(reason);
    };
    const standIn: Plugin = {
      id: failure.id,
      version,
      name,
      ...(failure.category !== undefined ? { category: failure.category } : {}),
      ...(failure.description !== undefined ? { description: failure.description } : {}),
      initialize: refuse,
      shutdown: () => {},
      capabilities: refuse,
    };
    this.#add(standIn, failure.source, reason);
  }

  #add(plugin: Plugin, source: string | undefined, loadFailure: string | undefined): void {
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
    for (const [dependency, range] of Object.entries(plugin.requires ?? {})) {
      if (typeof range !== "string") {
        throw new PluginRegistrationError(
          id,
          `plugin '${id}': requires.${dependency} must be a semver range string ("*" for any)`,
        );
      }
    }
    if (
      plugin.config !== undefined && typeof plugin.config?.["~standard"]?.validate !== "function"
    ) {
      throw new PluginRegistrationError(
        id,
        `plugin '${id}': config is not a Standard Schema (a zod 4 schema, for one)`,
      );
    }
    this.#records.set(id, {
      plugin,
      state: REGISTERED,
      on: false,
      declined: [],
      failures: [],
      scope: undefined,
      section: undefined,
      capabilities: [],
      installed: [],
      liveSeen: undefined,
      liveFailed: undefined,
      tickFault: false,
      source,
      loadFailure,
    });
    this.#order = undefined;
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
    return this.#resolveOrder();
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

  /**
   * Attaches the host's live configuration; plugins read it at use time, so they see it. Each
   * active plugin's section is decoded again; a section that no longer decodes is reported and
   * the plugin keeps the value it had.
   */
  attachConfig(config: AmberConfig): void {
    this.#config = config;
    for (const record of this.#records.values()) {
      if (record.state.status !== "active" || record.plugin.config === undefined) continue;
      const decoded = decodePluginConfig(record.plugin, config.plugins[record.plugin.id]);
      const apply = (result: Awaited<typeof decoded>): void => {
        if (result.ok) record.section = result.value;
        else {
          for (const error of result.errors) {
            this.#diagnose({ pluginId: record.plugin.id, where: "config", message: error.message });
          }
        }
      };
      if (decoded instanceof Promise) decoded.then(apply);
      else apply(decoded);
    }
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
    return this.#serial(async () => {
      await this.#loadSemver();
      const order = this.#resolveOrder();
      for (const record of this.#records.values()) {
        if (record.state.status !== "registered") continue;
        const persisted = this.#persistedState(record);
        record.on = typeof persisted === "boolean" ? persisted : await persisted;
        const failure = this.#orderFailures.get(record.plugin.id);
        if (failure === undefined) continue;
        if (!record.on) record.state = DISABLED;
        else this.#block(record, failure, failure.rule === "dependency-cycle");
      }
      for (const id of order) {
        const record = this.#records.get(id)!;
        if (record.state.status !== "registered") continue;
        if (!record.on) {
          record.state = DISABLED;
          continue;
        }
        const pending = this.#activateIfReady(record);
        if (pending !== undefined) await pending;
      }
    });
  }

  /**
   * The one write path of plugin state: persists `plugins/<id>/plugin.conf` atomically, then
   * activates or deactivates the plugin. Switching off a plugin that active plugins require is
   * refused with a {@linkcode PluginDependentsError} (nothing is written), unless `cascade`
   * switches them off first, furthest dependents first; they stay on in their own files and
   * come back when this plugin does. Calls are serialized: concurrent calls never tear the file
   * and the last call wins.
   */
  setState(id: string, on: boolean, options: SetStateOptions = {}): Promise<SetStateResult> {
    const record = this.#record(id);
    return this.#serial(async () => {
      const cascaded: string[] = [];
      if (!on && record.state.status === "active") {
        const dependents = this.#activeDependents(id);
        if (dependents.length > 0 && !options.cascade) {
          throw new PluginDependentsError(id, dependents);
        }
        for (const dependent of dependents) {
          const other = this.#records.get(dependent)!;
          const pending = this.#deactivate(other);
          if (pending !== undefined) await pending;
          cascaded.push(dependent);
        }
      }
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
      record.on = on;
      let unblocked: string[] = [];
      if (on && record.state.status !== "active") {
        await this.#loadSemver();
        this.#resolveOrder();
        const failure = this.#orderFailures.get(id);
        if (failure !== undefined) {
          this.#block(record, failure, failure.rule === "dependency-cycle");
        } else {
          const pending = this.#activateIfReady(record);
          if (pending !== undefined) await pending;
        }
      }
      if (!on && record.state.status === "active") {
        const pending = this.#deactivate(record);
        if (pending !== undefined) await pending;
      }
      if (!on) {
        record.state = DISABLED;
        record.failures = NO_FAILURES;
      }
      // Whatever was waiting on this plugin (or on something it unblocks) gets its chance now.
      for (const other of this.#resolveOrder()) {
        const waiting = this.#records.get(other)!;
        if (waiting.on && waiting.state.status === "blocked") {
          const pending = this.#activateIfReady(waiting);
          if (pending !== undefined) await pending;
          if ((waiting.state as PluginState).status === "active") unblocked = [...unblocked, other];
        }
      }
      // Switched off for this plugin's sake, they stay on in their own files: blocked until
      // it comes back.
      for (const dependent of cascaded) {
        const other = this.#records.get(dependent)!;
        const problem = this.#requirementProblem(other);
        if (problem !== undefined) this.#block(other, problem, false);
      }
      return { state: record.state, ...written, cascaded, unblocked };
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
   * At a step boundary: re-resolves every active plugin whose `liveVersion()` moved. A refresh
   * that succeeds replaces the plugin's contributions and publishes `environmentChanged` with the
   * tools added, removed and changed; one that fails keeps the previous contributions and is
   * reported once per live version. Costs a call per live plugin when nothing moved.
   */
  refresh(): RefreshReport {
    const refreshed: string[] = [];
    const failed: string[] = [];
    for (const record of this.#live) {
      if (record.state.status !== "active") continue;
      let version: number;
      try {
        version = record.plugin.liveVersion!();
      } catch (error) {
        this.#diagnose({
          pluginId: record.plugin.id,
          where: "liveVersion",
          message: describeError(error),
          error,
        });
        continue;
      }
      if (version === record.liveSeen || version === record.liveFailed) continue;
      if (this.#reinstall(record, version)) refreshed.push(record.plugin.id);
      else failed.push(record.plugin.id);
    }
    return { version: this.#version(), refreshed, failed };
  }

  /**
   * The resolved execution environment: an immutable snapshot of the tools, prompt blocks,
   * hooks, gates, guards, action kinds and state keys of the active plugins, in dependency
   * order. The same object until something in it changes.
   */
  environment(): ResolvedExecutionEnv {
    const version = this.#version();
    if (this.#env === undefined || this.#envVersion !== version) {
      const order = this.#resolveOrder().filter((id) =>
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
    return this.#serial(async () => {
      const order = this.#order ?? this.ids();
      const ordered = new Set(order);
      const rest = this.ids().filter((id) => !ordered.has(id));
      for (const id of [...order, ...rest].reverse()) {
        const record = this.#records.get(id)!;
        if (record.state.status === "active") {
          const pending = this.#deactivate(record);
          if (pending !== undefined) await pending;
        }
        record.state = REGISTERED;
        record.failures = NO_FAILURES;
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

  #version(): number {
    let sum = 0;
    for (const registry of this.#registryList) sum += registry.version;
    return sum;
  }

  // semver is loaded only when some plugin asks for a version range, so a harness without
  // ranges never pays for it.
  async #loadSemver(): Promise<void> {
    if (this.#satisfies !== undefined || this.#order !== undefined) return;
    const needed = [...this.#records.values()].some((record) =>
      Object.values(record.plugin.requires ?? {}).some((range) => !ANY_VERSION(range))
    );
    if (!needed) return;
    const semver = await import("semver");
    this.#satisfies = (version, range) => semver.satisfies(version, range);
  }

  #resolveOrder(): readonly string[] {
    if (this.#order !== undefined) return this.#order;
    const nodes = [...this.#records.values()].map((record) => ({
      id: record.plugin.id,
      version: record.plugin.version,
      requires: record.plugin.requires,
    }));
    const satisfies = this.#satisfies ?? ((_version: string, range: string) => ANY_VERSION(range));
    const { order, failures } = orderPlugins(nodes, satisfies);
    this.#order = order;
    this.#orderFailures = failures;
    return order;
  }

  #activeDependents(id: string): string[] {
    const nodes = [...this.#records.values()].map((record) => ({
      id: record.plugin.id,
      version: record.plugin.version,
      requires: record.plugin.requires,
    }));
    return dependentsOf(nodes, id).filter((dependent) =>
      this.#records.get(dependent)?.state.status === "active"
    );
  }

  // Why `record` cannot activate now because of a requirement, or undefined when it can.
  #requirementProblem(record: PluginRecord): ResolutionError | undefined {
    for (const dependency of Object.keys(record.plugin.requires ?? {})) {
      const other = this.#records.get(dependency);
      const status = other?.state.status;
      if (status === "active") continue;
      const why = other === undefined
        ? "which is not installed"
        : status === "failed" || status === "blocked"
        ? `which is ${status}`
        : "which is off";
      return new ResolutionError({
        rule: "missing-dependency",
        pluginIds: [record.plugin.id],
        message: `plugin '${record.plugin.id}' requires '${dependency}', ${why}`,
        id: dependency,
      });
    }
    return undefined;
  }

  #block(record: PluginRecord, failure: ResolutionError, broken: boolean): void {
    record.failures = [failure];
    record.state = broken
      ? { status: "failed", reason: failure.message }
      : { status: "blocked", reason: failure.message };
  }

  // The lifecycle methods below return a promise only when the plugin's own code returned one
  // (or a state file has to be read), so a harness of synchronous plugins activates and
  // deactivates without a promise per plugin.

  #persistedState(record: PluginRecord): Promise<boolean> | boolean {
    const fallback = this.#allOn || (record.plugin.enabledByDefault ?? true);
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

  #activateIfReady(record: PluginRecord): Promise<void> | void {
    if (record.loadFailure !== undefined) {
      return this.#failed(record, record.loadFailure, undefined, [], "load");
    }
    const problem = this.#requirementProblem(record);
    if (problem !== undefined) return this.#block(record, problem, false);
    const decoded = decodePluginConfig(record.plugin, this.#config.plugins[record.plugin.id]);
    if (decoded instanceof Promise) {
      return decoded.then((result) => this.#activateDecoded(record, result));
    }
    return this.#activateDecoded(record, decoded);
  }

  #activateDecoded(
    record: PluginRecord,
    decoded: Awaited<ReturnType<typeof decodePluginConfig>>,
  ): Promise<void> | void {
    if (!decoded.ok) {
      return this.#fail(
        record,
        decoded.errors.map((error) => error.message).join("; "),
        undefined,
        false,
        decoded.errors,
      );
    }
    record.section = decoded.value;
    return this.#activate(record);
  }

  #activate(record: PluginRecord): Promise<void> | void {
    const { plugin } = record;
    const id = plugin.id;
    record.declined = NOTHING_DECLINED;
    record.failures = NO_FAILURES;
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
    const { plugin } = record;
    const id = plugin.id;
    if (ready !== true) {
      return this.#fail(record, "initialize returned false", undefined, false);
    }
    let capabilities: readonly Capability[];
    try {
      capabilities = plugin.capabilities();
    } catch (error) {
      return this.#fail(record, `capabilities() failed: ${describeError(error)}`, error, true);
    }
    let live: number | undefined;
    if (plugin.liveVersion !== undefined) {
      try {
        live = plugin.liveVersion();
      } catch (error) {
        return this.#fail(record, `liveVersion() failed: ${describeError(error)}`, error, true);
      }
    }
    const outcome = installCapabilities(this.registries, id, capabilities, scope, plugin.bound);
    if (!outcome.ok) {
      return this.#fail(
        record,
        outcome.reason,
        undefined,
        true,
        outcome.failure ? [outcome.failure] : [],
      );
    }
    const contributions = outcome.contributions;
    // The record keeps its own list: the ledger takes over the array it is given.
    this.ledger.recordAll(id, contributions.slice());
    record.capabilities = capabilities;
    record.installed = contributions;
    record.declined = outcome.declined;
    record.liveSeen = live;
    record.liveFailed = undefined;
    if (live !== undefined) this.#live.push(record);
    record.state = ACTIVE;
    record.tickFault = false;
    if (this.events.has("pluginEnabled")) this.events.publish("pluginEnabled", { id });
  }

  // Swaps a live plugin's contributions for what capabilities() gives now. The old ones go
  // first, so the new set is checked against everyone else exactly as at activation; if the new
  // set fails, the old capabilities are installed again and the run keeps its environment.
  #reinstall(record: PluginRecord, version: number): boolean {
    const { plugin } = record;
    const id = plugin.id;
    const before = toolsOf(record.installed, this.registries);
    const reject = (reason: string): boolean => {
      record.liveFailed = version;
      this.#diagnose({ pluginId: id, where: "refresh", message: reason });
      if (this.events.has("refreshFailed")) {
        this.events.publish("refreshFailed", { pluginId: id, version, reason });
      }
      return false;
    };
    let capabilities: readonly Capability[];
    try {
      capabilities = plugin.capabilities();
    } catch (error) {
      return reject(`capabilities() failed: ${describeError(error)}`);
    }
    this.#release(record);
    const outcome = installCapabilities(
      this.registries,
      id,
      capabilities,
      record.scope!,
      plugin.bound,
    );
    if (!outcome.ok) {
      const restored = installCapabilities(
        this.registries,
        id,
        record.capabilities,
        record.scope!,
        plugin.bound,
      );
      if (restored.ok) this.#adopt(record, record.capabilities, restored.contributions);
      else {
        // Nothing else can have taken the ids meanwhile (changes are serialized), so this only
        // happens when the plugin's previous capabilities no longer install either.
        this.#diagnose({ pluginId: id, where: "refresh", message: restored.reason });
      }
      return reject(`version ${version}: ${outcome.reason}`);
    }
    this.#adopt(record, capabilities, outcome.contributions);
    record.declined = outcome.declined;
    record.liveSeen = version;
    record.liveFailed = undefined;
    const after = toolsOf(record.installed, this.registries);
    if (this.events.has("environmentChanged")) {
      const added = [...after.keys()].filter((name) => !before.has(name));
      const removed = [...before.keys()].filter((name) => !after.has(name));
      const changed = [...after.keys()].filter((name) =>
        before.has(name) && before.get(name) !== after.get(name)
      );
      this.events.publish("environmentChanged", {
        pluginId: id,
        version: this.#version(),
        added,
        removed,
        changed,
      });
    }
    return true;
  }

  #release(record: PluginRecord): void {
    const id = record.plugin.id;
    for (let i = record.installed.length - 1; i >= 0; i--) {
      const contribution = record.installed[i];
      try {
        contribution.remove();
      } catch (error) {
        this.#diagnose({
          pluginId: id,
          where: `remove of '${contribution.name}'`,
          message: describeError(error),
          error,
        });
      }
      this.ledger.forget(id, contribution);
    }
    record.installed = [];
  }

  #adopt(record: PluginRecord, capabilities: readonly Capability[], contributions: Contribution[]) {
    for (const contribution of contributions) this.ledger.record(record.plugin.id, contribution);
    record.capabilities = capabilities;
    record.installed = contributions;
  }

  #deactivate(record: PluginRecord): Promise<void> | void {
    closeScope(record);
    const pending = this.#shutdown(record);
    if (pending !== undefined) return pending.then(() => this.#deactivated(record));
    this.#deactivated(record);
  }

  #deactivated(record: PluginRecord): void {
    const id = record.plugin.id;
    this.#unwind(record);
    record.state = DISABLED;
    if (this.events.has("pluginDisabled")) this.events.publish("pluginDisabled", { id });
  }

  #fail(
    record: PluginRecord,
    reason: string,
    error: unknown,
    initialized: boolean,
    failures: readonly ResolutionError[] = [],
  ): Promise<void> | void {
    closeScope(record);
    // The plugin may hold resources from initialize; it gets the chance to release them.
    const pending = initialized ? this.#shutdown(record) : undefined;
    if (pending !== undefined) {
      return pending.then(() => this.#failed(record, reason, error, failures));
    }
    this.#failed(record, reason, error, failures);
  }

  #failed(
    record: PluginRecord,
    reason: string,
    error: unknown,
    failures: readonly ResolutionError[],
    where = "activation",
  ): void {
    const id = record.plugin.id;
    this.#unwind(record);
    record.declined = [];
    record.failures = failures;
    record.state = { status: "failed", reason };
    this.#diagnose({ pluginId: id, where, message: reason, error });
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

  #unwind(record: PluginRecord): void {
    const id = record.plugin.id;
    record.installed = [];
    record.capabilities = [];
    if (record.liveSeen !== undefined || record.plugin.liveVersion !== undefined) {
      this.#live = this.#live.filter((other) => other !== record);
    }
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

// The tools a set of contributions put in the registry, by name, with the Tool object now there.
function toolsOf(
  contributions: readonly Contribution[],
  registries: Registries,
): Map<string, unknown> {
  const tools = new Map<string, unknown>();
  for (const contribution of contributions) {
    if (contribution.kind !== "tool") continue;
    for (const name of contribution.ids) tools.set(name, registries.tool.get(name)?.tool);
  }
  return tools;
}
