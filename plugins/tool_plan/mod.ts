/**
 * The `todowrite` tool: the agent's plan, kept in the host's todo list.
 *
 * @module
 */

import type { FromJsonSchema, Plugin, TodoItem, TodoService, Tool, ToolResult } from "@amber/core";
import { defineTool } from "@amber/core";
import { describeError, toolError } from "../_workspace.ts";
import { toolPlugin } from "../tool_plugin.ts";

const PARAMETERS = {
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
} as const;

type TodoArgs = FromJsonSchema<typeof PARAMETERS>;

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
 * import assert from "node:assert/strict";
 * import { renderTodos } from "@amber/plugins/tool_plan";
 * const text = renderTodos([
 *   { content: "Read the code", status: "completed" },
 *   { content: "Write the fix", status: "in_progress" },
 * ]);
 * assert.equal(text, "Todos (1 of 2 done):\n[x] Read the code\n[~] Write the fix");
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
 * import assert from "node:assert/strict";
 * import { createToolPlanPlugin } from "@amber/plugins/tool_plan";
 * const plugin = createToolPlanPlugin();
 * assert.equal(plugin.id, "tool_plan");
 * assert.deepEqual(plugin.capabilities().map((c) => c.name), ["todowrite"]);
 * ```
 */
export function createToolPlanPlugin(): Plugin {
  return toolPlugin({
    id: "tool_plan",
    name: "Plan",
    description: "The todowrite tool: the agent's plan as the host's todo list.",
    tools: ["todowrite"],
    build: (services) => {
      const todos = services.host.todos;
      return todos === undefined ? [] : [todoTool(todos)];
    },
  });
}

function todoTool(todos: TodoService): Tool<TodoArgs> {
  return defineTool({
    name: "todowrite",
    description: "Replace your todo list with the given items. Use it to plan work of three or " +
      "more steps and to show progress: keep exactly one item in_progress while you work on it, " +
      "mark it completed as soon as it is done, and send the whole list every time (items left " +
      "out are dropped).",
    parameters: PARAMETERS,
    verb: "planning",
    readOnly: true,
    summarize({ todos: items }) {
      if (!Array.isArray(items)) return "update todos";
      const done = items.filter((item) => item?.status === "completed").length;
      return `update todos (${done}/${items.length} done)`;
    },
    execute(args): ToolResult {
      const items: TodoItem[] = args.todos.map((item) => ({
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
  });
}
