/**
 * The `plugins` panel: the plugin console, where ↑↓ select a plugin and Enter (or Space)
 * switches it on or off. Above the list, the selected plugin's contributions (its tools,
 * commands, prompt blocks, status segments, panels, presets..., by id), what it requires and
 * the plugins that require it. Switching one off first shows the runtime's disable plan (the
 * plugins that would go, in order, its dependents first, and every contribution each would
 * remove) and waits for `y`; the switch then carries out that same plan. If the plan changed in
 * the meantime, the new one is shown and asked about instead.
 *
 * @module
 */

import type {
  DisablePlan,
  PanelCapability,
  PluginRecordView,
  PluginRuntime,
  SetStateResult,
} from "@amber/core";
import { truncateToCells } from "@amber/core/cells";
import {
  describeContributions,
  describeDisablePlan,
  describeRequires,
  describeState,
  groupByCategory,
  pluginConsoleLines,
} from "./plugin_console.ts";

// Where the panel is: browsing the list, or asking about a plan.
interface PanelState {
  selected: string | undefined;
  asking: DisablePlan | undefined;
  message: string | undefined;
  busy: boolean;
}

/**
 * The plugin console as a panel over `runtime`. Until a plugin is selected its lines are
 * {@linkcode pluginConsoleLines}'s; keys it does not use (PgUp, PgDn, Home, End) scroll. The
 * selected plugin's line starts with `›`, which the host's panel view keeps on the page however
 * long the list is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { any, PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { pluginConsolePanel } from "./plugin_panel.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * runtime.register({
 *   id: "style",
 *   version: "1.0.0",
 *   name: "Style",
 *   bound: { prompts: any() },
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [{ kind: "prompt", name: "brief", priority: 400, render: () => "Brief." }],
 * });
 * await runtime.start();
 * const panel = pluginConsolePanel(runtime);
 * assert.equal(panel.onKey!("down"), true);
 * assert.deepEqual(panel.lines(80).slice(0, 3), [
 *   "↑↓ select · Enter switch style off",
 *   "style (Style 1.0.0, active) · contributes 1 prompt",
 *   "  prompt: brief",
 * ]);
 * assert.equal(panel.onKey!(" "), true, "Space switches too");
 * assert.deepEqual(panel.lines(80), [
 *   "Switch off style?",
 *   "",
 *   "switching off style would switch off 1 plugin, in this order:",
 *   "  1. style: 1 prompt",
 *   "       prompt 'brief': brief",
 *   "",
 *   "y switch it off · n keep it",
 * ]);
 * assert.equal(runtime.state("style").status, "active", "nothing happens before the answer");
 * panel.onKey!("y");
 * await new Promise((resolve) => setTimeout(resolve, 0));
 * assert.equal(runtime.state("style").status, "disabled");
 * assert.equal(panel.lines(80)[1], "style: disabled");
 * ```
 */
export function pluginConsolePanel(runtime: PluginRuntime): PanelCapability {
  const state: PanelState = {
    selected: undefined,
    asking: undefined,
    message: undefined,
    busy: false,
  };
  return {
    kind: "panel",
    name: "plugins",
    id: "plugins",
    title: "Plugins",
    lines: (width) => panelLines(runtime, state, width),
    onKey: (key) => panelKey(runtime, state, key),
  };
}

function panelLines(runtime: PluginRuntime, state: PanelState, width: number): string[] {
  if (state.asking !== undefined) {
    const plan = state.asking;
    return [
      `Switch off ${plan.pluginId}?`,
      ...(state.message !== undefined ? [state.message] : []),
      "",
      ...describeDisablePlan(plan, runtime.state(plan.pluginId)),
      "",
      "y switch it off · n keep it",
    ].map((line) => truncateToCells(line, width));
  }
  const views = runtime.list();
  const list = pluginConsoleLines(views, width);
  const selected = views.find((view) => view.plugin.id === state.selected);
  if (selected === undefined) return list;
  // The list's lines are a heading per category, then a line per plugin, in display order.
  let line = 0;
  for (const group of groupByCategory(views)) {
    line++;
    const at = group.plugins.findIndex((view) => view.plugin.id === selected.plugin.id);
    if (at >= 0) {
      line += at;
      break;
    }
    line += group.plugins.length;
  }
  // The selection mark: the host keeps this line on the page, under the lines before the first
  // empty one (what Enter would do, the last outcome).
  list[line] = `›${list[line].slice(1)}`;
  const verb = selected.on ? "off" : "on";
  const header = state.busy
    ? `switching ${selected.plugin.id} ${verb}…`
    : `↑↓ select · Enter switch ${selected.plugin.id} ${verb}`;
  return [
    truncateToCells(header, width),
    ...(state.message !== undefined ? [truncateToCells(state.message, width)] : []),
    ...pluginDetails(selected, views).map((line) => truncateToCells(line, width)),
    "",
    ...list,
  ];
}

