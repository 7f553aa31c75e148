/**
 * The plugin console: every plugin grouped by category, as the `plugins` panel and
 * `amber plugins list` show it.
 *
 * @module
 */

import { plainText } from "./plain_text.ts";
import type {
  BoundAxis,
  CapabilityBound,
  Contribution,
  DisablePlan,
  Plugin,
  PluginRecordView,
  PluginState,
} from "@amber/core";
import { describeIdBound, PluginCategory } from "@amber/core";
import { cellWidth, truncateToCells } from "@amber/core/cells";
import { padEndToCells } from "./text_table.ts";

const CATEGORY_ORDER: readonly string[] = [
  PluginCategory.Provider,
  PluginCategory.Tools,
  PluginCategory.Search,
  PluginCategory.Memory,
  PluginCategory.Ui,
  PluginCategory.Observability,
  PluginCategory.Other,
];

/**
 * A plugin state in words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeState } from "@amber/cli/console";
 * assert.equal(describeState({ status: "failed", reason: "boom" }), "failed: boom");
 * assert.equal(describeState({ status: "active" }), "active");
 * ```
 */
export function describeState(state: PluginState): string {
  return state.status === "failed" || state.status === "blocked"
    ? `${state.status}: ${plainText(state.reason)}`
    : state.status;
}

/**
 * Contributions counted by kind, each id they install once: `1 tool, 1 command`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeContributions } from "@amber/cli/console";
 * assert.equal(describeContributions([]), "nothing");
 * const tool = { kind: "tool", name: "greet" } as never;
 * const command = { kind: "command", name: "hello" } as never;
 * assert.equal(describeContributions([tool, tool, command]), "2 tools, 1 command");
 * const server = { kind: "tool", name: "tools", ids: ["mcp__a__x", "mcp__a__y", "mcp__a__z"] };
 * assert.equal(describeContributions([server as never]), "3 tools");
 * ```
 */
export function describeContributions(
  contributions: readonly (Pick<Contribution, "kind"> & { readonly ids?: readonly string[] })[],
): string {
  const counts = new Map<string, number>();
  // A contribution that installs several ids (an MCP server's tools) counts each of them.
  for (const c of contributions) {
    counts.set(c.kind, (counts.get(c.kind) ?? 0) + (c.ids?.length ?? 1));
  }
  const parts = [...counts].filter(([, n]) => n > 0);
  if (parts.length === 0) return "nothing";
  return parts.map(([kind, n]) => `${n} ${n === 1 ? kind : `${kind}s`}`).join(", ");
}

/**
 * Plugins grouped by category: the known categories in a fixed order, then each unknown one
 * under its own heading, alphabetically.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { groupByCategory } from "@amber/cli/console";
 * const view = (id: string, category?: string) => ({ plugin: { id, category } }) as never;
 * const groups = groupByCategory([view("zed", "zebras"), view("a", "tools"), view("b")]);
 * assert.deepEqual(groups.map((group) => group.category), ["tools", "other", "zebras"]);
 * ```
 */
export function groupByCategory(
  plugins: readonly PluginRecordView[],
): readonly { readonly category: string; readonly plugins: readonly PluginRecordView[] }[] {
  const groups = new Map<string, PluginRecordView[]>();
  for (const view of plugins) {
    const category = view.plugin.category?.trim() || PluginCategory.Other;
    const list = groups.get(category);
    if (list) list.push(view);
    else groups.set(category, [view]);
  }
  const rank = (c: string): number => {
    const i = CATEGORY_ORDER.indexOf(c);
    return i < 0 ? CATEGORY_ORDER.length : i;
  };
  return [...groups.keys()]
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((category) => ({ category, plugins: groups.get(category)! }));
}

/** Options of {@linkcode pluginConsoleLines}. */
export interface ConsoleLineOptions {
  /** Ends each line with the plugin's source ({@linkcode describeSource}). */
  readonly source?: boolean;
}

/**
 * Where a plugin came from: `bundled` for one built into the host, else the path or the
 * `npm:`/`jsr:` specifier it was added from.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeSource } from "@amber/cli/console";
 * assert.equal(describeSource({ source: "npm:amber-greeter" } as never), "npm:amber-greeter");
 * assert.equal(describeSource({} as never), "bundled");
 * ```
 */
export function describeSource(view: PluginRecordView): string {
  return view.source ?? "bundled";
}

/**
 * The console's lines for a width (in terminal cells): a heading per category, then a line per
 * plugin with its columns aligned, cut with an ellipsis where it would not fit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginConsoleLines } from "@amber/cli/console";
 * const view = (id: string, name: string) =>
 *   ({
 *     plugin: { id, name, version: "1.0.0", category: "tools" },
 *     state: { status: "active" },
 *     contributions: [],
 *   }) as never;
 * assert.deepEqual(pluginConsoleLines([], 80), ["(no plugins)"]);
 * assert.deepEqual(pluginConsoleLines([view("hi", "中文"), view("yo", "Yo")], 80), [
 *   "tools",
 *   "  hi  中文  1.0.0  active    nothing",
 *   "  yo  Yo    1.0.0  active    nothing",
 * ]);
 * assert.equal(pluginConsoleLines([view("hi", "中文")], 12)[1], "  hi  中文…");
 * ```
 */
