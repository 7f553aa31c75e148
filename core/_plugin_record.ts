// What the runtime keeps of one registered plugin, the shared constant states, and the stand-in
// plugin of one whose code could not be loaded.

import type { PluginScope } from "./_plugin_scope.ts";
import type { Capability } from "./capability.ts";
import type { Contribution } from "./contribution.ts";
import { AmberError } from "./errors.ts";
import type { Plugin, PluginState } from "./plugin.ts";
import { isSemver } from "./plugin_validation.ts";
import type { ResolutionError } from "./resolution_error.ts";
import type { FailedPluginRegistration } from "./runtime_types.ts";

/** One plugin as the runtime keeps it. */
export interface PluginRecord {
  readonly plugin: Plugin;
  // Registration order, so a subset of plugins can be put back in that order without a scan.
  readonly seq: number;
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
  // What the current activation installed, for a live refresh to replace: kept only for a plugin
  // with a liveVersion (the ledger holds everyone's contributions).
  capabilities: readonly Capability[];
  installed: readonly Contribution[];
  liveSeen: number | undefined;
  liveFailed: number | undefined;
  tickFault: boolean;
  source: string | undefined;
  // Set for a plugin registered with registerFailed: its code was never loaded, so activating
  // it only ever fails with this reason and never calls the stand-in's methods.
  loadFailure: string | undefined;
}

export const REGISTERED: PluginState = Object.freeze({ status: "registered" });
export const ACTIVE: PluginState = Object.freeze({ status: "active" });
export const DISABLED: PluginState = Object.freeze({ status: "disabled" });
// Shared empty lists: most plugins decline and fail nothing, and a thousand activations should
// not allocate a thousand empty arrays.
export const NO_FAILURES: readonly ResolutionError[] = Object.freeze([]);
export const NOTHING_DECLINED: readonly { name: string; reason: string }[] = Object.freeze([]);
export const NO_CAPABILITIES: readonly Capability[] = Object.freeze([]);
export const NO_CONTRIBUTIONS: readonly Contribution[] = Object.freeze([]);

/** A fresh record in the `registered` state. */
export function newRecord(
  plugin: Plugin,
  seq: number,
  source: string | undefined,
  loadFailure: string | undefined,
): PluginRecord {
  return {
    plugin,
    seq,
    state: REGISTERED,
    on: false,
    declined: NOTHING_DECLINED,
    failures: NO_FAILURES,
    scope: undefined,
    section: undefined,
    capabilities: NO_CAPABILITIES,
    installed: NO_CONTRIBUTIONS,
    liveSeen: undefined,
    liveFailed: undefined,
    tickFault: false,
    source,
    loadFailure,
  };
}

/**
 * A stand-in carrying what is known of a plugin whose code could not be loaded, for listings.
 * The runtime never calls it (see `loadFailure`), and it would refuse loudly if anything did.
 */
export function standInPlugin(failure: FailedPluginRegistration): Plugin {
  const reason = String(failure.reason);
  const version = typeof failure.version === "string" && isSemver(failure.version)
    ? failure.version
    : "0.0.0";
  const name = typeof failure.name === "string" && failure.name.trim() !== ""
    ? failure.name
    : String(failure.id);
  const refuse = (): never => {
    throw new AmberError(reason);
  };
  return {
    id: failure.id,
    version,
    name,
    ...(failure.category !== undefined ? { category: failure.category } : {}),
    ...(failure.description !== undefined ? { description: failure.description } : {}),
    initialize: refuse,
    shutdown: () => {},
    capabilities: refuse,
  };
}

/** Closes the record's scope, so a context the plugin kept cannot subscribe any more. */
export function closeScope(record: PluginRecord): void {
  record.scope?.close();
  record.scope = undefined;
}
