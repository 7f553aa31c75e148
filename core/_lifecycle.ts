// Activating and deactivating one plugin: decode its config section, initialize it, install its
// capabilities and ledger them; on the way out (or on any failure) shut it down and unwind what
// it contributed. Nothing the plugin throws, rejects or hangs on escapes: it becomes the
// plugin's `failed` state and a diagnostic.

import { installCapabilities } from "./_install.ts";
import {
  ACTIVE,
  closeScope,
  DISABLED,
  NO_CAPABILITIES,
  NO_CONTRIBUTIONS,
  NO_FAILURES,
  NOTHING_DECLINED,
  type PluginRecord,
} from "./_plugin_record.ts";
import { PluginScope, type ScopeHost } from "./_plugin_scope.ts";
import type { Capability } from "./capability.ts";
import type { AmberConfig } from "./config.ts";
import { describeError } from "./errors.ts";
import { DeadlineError, withDeadline } from "./limits.ts";
import type { EventBus } from "./event_bus.ts";
import type { PluginLedger, UnwindFault } from "./ledger.ts";
import { type DecodedSection, decodePluginConfig } from "./plugin_config.ts";
import type { Registries } from "./registries.ts";
import type { OwnedRegistry } from "./registry.ts";
import { ResolutionError } from "./resolution_error.ts";
import type { Diagnostic } from "./runtime_types.ts";

/** What the lifecycle needs of its runtime. */
export interface LifecycleHost {
  readonly registries: Registries;
  readonly registryList: readonly OwnedRegistry<unknown>[];
  readonly ledger: PluginLedger;
  readonly events: EventBus;
  readonly scopeHost: ScopeHost;
  readonly records: ReadonlyMap<string, PluginRecord>;
  // Active plugins with a liveVersion, in activation order, for refresh to poll.
  readonly live: Set<PluginRecord>;
  readonly timeoutMs: number;
  // The deadline of plugin `id`'s initialize: `timeoutFor(config, "initialize", id)`, unless the
  // runtime was given a fixed one.
  initializeTimeout(id: string): number;
  config(): AmberConfig;
  diagnose(diagnostic: Diagnostic): void;
}

// Measured fast path (bench/runtime_bench.ts, the cycle at 1,000 plugins: start 20-40% and
// stop 30% slower when every step awaited): the lifecycle returns a promise only when the
// plugin's own code (an async schema, initialize or shutdown) returned one, so a harness of
// synchronous plugins activates and deactivates without a promise per plugin.

/**
 * Activates `record` if every plugin it requires is active; otherwise marks it `blocked` and
 * says which requirement is missing. Returns a promise only when something had to be awaited.
 */
export function activateIfReady(host: LifecycleHost, record: PluginRecord): Promise<void> | void {
  if (record.loadFailure !== undefined) {
    return failed(host, record, record.loadFailure, undefined, [], "load");
  }
  const problem = requirementProblem(host.records, record);
  if (problem !== undefined) return block(record, problem, false);
  const decoded = decodePluginConfig(record.plugin, host.config().plugins[record.plugin.id]);
  if (decoded instanceof Promise) return decoded.then((result) => initialize(host, record, result));
  return initialize(host, record, decoded);
}

function initialize(
  host: LifecycleHost,
  record: PluginRecord,
  decoded: DecodedSection,
): Promise<void> | void {
  if (!decoded.ok) {
    const reason = decoded.errors.map((error) => error.message).join("; ");
    return fail(host, record, reason, undefined, false, decoded.errors);
  }
  record.section = decoded.value;
  const { plugin } = record;
  record.declined = NOTHING_DECLINED;
  record.failures = NO_FAILURES;
  const scope = new PluginScope(plugin.id, host.scopeHost);
  record.scope = scope;
  let ready: unknown;
  try {
    ready = plugin.initialize(scope);
  } catch (error) {
    return fail(host, record, `initialize failed: ${describeError(error)}`, error, false);
  }
  if (isThenable(ready)) return initializeLater(host, record, scope, ready);
  if (ready !== true) return fail(host, record, "initialize returned false", undefined, false);
  return install(host, record, scope);
}