/**
 * What the console says of the selected plugin: its name, version and state, its contributions
 * counted, what it requires and the (switched on) plugins that require it, when there are any;
 * then a line per kind of contribution with the ids it installed (tool names, command roots,
 * panel ids...).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginDetails } from "./plugin_panel.ts";
 * const view = (id: string, requires: Record<string, string> | undefined, ids: string[]) =>
 *   ({
 *     plugin: { id, name: id.toUpperCase(), version: "1.0.0", requires },
 *     state: { status: "active" },
 *     on: true,
 *     contributions: ids.map((name) => ({ kind: "tool", name, ids: [name] })),
 *   }) as never;
 * const base = view("base", undefined, ["read", "write"]);
 * const app = view("app", { base: "*" }, []);
 * assert.deepEqual(pluginDetails(base, [base, app]), [
 *   "base (BASE 1.0.0, active) · contributes 2 tools · required by app",
 *   "  tool: read, write",
 * ]);
 * assert.equal(pluginDetails(app, [base, app])[0], "app (APP 1.0.0, active) · contributes nothing · requires base *");
 * ```
 */
export function pluginDetails(
  view: PluginRecordView,
  views: readonly PluginRecordView[],
): string[] {
  const { plugin } = view;
  const dependents = views.filter((other) =>
    other.on && Object.hasOwn(other.plugin.requires ?? {}, plugin.id)
  ).map((other) => other.plugin.id);
  const parts = [
    `${plugin.id} (${plugin.name} ${plugin.version}, ${describeState(view.state)})`,
    `contributes ${describeContributions(view.contributions)}`,
  ];
  if (Object.keys(plugin.requires ?? {}).length > 0) {
    parts.push(`requires ${describeRequires(plugin)}`);
  }
  if (dependents.length > 0) parts.push(`required by ${dependents.join(", ")}`);
  const lines = [parts.join(" · ")];
  const byKind = new Map<string, string[]>();
  for (const contribution of view.contributions) {
    const ids = byKind.get(contribution.kind) ?? [];
    ids.push(...(contribution.ids.length > 0 ? contribution.ids : [contribution.name]));
    byKind.set(contribution.kind, ids);
  }
  for (const [kind, ids] of byKind) lines.push(`  ${kind}: ${ids.join(", ")}`);
  return lines;
}

function panelKey(runtime: PluginRuntime, state: PanelState, key: string): boolean {
  if (state.asking !== undefined) {
    if (key === "y") confirm(runtime, state, state.asking);
    else {
      state.message = `kept ${state.asking.pluginId}`;
      state.asking = undefined;
    }
    return true;
  }
  if (key === "up" || key === "down") {
    const order = displayOrder(runtime.list());
    if (order.length === 0) return false;
    const at = state.selected === undefined ? -1 : order.indexOf(state.selected);
    const next = at < 0
      ? (key === "down" ? 0 : order.length - 1)
      : Math.max(0, Math.min(order.length - 1, at + (key === "down" ? 1 : -1)));
    state.selected = order[next];
    state.message = undefined;
    return true;
  }
  const toggle = key === "enter" || key === " " || key === "space";
  if (!toggle || state.selected === undefined || state.busy) return false;
  const id = state.selected;
  if (runtime.info(id).on) {
    state.asking = runtime.planDisable(id, { cascade: true });
    state.message = undefined;
  } else {
    apply(state, id, runtime.setState(id, true));
  }
  return true;
}

// Carries out the plan the user said yes to, unless it is no longer what a disable would do.
function confirm(runtime: PluginRuntime, state: PanelState, shown: DisablePlan): void {
  const id = shown.pluginId;
  const now = runtime.planDisable(id, { cascade: true });
  if (JSON.stringify(now) !== JSON.stringify(shown)) {
    state.asking = now;
    state.message = "the plan changed since it was shown; this is what would go now";
    return;
  }
  state.asking = undefined;
  apply(state, id, runtime.setState(id, false, { cascade: true }));
}

function apply(
  state: PanelState,
  id: string,
  switching: Promise<SetStateResult>,
): void {
  state.busy = true;
  state.message = undefined;
  switching.then(
    (result) => {
      const cascaded = result.cascaded.length > 0
        ? ` (switched off first: ${result.cascaded.join(", ")})`
        : "";
      state.message = `${id}: ${describeState(result.state)}${cascaded}`;
    },
    (error: unknown) => {
      state.message = `${id}: ${error instanceof Error ? error.message : String(error)}`;
    },
  ).finally(() => state.busy = false);
}

function displayOrder(views: readonly PluginRecordView[]): string[] {
  return groupByCategory(views).flatMap((group) => group.plugins.map((view) => view.plugin.id));
}
