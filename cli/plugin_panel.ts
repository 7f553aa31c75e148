/**
 * The `plugins` panel: the plugin console, where ↑↓ select a plugin and Enter switches it on or
 * off. Switching one off first shows the runtime's disable plan (the plugins that would go, in
 * order, and every contribution each would remove) and waits for `y`; the switch then carries
 * out that same plan. If the plan changed in the meantime, the new one is shown and asked about
 * instead.
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
  describeDisablePlan,
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
 * assert.equal(panel.onKey!("enter"), true);
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
    "",
    ...list,
  ];
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
  if (key !== "enter" || state.selected === undefined || state.busy) return false;
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
