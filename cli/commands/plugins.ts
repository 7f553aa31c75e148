/**
 * `amber plugins list|info|enable|disable|graph|add|update|remove`.
 *
 * @module
 */

import { loadModule } from "../lazy_modules.ts";
import { PluginCategory, PluginDependentsError, type PluginRecordView } from "@amber/core";
import { UsageError } from "../args.ts";
import { didYouMean } from "../did_you_mean.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { type Host, MCP_WAIT_MS } from "../host.ts";
import { readPluginLock } from "../plugin_lock.ts";
import {
  describeBound,
  describeContributions,
  describeDisablePlan,
  describeRequires,
  describeSchema,
  describeSource,
  describeState,
  pluginConsoleLines,
} from "../plugin_console.ts";

/** `amber plugins`. */
export const pluginsCommand: CliCommand = {
  name: "plugins",
  usage: `  plugins list                    every plugin, grouped by category
  plugins info <id>               one plugin: state, failure reason, requirements, bound,
                                  config schema, contributions
  plugins enable|disable <id>     switch a plugin on or off (persisted); --cascade also
                                  switches off the active plugins that require it
  plugins disable <id> --dry-run  print, changing nothing, the plugins that would go, in
                                  order, and every contribution each would remove
                                  (--cascade too; --json prints the plan as JSON)
                                  (an MCP server's plugin, mcp.NAME: connects it first)
  plugins graph                   the activation order, with each plugin's requirements
  plugins add <spec>              add a third-party plugin: a .ts/.js file or a directory,
                                  npm:<pkg>[@range] or jsr:@scope/pkg; it runs in a process
                                  of its own with only the permissions granted to it: shows
                                  what its manifest asks for and asks (--grant grants it);
                                  records in plugins.lock.json the grant, the sha256 of every
                                  local file it imports and its npm packages' integrity
  plugins add <spec> --trusted    run it inside amber with all of amber's permissions instead
  plugins update <id>             record an added plugin's files as they are now (accepts a
                                  changed source), saying what changed; a version that asks
                                  for more permissions needs --grant (or a yes)
  plugins remove <id>             drop an added plugin (its plugin.conf stays)`,
  flags: ["cascade", "dry-run", "json", "grant", "trusted"],
  run: plugins,
};

async function plugins(context: CommandContext): Promise<number> {
  const { io } = context;
  // Before the host opens: adding a plugin must not run the recorded ones first. The sandbox
  // and the lock's writers load only for the verbs that use them, not for a list.
  if (context.words[0] === "add") {
    return await (await loadModule<typeof import("./plugins_add.ts")>("./commands/plugins_add.ts"))
      .addPlugin(context);
  }
  if (context.words[0] === "update") {
    return await (await loadModule<typeof import("./plugins_add.ts")>("./commands/plugins_add.ts"))
      .updatePlugin(context);
  }
  const { switches } = context.parsed;
  if (switches.has("grant") || switches.has("trusted")) {
    const flag = switches.has("grant") ? "--grant" : "--trusted";
    throw new UsageError(`${flag} goes with plugins add${flag === "--grant" ? " or update" : ""}`);
  }
  if (context.words[0] === "remove") {
    return await (await loadModule<typeof import("./plugins_add.ts")>("./commands/plugins_add.ts"))
      .removePlugin(context);
  }
  const cascade = switches.has("cascade");
  const dryRun = switches.has("dry-run");
  const json = dryRun && switches.has("json");
  const [verb, id, ...extra] = context.words;
  // An MCP server's contributions are known once it is connected: the dry run of one connects
  // the servers first (and puts what they offer in place), as a session would.
  const mcpDryRun = dryRun && verb === "disable" && id?.startsWith("mcp.") === true;
  const host = await context.host(mcpDryRun ? { mcp: { connect: true } } : undefined);
  if (mcpDryRun && host.mcp !== undefined) {
    await host.mcp.ready(MCP_WAIT_MS);
    host.runtime.refresh();
  }
  if (dryRun && verb !== "disable") throw new UsageError("--dry-run goes with plugins disable");
  if (switches.has("json") && !dryRun) {
    throw new UsageError("--json goes with plugins disable --dry-run");
  }
  const verbs = ["list", "info", "enable", "disable", "graph", "add", "update", "remove"];
  if (verb === undefined || verb === "list") {
    if (id !== undefined) throw new UsageError("plugins list takes no arguments");
    const views = await withTrust(host, host.runtime.list());
    io.out(pluginConsoleLines(views, Number.MAX_SAFE_INTEGER, { source: true }).join("\n"));
    return 0;
  }
  if (!verbs.includes(verb)) {
    throw new UsageError(
      `unknown plugins command '${verb}'${didYouMean(verb, verbs)}; commands: ${verbs.join(", ")}`,
    );
  }
  if (verb === "graph") {
    if (id !== undefined) throw new UsageError("plugins graph takes no arguments");
    io.out(graphLines(host).join("\n"));
    return 0;
  }
  if (id === undefined || extra.length > 0) {
    throw new UsageError(`usage: amber plugins ${verb} <id>`);
  }
  if (verb === "info") {
    const [info] = await withTrust(host, [host.runtime.info(id)]);
    const { plugin } = info;
    const lines = [
      `${plugin.id} ${plugin.version}: ${plugin.name}`,
      ...(plugin.description ? [`  ${plugin.description}`] : []),
      `  category: ${plugin.category?.trim() || "other"}`,
      `  source: ${describeSource(info)}`,
      `  state: ${describeState(info.state)}`,
      `  requires: ${describeRequires(plugin)}`,
      `  bound: ${describeBound(plugin.bound)}`,
      `  config: ${describeSchema(plugin)}`,
      `  contributions: ${describeContributions(info.contributions)}`,
      ...info.contributions.map((c) => `    ${c.kind} '${c.name}': ${c.ids.join(", ")}`),
      ...info.declined.map((d) => `  declined '${d.name}': ${d.reason}`),
    ];
    io.out(lines.join("\n"));
    return 0;
  }
  if (cascade && verb !== "disable") throw new UsageError("--cascade goes with plugins disable");
  if (dryRun) return dryRunDisable(host, id, cascade, json, io);
  const result = await host.runtime.setState(id, verb === "enable", { cascade });
  for (const other of result.cascaded) io.out(`${other}: switched off first (it requires ${id})`);
  io.out(`${id}: ${describeState(result.state)}${result.path ? ` (saved to ${result.path})` : ""}`);
  for (const other of result.unblocked) io.out(`${other}: active (it was waiting for ${id})`);
  return result.state.status === "failed" ? 1 : 0;
}

