// The runtime-wide transitions (awaiting a lifecycle step only when it returned a promise: see
// the measured fast path in _lifecycle.ts): start every plugin that is on, switch one plugin on
// or off (and what that unblocks or cascades to), and stop everything. Each plugin's own
// activation and deactivation is `_lifecycle.ts`; a switch-off is the disable plan of
// `_disable.ts`, carried out; which plugins a switch touches comes from the dependency index,
// so a switch looks only at the plugin and the plugins that require it.

import type { DependencyIndex } from "./_dependency_index.ts";
import { applyDisable, planDisable } from "./_disable.ts";
import {
  activateIfReady,
  block,
  blockCascaded,
  deactivate,
  type LifecycleHost,
} from "./_lifecycle.ts";
import { DISABLED, NO_FAILURES, type PluginRecord, REGISTERED } from "./_plugin_record.ts";
import { defaultOn, readOn, stateFolders, writeOn } from "./_state_io.ts";
import type { PluginState } from "./plugin.ts";
import {
  type Diagnostic,
  PluginDependentsError,
  type SetStateOptions,
  type SetStateResult,
} from "./runtime_types.ts";

/** What the transitions need of the runtime. */
export interface TransitionHost {
  readonly records: ReadonlyMap<string, PluginRecord>;
  readonly index: DependencyIndex;
  readonly lifecycle: LifecycleHost;
  readonly configDir: string | undefined;
  readonly allOn: boolean;
  readonly diagnose: (diagnostic: Diagnostic) => void;
}

/** How many `plugin.conf` files a start reads at once. */
const STATE_READS = 32;

/** Reads every registered plugin's state, then activates the ones that are on, in order. */
export async function startAll(host: TransitionHost): Promise<void> {
  const { index, records, configDir } = host;
  await index.prepare();
  const order = index.order();
  const registered = [...records.values()].filter((r) => r.state.status === "registered");
  // The plugins' `plugin.conf` files (most of them absent) are read STATE_READS at a time: one
  // after another, the start waited on each. What a read reports is said in registration order.
  const said = registered.map((): Diagnostic[] => []);
  const on: boolean[] = [];
  const folders = configDir === undefined ? undefined : await stateFolders(configDir);
  for (let first = 0; first < registered.length; first += STATE_READS) {
    on.push(
      ...await Promise.all(
        registered.slice(first, first + STATE_READS).map((record, k) =>
          configDir === undefined || folders?.has(record.plugin.id) === false
            ? defaultOn(host.allOn, record.plugin)
            : readOn(configDir, host.allOn, record.plugin, (d) => said[first + k].push(d))
        ),
      ),
    );
  }
  for (const [i, record] of registered.entries()) {
    for (const diagnostic of said[i]) host.diagnose(diagnostic);
    record.on = on[i];
    const failure = index.failure(record.plugin.id);
    if (failure === undefined) continue;
    if (!record.on) record.state = DISABLED;
    else block(record, failure, failure.rule === "dependency-cycle");
  }
  for (const id of order) {
    const record = records.get(id)!;
    if (record.state.status !== "registered") continue;
    if (!record.on) record.state = DISABLED;
    else {
      const pending = activateIfReady(host.lifecycle, record);
      if (pending !== undefined) await pending;
    }
  }
}

/** Persists and applies `on` for `record`; see `PluginRuntime.setState`. */
export async function switchPlugin(
  host: TransitionHost,
  record: PluginRecord,
  on: boolean,
  options: SetStateOptions,
): Promise<SetStateResult> {
  const { index, records, lifecycle } = host;
  const id = record.plugin.id;
  // A switch-off is decided in full before anything changes, and then carried out as planned.
  const plan = on ? undefined : planDisable(index, lifecycle.ledger, record, !!options.cascade);
  if (plan !== undefined && plan.stranded.length > 0) {
    throw new PluginDependentsError(id, plan.stranded);
  }
  const written = await writeOn(host.configDir, id, on, host.diagnose);
  record.on = on;
  const cascaded = plan === undefined ? [] : await applyDisable(lifecycle, records, plan);
  if (on && record.state.status !== "active") {
    await index.prepare();
    const failure = index.failure(id);
    if (failure !== undefined) block(record, failure, failure.rule === "dependency-cycle");
    else {
      const pending = activateIfReady(lifecycle, record);
      if (pending !== undefined) await pending;
    }
  }
  if (!on) {
    record.state = DISABLED;
    record.failures = NO_FAILURES;
  }
  // What was waiting on this plugin (or on something it unblocks) gets its chance now; only a
  // plugin that requires it can have been waiting for it.
  const unblocked: string[] = [];
  for (const waiting of index.waitingOn(id)) {
    if (!waiting.on || waiting.state.status !== "blocked") continue;
    const pending = activateIfReady(lifecycle, waiting);
    if (pending !== undefined) await pending;
    if ((waiting.state as PluginState).status === "active") unblocked.push(waiting.plugin.id);
  }
  // Switched off for this plugin's sake, they stay on in their own files: blocked until it
  // comes back.
  blockCascaded(records, cascaded);
  return { state: record.state, ...written, cascaded, unblocked };
}

/** Deactivates every active plugin, dependents first; every plugin is `registered` after. */
export async function stopAll(host: TransitionHost): Promise<void> {
  const { records } = host;
  let sequence = host.index.settled();
  if (sequence === undefined || sequence.length !== records.size) {
    // Some plugins are left out of the order (or it is not settled): they go first.
    const ids = [...records.keys()];
    const ordered = new Set(sequence ?? ids);
    sequence = [...(sequence ?? ids), ...ids.filter((id) => !ordered.has(id))];
  }
  for (let i = sequence.length - 1; i >= 0; i--) {
    const record = records.get(sequence[i])!;
    if (record.state.status === "active") {
      const pending = deactivate(host.lifecycle, record);
      if (pending !== undefined) await pending;
    }
    record.state = REGISTERED;
    record.failures = NO_FAILURES;
  }
}