export function pluginConsoleLines(
  plugins: readonly PluginRecordView[],
  width: number,
  options: ConsoleLineOptions = {},
): string[] {
  if (plugins.length === 0) return ["(no plugins)"];
  const lines: string[] = [];
  const idWidth = Math.max(...plugins.map((p) => p.plugin.id.length));
  // A name is anything its author chose (CJK, emoji): measured in cells, like the line.
  const nameWidth = Math.max(...plugins.map((p) => cellWidth(p.plugin.name)));
  const versionWidth = Math.max(...plugins.map((p) => p.plugin.version.length));
  const contributionWidth = options.source
    ? Math.max(...plugins.map((p) => describeContributions(p.contributions).length))
    : 0;
  for (const group of groupByCategory(plugins)) {
    lines.push(group.category);
    for (const view of group.plugins) {
      const contributions = describeContributions(view.contributions);
      const line = `  ${view.plugin.id.padEnd(idWidth)}  ${
        padEndToCells(view.plugin.name, nameWidth)
      }  ${view.plugin.version.padEnd(versionWidth)}  ${describeState(view.state).padEnd(8)}  ${
        options.source
          ? `${contributions.padEnd(contributionWidth)}  ${describeSource(view)}`
          : contributions
      }`;
      lines.push(truncateToCells(line, width));
    }
  }
  return lines;
}

/**
 * A plugin's requirements: `base *, ui ^1.0.0`, or `nothing`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeRequires } from "@amber/cli/console";
 * assert.equal(describeRequires({ requires: { base: "^1.0.0" } } as never), "base ^1.0.0");
 * assert.equal(describeRequires({} as never), "nothing");
 * ```
 */
export function describeRequires(plugin: Plugin): string {
  const entries = Object.entries(plugin.requires ?? {});
  return entries.length === 0
    ? "nothing"
    : entries.map(([id, range]) => `${id} ${range || "*"}`).join(", ");
}

/**
 * A bound's axes that admit something: `tools: exact [greet]; commands: exact [hello]`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exact } from "@amber/core";
 * import { describeBound } from "@amber/cli/console";
 * assert.equal(describeBound(undefined), "nothing (no bound declared)");
 * assert.equal(describeBound({ tools: exact("greet") }), "tools: exact [greet]");
 * ```
 */
export function describeBound(bound: CapabilityBound | undefined): string {
  if (bound === undefined) return "nothing (no bound declared)";
  const parts = (Object.keys(bound) as (BoundAxis | "phaseHooks")[])
    .filter((axis) => bound[axis] !== undefined)
    .map((axis) =>
      axis === "phaseHooks"
        ? `phaseHooks: [${bound.phaseHooks!.join(", ")}]`
        : `${axis}: ${describeIdBound(bound[axis])}`
    );
  return parts.length === 0 ? "nothing" : parts.join("; ");
}

/**
 * A plugin's config schema as compact JSON Schema, or `none`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeSchema } from "@amber/cli/console";
 * assert.equal(describeSchema({} as never), "none");
 * const input = () => ({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" });
 * const config = { "~standard": { vendor: "tiny", jsonSchema: { input } } };
 * assert.equal(describeSchema({ config } as never), '{"type":"object"}');
 * assert.equal(describeSchema({ config: { "~standard": { vendor: "tiny" } } } as never), "a tiny schema");
 * ```
 */
export function describeSchema(plugin: Plugin): string {
  const convert = plugin.config?.["~standard"].jsonSchema?.input;
  if (plugin.config === undefined) return "none";
  if (convert === undefined) return `a ${plugin.config["~standard"].vendor} schema`;
  try {
    const { $schema: _, ...schema } = convert({ target: "draft-2020-12" });
    return JSON.stringify(schema);
  } catch (error) {
    return `a schema that cannot describe itself (${(error as Error).message})`;
  }
}

/**
 * A disable plan in words: the plugins that would go, in order, each with the contributions it
 * would remove (kind, name and registry ids). `state` is the plugin's state now, for a plugin
 * that is not active and so removes nothing. A plan that strands dependents is described by
 * the `PluginDependentsError` a disable raises, not here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeDisablePlan } from "@amber/cli/console";
 * const plan = {
 *   pluginId: "base",
 *   cascade: true,
 *   stranded: [],
 *   plugins: [
 *     {
 *       pluginId: "app",
 *       reason: "dependent" as const,
 *       removes: [{ kind: "command" as const, name: "app", ids: ["app"] }],
 *     },
 *     {
 *       pluginId: "base",
 *       reason: "requested" as const,
 *       removes: [{ kind: "tool" as const, name: "tools", ids: ["read", "write"] }],
 *     },
 *   ],
 * };
 * assert.deepEqual(describeDisablePlan(plan, { status: "active" }), [
 *   "switching off base would switch off 2 plugins, in this order:",
 *   "  1. app (it requires base): 1 command",
 *   "       command 'app': app",
 *   "  2. base: 2 tools",
 *   "       tool 'tools': read, write",
 * ]);
 * assert.deepEqual(describeDisablePlan({ ...plan, plugins: [] }, { status: "disabled" }), [
 *   "base is disabled: switching it off removes nothing",
 * ]);
 * ```
 */
export function describeDisablePlan(plan: DisablePlan, state: PluginState): string[] {
  const id = plan.pluginId;
  if (plan.plugins.length === 0) {
    return [`${id} is ${describeState(state)}: switching it off removes nothing`];
  }
  const count = plan.plugins.length;
  const lines = [
    `switching off ${id} would switch off ${count} ${
      count === 1 ? "plugin" : "plugins"
    }, in this order:`,
  ];
  plan.plugins.forEach((step, i) => {
    const why = step.reason === "dependent" ? ` (it requires ${id})` : "";
    lines.push(`  ${i + 1}. ${step.pluginId}${why}: ${describeContributions(step.removes)}`);
    for (const removal of step.removes) {
      lines.push(`       ${removal.kind} '${removal.name}': ${removal.ids.join(", ")}`);
    }
  });
  return lines;
}
