/**
 * What an agents plugin (`files.agents`, `files.agents-claude`) contributes for the agents it
 * loaded: they go into the host's `AgentCatalog` (`agent_catalog.ts`), where the `task` tool (its `agent`
 * parameter) and `/agents` find them, and a task for one runs a sub-agent with its system prompt,
 * only its tools and its model (`cli/session/agent_runs.ts`). No registry holds them, so the
 * plugin contributes no capability; switched off, its agents leave the catalog's listing at once.
 *
 * @module
 */

import type { Capability } from "@amber/core";
import type { AgentFile, FilesContext } from "./definitions.ts";

/**
 * Records `agents` as what `context.pluginId` defines, in place of what it defined before, and
 * returns the plugin's capabilities: none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AgentCatalog } from "./agent_catalog.ts";
 * import { agentCapabilities } from "./agents.ts";
 * const agents = new AgentCatalog();
 * const reviewer = {
 *   name: "reviewer",
 *   description: "Reviews a change.",
 *   systemPrompt: "You review code.",
 *   tools: ["read"],
 *   path: "/w/.amber/agents/reviewer.md",
 * };
 * const context = { pluginId: "files.agents", workspace: "/w", configDir: "/c", agents };
 * assert.deepEqual(agentCapabilities([reviewer], context), []);
 * assert.deepEqual(agents.list(() => true).agents.map((a) => a.name), ["reviewer"]);
 * ```
 */
export function agentCapabilities(
  agents: readonly AgentFile[],
  context: FilesContext,
): readonly Capability[] {
  context.agents?.set(context.pluginId, agents);
  return [];
}
