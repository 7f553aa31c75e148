/**
 * The `task` tool: hands a self-contained job to a sub-agent and returns its final answer; and
 * `/agents`, which lists the defined agents a task can run as.
 *
 * @module
 */

import type {
  AgentDefinition,
  Capability,
  Plugin,
  PluginServices,
  SubagentService,
  Tool,
} from "@amber/core";
import { exact, PluginCategory } from "@amber/core";
import { agentsListing } from "./_agents_command.ts";
import { taskTool } from "./_task_tool.ts";

const NONE: readonly AgentDefinition[] = Object.freeze([]);

/**
 * Creates the `tool_task` plugin. Its `task` tool runs `services.host.subagents.run(prompt,
 * {signal})` with the run's cancel signal and returns the sub-agent's final answer; without a
 * sub-agent service the tool declines and the plugin stays active. The sub-agent's own tool calls
 * go through approval as usual.
 *
 * When the service defines agents (`SubagentService.agents`, the markdown files of
 * `agents/<name>.md`), `task` takes an `agent` parameter naming one, its description lists them
 * with what each is for, and the sub-agent runs as that agent. The list is read at every step
 * boundary (`liveVersion`): an agent file added or removed changes the tool at the next step.
 * `/agents` lists them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolTaskPlugin } from "@amber/plugins/tool_task";
 * const plugin = createToolTaskPlugin();
 * assert.equal(plugin.id, "tool_task");
 * assert.deepEqual(plugin.capabilities().map((c) => `${c.kind}:${c.name}`), [
 *   "tool:task",
 *   "command:agents",
 * ]);
 * ```
 */
export function createToolTaskPlugin(): Plugin {
  let subagents: SubagentService | undefined;
  // The agents the installed tool offers, and the number that moves when the service's differ.
  let offered: readonly AgentDefinition[] = NONE;
  let version = 0;
  const agentsNow = (): readonly AgentDefinition[] => subagents?.agents?.() ?? NONE;
  const capabilities: readonly Capability[] = Object.freeze([
    Object.freeze({
      kind: "tool",
      name: "task",
      tools: (services: PluginServices): readonly Tool[] => {
        subagents = services.host.subagents;
        if (subagents === undefined) return [];
        offered = agentsNow();
        return [taskTool(subagents, offered)];
      },
    }),
    Object.freeze({
      kind: "command",
      name: "agents",
      root: "agents",
      help: "List the defined agents the task tool can run as",
      man: "Usage: /agents\n\nLists the agents defined by markdown files (agents/<name>.md in " +
        "the config directory, the workspace's .amber/ and .claude/): each one's name, what it " +
        "is for, its tools and model, and its file.",
      subtree: {},
      handlers: {
        "": () => agentsListing(subagents === undefined ? undefined : agentsNow()),
      },
    }),
  ]);
  return {
    id: "tool_task",
    version: "0.1.0",
    name: "Task",
    description: "The task tool: delegates a self-contained job to a sub-agent or a defined " +
      "agent; /agents lists them.",
    category: PluginCategory.Tools,
    bound: { tools: exact("task"), commands: exact("agents") },
    initialize: () => true,
    shutdown: () => {
      subagents = undefined;
      offered = NONE;
    },
    // The service hands out the same array while its agents stay the same.
    liveVersion: () => agentsNow() === offered ? version : ++version,
    capabilities: () => capabilities,
  };
}