async function initializeLater(
  host: LifecycleHost,
  record: PluginRecord,
  scope: PluginScope,
  pending: PromiseLike<unknown>,
): Promise<void> {
  let ready: unknown;
  try {
    const id = record.plugin.id;
    const ms = host.initializeTimeout(id);
    ready = await withDeadline(() => pending, ms, `plugin '${id}': initialize`);
  } catch (error) {
    return fail(host, record, `initialize failed: ${describeError(error)}`, error, false);
  }
  if (ready !== true) return fail(host, record, "initialize returned false", undefined, false);
  return install(host, record, scope);
}

// Nothing here waits (a failure may, to shut the plugin down), so it is not itself async.
function install(
  host: LifecycleHost,
  record: PluginRecord,
  scope: PluginScope,
): Promise<void> | void {
  const { plugin } = record;
  const id = plugin.id;
  let capabilities: readonly Capability[];
  try {
    capabilities = plugin.capabilities();
  } catch (error) {
    return fail(host, record, `capabilities() failed: ${describeError(error)}`, error, true);
  }
  let live: number | undefined;
  if (plugin.liveVersion !== undefined) {
    try {
      live = plugin.liveVersion();
    } catch (error) {
      return fail(host, record, `liveVersion() failed: ${describeError(error)}`, error, true);
    }
  }
  const outcome = installCapabilities(host.registries, id, capabilities, scope, plugin.bound);
  if (!outcome.ok) {
    // Nothing of this plugin is in a registry before its activation, so whatever a misbehaving
    // registry kept of it can go.
    if (outcome.unclean) sweep(host, id, outcome.faults);
    const failures = outcome.failure ? [outcome.failure] : [];
    return fail(host, record, outcome.reason, undefined, true, failures);
  }
  const contributions = outcome.contributions;
  // The ledger takes over the array it is given; only a live refresh reads the record's own
  // list, so only a plugin with a liveVersion gets a copy (measured: one array per plugin was
  // a visible share of the cycle of bench/runtime_bench.ts).
  host.ledger.recordAll(id, contributions);
  record.capabilities = live === undefined ? NO_CAPABILITIES : capabilities;
  record.installed = live === undefined ? NO_CONTRIBUTIONS : contributions.slice();
  record.declined = outcome.declined.length === 0 ? NOTHING_DECLINED : outcome.declined;
  record.liveSeen = live;
  record.liveFailed = undefined;
  if (live !== undefined) host.live.add(record);
  record.state = ACTIVE;
  record.tickFault = false;
  if (host.events.has("pluginEnabled")) host.events.publish("pluginEnabled", { id });
}

/**
 * Shuts an active plugin down and unwinds its contributions; it is `disabled` afterwards.
 * Returns a promise only when the plugin's `shutdown` did.
 */
export function deactivate(host: LifecycleHost, record: PluginRecord): Promise<void> | void {
  closeScope(record);
  const pending = shutdown(host, record);
  if (pending !== undefined) return pending.then(() => deactivated(host, record));
  deactivated(host, record);
}

function deactivated(host: LifecycleHost, record: PluginRecord): void {
  unwind(host, record);
  record.state = DISABLED;
  const id = record.plugin.id;
  if (host.events.has("pluginDisabled")) host.events.publish("pluginDisabled", { id });
}

