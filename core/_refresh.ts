// Live re-resolution: at a step boundary, a plugin whose liveVersion() moved gets its
// contributions swapped for what capabilities() gives now, all or nothing.

import { installCapabilities } from "./_install.ts";
import { type LifecycleHost, sweep } from "./_lifecycle.ts";
import { NO_CONTRIBUTIONS, type PluginRecord } from "./_plugin_record.ts";
import type { Capability } from "./capability.ts";
import type { Contribution } from "./contribution.ts";
import { describeError } from "./errors.ts";
import type { UnwindFault } from "./ledger.ts";
import type { Registries } from "./registries.ts";
import type { RefreshReport } from "./runtime_types.ts";

/**
 * Re-resolves every active live plugin whose version moved since it was last resolved (or last
 * failed to be). `version` gives the environment version afterwards.
 */
export function refreshLive(host: LifecycleHost, version: () => number): RefreshReport {
  const refreshed: string[] = [];
  const failed: string[] = [];
  // A copy: a refresh re-adds nothing, but a plugin's own code runs in between.
  for (const record of [...host.live]) {
    if (record.state.status !== "active") continue;
    let live: number;
    try {
      live = record.plugin.liveVersion!();
    } catch (error) {
      host.diagnose({
        pluginId: record.plugin.id,
        where: "liveVersion",
        message: describeError(error),
        error,
      });
      continue;
    }
    if (live === record.liveSeen || live === record.liveFailed) continue;
    if (reinstall(host, record, live, version)) refreshed.push(record.plugin.id);
    else failed.push(record.plugin.id);
  }
  return { version: version(), refreshed, failed };
}

// The old contributions go first, so the new set is checked against everyone else exactly as at
// activation; if the new set fails, the old capabilities are installed again and the run keeps
// its environment.
function reinstall(
  host: LifecycleHost,
  record: PluginRecord,
  live: number,
  version: () => number,
): boolean {
  const { plugin } = record;
  const id = plugin.id;
  const { events, registries } = host;
  const before = toolsOf(record.installed, registries);
  const reject = (reason: string): boolean => {
    record.liveFailed = live;
    host.diagnose({ pluginId: id, where: "refresh", message: reason });
    if (events.has("refreshFailed")) {
      events.publish("refreshFailed", { pluginId: id, version: live, reason });
    }
    return false;
  };
  let capabilities: readonly Capability[];
  try {
    capabilities = plugin.capabilities();
  } catch (error) {
    return reject(`capabilities() failed: ${describeError(error)}`);
  }
  release(host, record);
  const scope = record.scope!;
  const outcome = installCapabilities(registries, id, capabilities, scope, plugin.bound);
  if (!outcome.ok) {
    // Released, the plugin has nothing in the registries: what a misbehaving registry kept of
    // the new set would otherwise block the old one from coming back.
    if (outcome.unclean) sweep(host, id, outcome.faults);
    const restored = installCapabilities(registries, id, record.capabilities, scope, plugin.bound);
    if (restored.ok) adopt(host, record, record.capabilities, restored.contributions);
    else {
      if (restored.unclean) sweep(host, id, restored.faults);
      // Nothing else can have taken the ids meanwhile (changes are serialized), so this only
      // happens when the plugin's previous capabilities no longer install either.
      host.diagnose({ pluginId: id, where: "refresh", message: restored.reason });
    }
    return reject(`version ${live}: ${outcome.reason}`);
  }
  adopt(host, record, capabilities, outcome.contributions);
  record.declined = outcome.declined;
  record.liveSeen = live;
  record.liveFailed = undefined;
  if (events.has("environmentChanged")) {
    const after = toolsOf(record.installed, registries);
    const added = [...after.keys()].filter((name) => !before.has(name));
    const removed = [...before.keys()].filter((name) => !after.has(name));
    const changed = [...after.keys()].filter((name) =>
      before.has(name) && before.get(name) !== after.get(name)
    );
    events.publish("environmentChanged", {
      pluginId: id,
      version: version(),
      added,
      removed,
      changed,
    });
  }
  return true;
}

// Takes out every contribution the plugin's capabilities installed (its subscriptions stay). A
// remove that threw may have left its entry behind, with the handle now forgotten: the owner's
// registries are swept, since nothing of the plugin should be in them any more.
function release(host: LifecycleHost, record: PluginRecord): void {
  const id = record.plugin.id;
  let faults: UnwindFault[] | undefined;
  for (let i = record.installed.length - 1; i >= 0; i--) {
    const contribution = record.installed[i];
    try {
      contribution.remove();
    } catch (error) {
      (faults ??= []).push({ contribution, error });
    }
    host.ledger.forget(id, contribution);
  }
  record.installed = NO_CONTRIBUTIONS;
  if (faults !== undefined) sweep(host, id, faults);
}

function adopt(
  host: LifecycleHost,
  record: PluginRecord,
  capabilities: readonly Capability[],
  contributions: Contribution[],
): void {
  for (const contribution of contributions) host.ledger.record(record.plugin.id, contribution);
  record.capabilities = capabilities;
  record.installed = contributions;
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
