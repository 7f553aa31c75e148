/**
 * The shell of a plugin whose only contribution is tools. The bundled tool plugins share it,
 * and an embedder's in-process plugin can use it the same way, with typed tools from
 * `defineTool` (`@amber/core`).
 *
 * @module
 */

import {
  type Capability,
  exact,
  type Plugin,
  PluginCategory,
  type PluginServices,
  type Tool,
} from "@amber/core";

/** What differs between two tool plugins. */
export interface ToolPluginSpec {
  /** The plugin id, `[a-z0-9_]+`. */
  readonly id: string;
  /** The display name. */
  readonly name: string;
  /** One line for the plugin list. */
  readonly description: string;
  /** A semver version; `0.1.0` unless given. */
  readonly version?: string;
  /**
   * The name of every tool it may contribute: its bound, so a tool it does not name fails
   * activation.
   */
  readonly tools: readonly [string, ...string[]];
  /** The name of its one tool capability; the first tool's name unless given. */
  readonly capability?: string;
  /**
   * Builds the tools from the harness services at each activation. An empty list declines the
   * capability (a host service it needs is missing) and the plugin stays active.
   */
  build(services: PluginServices): readonly Tool[];
}

/**
 * A tool plugin: category `tools`, on by default, one tool capability whose tools `build`
 * makes, bounded to exactly the tools it names, nothing to set up or release.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool } from "@amber/core";
 * import { toolPlugin } from "@amber/plugins/tool_plugin";
 *
 * const plugin = toolPlugin({
 *   id: "shout",
 *   name: "Shout",
 *   description: "The shout tool: text in capitals.",
 *   tools: ["shout"],
 *   build: () => [defineTool({
 *     name: "shout",
 *     description: "Return the text in capitals.",
 *     parameters: {
 *       type: "object",
 *       properties: { text: { type: "string" } },
 *       required: ["text"],
 *       additionalProperties: false,
 *     },
 *     readOnly: true,
 *     execute: (args) => ({ ok: true, output: args.text.toUpperCase() }),
 *   })],
 * });
 * assert.equal(plugin.category, "tools");
 * assert.deepEqual(plugin.bound, { tools: { kind: "exact", ids: ["shout"] } });
 * assert.deepEqual(plugin.capabilities().map((c) => `${c.kind}:${c.name}`), ["tool:shout"]);
 * ```
 */
export function toolPlugin(spec: ToolPluginSpec): Plugin {
  const capabilities: readonly Capability[] = Object.freeze([Object.freeze({
    kind: "tool",
    name: spec.capability ?? spec.tools[0],
    tools: (services: PluginServices) => spec.build(services),
  })]);
  return {
    id: spec.id,
    version: spec.version ?? "0.1.0",
    name: spec.name,
    description: spec.description,
    category: PluginCategory.Tools,
    bound: { tools: exact(...spec.tools) },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => capabilities,
  };
}
