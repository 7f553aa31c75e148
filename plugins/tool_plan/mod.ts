/**
 * The `todowrite` tool: the agent's plan, kept in the host's todo list.
 *
 * @module
 */

import type { Plugin, TodoItem, TodoService, Tool, ToolResult } from "@amber/core";
import { exact, PluginCategory } from "@amber/core";
import { describeError, toolError } from "../_workspace.ts";

interface TodoArgs {
  readonly todos: readonly TodoItem[];
}

const MARK: { readonly [S in TodoItem["status"]]: string } = {
  completed: "[x]",
  in_progress: "[~]",
  pending: "[ ]",
};

/**
 * The todo list as a checklist: `[x]` completed, `[~]` in progress, `[ ]` pending, with a count
 * line first.
 *
 * @example
 * ```ts
 * import { renderTodos } from "@amber/plugins/tool_plan";
 * console.log(renderTodos([
 *   { content: "Read the code", status: "completed" },
 *   { content: "Write the fix", status: "in_progress" },
 * ]));
 * // "Todos (1 of 2 done):\n[x] Read the code\n[~] Write the fix"
 * ```
 */
export function renderTodos(items: readonly TodoItem[]): string {
  if (items.length === 0) return "Todos: (empty)";
  const done = items.filter((item) => item.status === "completed").length;
  return [
    `Todos (${done} of ${items.length} done):`,
    ...items.map((item) => `${MARK[item.status]} ${item.content}`),
  ].join("\n");
}

/**
 * Creates the `tool_plan` plugin, which contributes the `todowrite` tool: it replaces the host's
 * todo list (`services.host.todos`) with the list it is given and returns it as a checklist.
 * Without a todo service the capability declines and the plugin stays active. The tool touches
 * only the host's list, never the workspace, so it counts as read-only.
 *
 * @example
 * ```ts
 * import { createToolPlanPlugin } from "@amber/plugins/tool_plan";
 * const plugin = createToolPlanPlugin();
 * console.log(plugin.id, plugin.capabilities().map((c) => c.name)); // tool_plan [ "todowrite" ]
 * ```
 */
export function createToolPlanPlugin(): Plugin {
  return {
    id: "tool_plan",
    version: "0.1.0",
    name: "Plan",
    description: "The todowrite tool: the agent's plan as the host's todo list.",
    category: PluginCategory.Tools,
    bound: { tools: exact("todowrite") },
    initialize: () => true,
    shutdown() {},
    capabilities: () => [{
      kind: "tool",
      name: "todowrite",
      tools: (services) => {
        const todos = services.host.todos;
        return todos === undefined ? [] : [todoTool(todos)];
      },
    }],
  };
}

function todoTool(todos: TodoService): Tool {
  return {
    name: "todowrite",
    description: "Replace your todo list with the given items. Use it to plan work of three or " +
      "more steps and to show progress: keep exactly one item in_progress while you work on it, " +
      "mark it completed as soon as it is done, and send the whole list every time (items left " +
      "out are dropped).",
    parameters: {
      type: "object",
      properties: {
        todos: {
          type: "array",
          description: "The complete, updated list, in order.",
          items: {
            type: "object",
            properties: {
              content: { type: "string", minLength: 1, description: "What to do, briefly." },
              status: {
                type: "string",
                enum: ["pending", "in_progress", "completed"],
                description: "Where it stands.",
              },
            },
            required: ["content", "status"],
            additionalProperties: false,
          },
        },
      },
      required: ["todos"],
      additionalProperties: false,
    },
    verb: "planning",
    readOnly: true,
    summarize(args) {
      const items = (args as Partial<TodoArgs>).todos;
      if (!Array.isArray(items)) return "update todos";
      const done = items.filter((item) => item?.status === "completed").length;
      return `update todos (${done}/${items.length} done)`;
    },
    execute(args): ToolResult {
      const items = (args as TodoArgs).todos.map((item) => ({
        content: item.content,
        status: item.status,
      }));
      try {
        todos.write(items);
      } catch (error) {
        return toolError(`cannot update the todo list: ${describeError(error)}`);
      }
      return { ok: true, output: renderTodos(items), data: items };
    },
  };
}
