/**
 * The `task` tool: hands a self-contained job to a sub-agent and returns its final answer.
 *
 * @module
 */

import type { FromJsonSchema, Plugin, SubagentService, Tool, ToolResult } from "@amber/core";
import { defineTool } from "@amber/core";
import { describeError, toolError } from "../_workspace.ts";
import { toolPlugin } from "../tool_plugin.ts";

const PARAMETERS = {
  type: "object",
  properties: {
    prompt: {
      type: "string",
      minLength: 1,
      description: "The complete instructions for the sub-agent.",
    },
    description: {
      type: "string",
      description: "A short title for the task (3-6 words), shown to the user.",
    },
  },
  required: ["prompt"],
  additionalProperties: false,
} as const;

type TaskArgs = FromJsonSchema<typeof PARAMETERS>;

/**
 * Creates the `tool_task` plugin, which contributes the `task` tool: it runs
 * `services.host.subagents.run(prompt, {signal})` with the run's cancel signal and returns the
 * sub-agent's final answer. Without a sub-agent service the capability declines and the plugin
 * stays active. The sub-agent's own tool calls go through approval as usual.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolTaskPlugin } from "@amber/plugins/tool_task";
 * const plugin = createToolTaskPlugin();
 * assert.equal(plugin.id, "tool_task");
 * assert.deepEqual(plugin.capabilities().map((c) => c.name), ["task"]);
 * ```
 */
export function createToolTaskPlugin(): Plugin {
  return toolPlugin({
    id: "tool_task",
    name: "Task",
    description: "The task tool: delegates a self-contained job to a sub-agent.",
    tools: ["task"],
    build: (services) => {
      const subagents = services.host.subagents;
      return subagents === undefined ? [] : [taskTool(subagents)];
    },
  });
}

function taskTool(subagents: SubagentService): Tool<TaskArgs> {
  return defineTool({
    name: "task",
    description: "Delegate a self-contained task to a sub-agent with the same tools and a fresh " +
      "context, and get back its final answer. Use it for broad searches and investigations " +
      "whose details you do not need to keep. The sub-agent sees only your prompt: include " +
      "every fact, path and constraint it needs, and say exactly what its answer must contain.",
    parameters: PARAMETERS,
    verb: "delegating",
    summarize({ prompt, description }) {
      if (description) return `task: ${String(description)}`;
      const text = String(prompt ?? "").split("\n")[0];
      return `task: ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
    },
    async execute({ prompt }, context): Promise<ToolResult> {
      if (context.signal.aborted) return toolError("cancelled before the sub-agent started");
      try {
        const answer = await subagents.run(prompt, { signal: context.signal });
        if (context.signal.aborted) return toolError("cancelled: the sub-agent was stopped");
        return { ok: true, output: answer === "" ? "(the sub-agent gave no answer)" : answer };
      } catch (error) {
        if (context.signal.aborted) return toolError("cancelled: the sub-agent was stopped");
        return toolError(`the sub-agent failed: ${describeError(error)}`);
      }
    },
  });
}
