/**
 * The types the plugin runtime takes and gives: its options, what it reports, and the error of a
 * refused switch-off. {@linkcode PluginRuntime} is in `runtime.ts`.
 *
 * @module
 */

import type { AmberConfig } from "./config.ts";
import { AmberError } from "./errors.ts";
import type { EventBus } from "./event_bus.ts";
import type { FaultEvent } from "./faults.ts";
import type { Plugin, PluginState } from "./plugin.ts";
import type { Registries } from "./registries.ts";
import type { ResolutionError } from "./resolution_error.ts";
import type { HostServices, Workspace } from "./services.ts";
import type { Contribution } from "./contribution.ts";

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
  /**
   * Receives every fault, initialize timeout, quarantine and release as it happens, for a host
   * that remembers them across processes (see `FaultEvent`).
   */
  readonly onFault?: (event: FaultEvent) => void;
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
  /**
   * False: the switch holds for this runtime only and `plugin.conf` is left as it is, so other
   * hosts on the same config directory (another served session, the user's next `amber`) keep
   * the user's choice. True by default.
   */
  readonly persist?: boolean;
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
 * import assert from "node:assert/strict";
 * import { PluginDependentsError } from "@amber/core";
 * const error = new PluginDependentsError("base", ["app"]);
 * assert.equal(error.name, "PluginDependentsError");
 * assert.equal(
 *   error.message,
 *   "cannot switch off 'base': active plugins require it: app (switch them off first, or cascade)",
 * );
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