/** Why `record` cannot activate now because of a requirement, or undefined when it can. */
export function requirementProblem(
  records: ReadonlyMap<string, PluginRecord>,
  record: PluginRecord,
): ResolutionError | undefined {
  const requires = record.plugin.requires;
  if (requires === undefined) return undefined;
  for (const dependency in requires) {
    const other = records.get(dependency);
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

/** Marks `record` blocked (or failed, for a `broken` requirement such as a cycle). */
export function block(record: PluginRecord, failure: ResolutionError, broken: boolean): void {
  record.failures = [failure];
  record.state = broken
    ? { status: "failed", reason: failure.message }
    : { status: "blocked", reason: failure.message };
}

/**
 * Blocks each of `ids` (plugins switched off along with one they require, which stay on in their
 * own files) on the requirement that is now missing, so each says why it waits.
 */
export function blockCascaded(
  records: ReadonlyMap<string, PluginRecord>,
  ids: readonly string[],
): void {
  for (const id of ids) {
    const record = records.get(id)!;
    const problem = requirementProblem(records, record);
    if (problem !== undefined) block(record, problem, false);
  }
}

/**
 * Unwinds every contribution of `record`. A remove that threw may have left entries behind:
 * they are purged and reported, so a disable is clean whatever went wrong. Without a fault
 * nothing is swept, since a plugin never reaches a registry except through the handles the
 * ledger just used.
 */
export function unwind(host: LifecycleHost, record: PluginRecord): void {
  const id = record.plugin.id;
  record.installed = NO_CONTRIBUTIONS;
  record.capabilities = NO_CAPABILITIES;
  host.live.delete(record);
  const faults = host.ledger.unwind(id);
  if (faults.length > 0) sweep(host, id, faults);
}

/**
 * Reports the `remove` faults of plugin `id` and purges whatever its registries still hold of
 * it: the safety net under a disable, a failed activation and a live refresh whose handles did
 * not take everything back. Call it only when nothing of `id` should be in any registry.
 */
export function sweep(host: LifecycleHost, id: string, faults: readonly UnwindFault[]): void {
  for (const fault of faults) {
    host.diagnose({
      pluginId: id,
      where: `remove of '${fault.contribution.name}'`,
      message: describeError(fault.error),
      error: fault.error,
    });
  }
  for (const registry of host.registryList) {
    const left = registry.purge(id);
    if (left.length > 0) {
      host.diagnose({
        pluginId: id,
        where: "unwind",
        message: `purged what its contributions left behind: ${left.join(", ")}`,
      });
    }
  }
}

// Fails an activation: the plugin may hold resources from initialize, so once initialized it
// gets the chance to release them.
function fail(
  host: LifecycleHost,
  record: PluginRecord,
  reason: string,
  error: unknown,
  initialized: boolean,
  failures: readonly ResolutionError[] = [],
): Promise<void> | void {
  closeScope(record);
  const pending = initialized ? shutdown(host, record) : undefined;
  if (pending !== undefined) {
    return pending.then(() => failed(host, record, reason, error, failures));
  }
  failed(host, record, reason, error, failures);
}

function failed(
  host: LifecycleHost,
  record: PluginRecord,
  reason: string,
  error: unknown,
  failures: readonly ResolutionError[],
  where = "activation",
): void {
  const id = record.plugin.id;
  unwind(host, record);
  record.declined = [];
  record.failures = failures;
  record.state = { status: "failed", reason };
  host.diagnose({ pluginId: id, where, message: reason, error });
  host.events.publish("pluginFailed", { id, reason });
}

// A promise only when the plugin's shutdown returned one; what it throws or rejects is reported.
function shutdown(host: LifecycleHost, record: PluginRecord): Promise<void> | undefined {
  const id = record.plugin.id;
  const report = (error: unknown): void => {
    // A deadline reads as itself ("plugin 'x': shutdown did not finish within N ms").
    const message = error instanceof DeadlineError ? error.message : describeError(error);
    host.diagnose({ pluginId: id, where: "shutdown", message, error });
  };
  try {
    const done = record.plugin.shutdown();
    if (isThenable(done)) {
      return withDeadline(() => done, host.timeoutMs, `plugin '${id}': shutdown`).then(
        () => {},
        report,
      );
    }
  } catch (error) {
    report(error);
  }
  return undefined;
}

/** Whether `value` has a `then` method. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}

/**
 * Decodes an active plugin's config section again, from the configuration the host attached; a
 * section that no longer decodes is reported and the plugin keeps the value it had.
 */
export function redecode(host: LifecycleHost, record: PluginRecord): void {
  if (record.state.status !== "active" || record.plugin.config === undefined) return;
  const id = record.plugin.id;
  const decoded = decodePluginConfig(record.plugin, host.config().plugins[id]);
  const apply = (result: DecodedSection): void => {
    if (result.ok) record.section = result.value;
    else {
      for (const error of result.errors) {
        host.diagnose({ pluginId: id, where: "config", message: error.message });
      }
    }
  };
  if (decoded instanceof Promise) decoded.then(apply);
  else apply(decoded);
}