// The plan a real disable would carry out, computed by the same call, with nothing changed. A
// disable that would strand dependents fails here as it would for real (exit 1, the same words);
// with --json the plan is printed first, its `stranded` saying why.
function dryRunDisable(
  host: Host,
  id: string,
  cascade: boolean,
  json: boolean,
  io: CommandContext["io"],
): number {
  const plan = host.runtime.planDisable(id, { cascade });
  if (json) io.out(JSON.stringify(plan, null, 2));
  if (plan.stranded.length > 0) throw new PluginDependentsError(id, plan.stranded);
  if (!json) {
    io.out(
      [...describeDisablePlan(plan, host.runtime.state(id)), "(dry run: nothing was changed)"].join(
        "\n",
      ),
    );
  }
  return 0;
}

function graphLines(host: Host): string[] {
  const order = host.runtime.order();
  const width = Math.max(0, ...order.map((id) => id.length));
  const lines = order.map((id, i) => {
    const { plugin, state } = host.runtime.info(id);
    return `${String(i + 1).padStart(3)}. ${id.padEnd(width)}  ${plugin.version.padEnd(8)}  ${
      describeState(state).padEnd(8)
    }  requires ${describeRequires(plugin)}`;
  });
  const outside = host.runtime.list().filter((view) => !order.includes(view.plugin.id));
  if (outside.length > 0) {
    lines.push("not in the order:");
    for (const view of outside) lines.push(`     ${view.plugin.id}: ${describeState(view.state)}`);
  }
  return lines;
}

// An added plugin's source with where it runs: `(sandboxed)` in a process of its own, or
// `(trusted)` inside amber, as the lock records it.
async function withTrust(
  host: Host,
  views: readonly PluginRecordView[],
): Promise<PluginRecordView[]> {
  // An MCP server's plugin has a source too (the file that declares it), but no lock entry.
  if (views.every((view) => view.source === undefined || isMcp(view))) return [...views];
  let trusted: ReadonlySet<string>;
  try {
    const { plugins } = await readPluginLock(host.configDir);
    trusted = new Set(plugins.filter((e) => e.trusted === true).map((e) => e.id));
  } catch {
    // The host has already said what is wrong with the lock.
    return [...views];
  }
  return views.map((view) =>
    view.source === undefined || isMcp(view) ? view : {
      ...view,
      source: `${view.source} (${trusted.has(view.plugin.id) ? "trusted" : "sandboxed"})`,
    }
  );
}

function isMcp(view: PluginRecordView): boolean {
  return view.plugin.category === PluginCategory.Mcp && view.plugin.id.startsWith("mcp.");
}
