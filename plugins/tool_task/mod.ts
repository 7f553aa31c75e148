/**
 * The `task` tool: hands a self-contained job to a sub-agent and returns its final answer.
 *
 * @module
 */

import type { Plugin, SubagentService, Tool, ToolResult } from "@amber/core";
import { exact, PluginCategory } from "@amber/core";
import { describeError, toolError } from "../_workspace.ts";

interface TaskArgs {
  readonly prompt: string;
  readonly description?: string;
}

/**
 * Creates the `tool_task` plugin, which contributes the `task` tool: it runs
 * `services.host.subagents.run(prompt, {signal})` with the run's cancel signal and returns the
 * sub-agent's final answer. Without a sub-agent service the capability declines and the plugin
 * stays active. The sub-agent's own tool calls go through approval as usual.
 *
 * @example
 * ```ts
 * import { createToolTaskPlugin } from "@amber/plugins/tool_task";
 * const plugin = createToolTaskPlugin();
 * console.log(plugin.id, plugin.capabilities().map((c) => c.name)); // tool_task [ "task" ]
 * ```
 */
export function createToolTaskPlugin(): Plugin {
  return {
    id: "tool_task",
    version: "0.1.0",
    name: "Task",
    description: "The task tool: delegates a self-contained job to a sub-agent.",
    category: PluginCategory.Tools,
    bound: { tools: exact("task") },
    initialize: () => true,
    shutdown() {},
    capabilities: () => [{
      kind: "tool",
      name: "task",
      tools: (services) => {
        const subagents = services.host.subagents;
        return subagents === undefined ? [] : [taskTool(subagents)];
      },
    }],
  };
}

function taskTool(subagents: SubagentService): Tool {
  return {
    name: "task",
    description: "Delegate a self-contained task to a sub-agent with the same tools and a fresh " +
      "context, and get back its final answer. Use it for broad searches and investigations " +
      "whose details you do not need to keep. The sub-agent sees only your prompt: include " +
      "every fact, path and constraint it needs, and say exactly what its answer must contain.",
    parameters: {
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
    },
    verb: "delegating",
    summarize(args) {
      const { prompt, description } = args as Partial<TaskArgs>;
      if (description) return `task: ${description}`;
      const text = String(prompt ?? "").split("\n")[0];
      return `task: ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
    },
    async execute(args, context): Promise<ToolResult> {
      const { prompt } = args as TaskArgs;
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
  };
}
