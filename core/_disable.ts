// A disable as a plan and its execution: one function decides which plugins go and what each
// removes, another carries exactly that out. A dry run shows the first's result; a real disable
// runs the second on it, so the two cannot drift apart.

import type { DependencyIndex } from "./_dependency_index.ts";
import { deactivate, type LifecycleHost } from "./_lifecycle.ts";
import type { PluginRecord } from "./_plugin_record.ts";
import type { DisablePlan, PlannedRemoval, PlannedSwitchOff } from "./disable_plan.ts";
import type { PluginLedger } from "./ledger.ts";

/** Which plugins switching `record` off takes down, and what each one's ledger unwinds. */
export function planDisable(
  index: DependencyIndex,
  ledger: PluginLedger,
  record: PluginRecord,
  cascade: boolean,
): DisablePlan {
  const pluginId = record.plugin.id;
  if (record.state.status !== "active") return { pluginId, cascade, plugins: [], stranded: [] };
  const dependents = index.activeDependents(pluginId);
  if (dependents.length > 0 && !cascade) {
    return { pluginId, cascade, plugins: [], stranded: dependents };
  }
  const plugins: PlannedSwitchOff[] = dependents.map((id) => switchOff(ledger, id, "dependent"));
  plugins.push(switchOff(ledger, pluginId, "requested"));
  return { pluginId, cascade, plugins, stranded: [] };
}

function switchOff(
  ledger: PluginLedger,
  pluginId: string,
  reason: PlannedSwitchOff["reason"],
): PlannedSwitchOff {
  const contributions = ledger.contributions(pluginId);
  const removes: PlannedRemoval[] = [];
  // The ledger unwinds newest first: the plan lists them in that order.
  for (let i = contributions.length - 1; i >= 0; i--) {
    const { kind, name, ids } = contributions[i];
    removes.push({ kind, name, ids: [...ids] });
  }
  return { pluginId, reason, removes };
}

/**
 * Switches off, in the plan's order, every plugin of `plan` that is still active. Returns the
 * dependents it switched off, in that order.
 */
export async function applyDisable(
  lifecycle: LifecycleHost,
  records: ReadonlyMap<string, PluginRecord>,
  plan: DisablePlan,
): Promise<string[]> {
  const cascaded: string[] = [];
  for (const step of plan.plugins) {
    const record = records.get(step.pluginId)!;
    if (record.state.status !== "active") continue;
    const pending = deactivate(lifecycle, record);
    if (pending !== undefined) await pending;
    if (step.reason === "dependent") cascaded.push(step.pluginId);
  }
  return cascaded;
}
