/**
 * The CLI's todo list: the plan the `todowrite` tool keeps, held in memory for the session.
 *
 * @module
 */

import type { Message, TodoItem, TodoService } from "@amber/core";

/** The CLI's todo list: a {@linkcode TodoService} whose `subscribe` is always there. */
export interface CliTodoService extends TodoService {
  /** Calls `listener` with the new list after every `write`; returns what stops it. */
  subscribe(listener: (items: readonly TodoItem[]) => void): () => void;
}

/**
 * Creates an empty in-memory todo list. `write` replaces the whole list with a frozen copy, so
 * neither the caller nor a reader of `list()` can change it behind the service's back, then
 * tells the subscribers (the todo panel). A subscriber that throws does not stop the write nor
 * the other subscribers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createTodoService } from "./todos.ts";
 * const todos = createTodoService();
 * const seen: number[] = [];
 * const stop = todos.subscribe((items) => seen.push(items.length));
 * todos.write([{ content: "Add tests", status: "in_progress" }]);
 * assert.deepEqual(todos.list(), [{ content: "Add tests", status: "in_progress" }]);
 * stop();
 * todos.write([]);
 * assert.deepEqual(seen, [1]);
 * ```
 */
export function createTodoService(): CliTodoService {
  let items: readonly TodoItem[] = Object.freeze([]);
  const listeners = new Set<(items: readonly TodoItem[]) => void>();
  return {
    list: () => items,
    write(next: readonly TodoItem[]): void {
      items = Object.freeze(
        next.map((item) => Object.freeze({ content: item.content, status: item.status })),
      );
      for (const listener of [...listeners]) {
        try {
          listener(items);
        } catch {
          // A view's failure is not the plan's: the list is written all the same.
        }
      }
    },
    subscribe(listener: (items: readonly TodoItem[]) => void): () => void {
      // A wrapper per subscription, so the same function subscribed twice stops separately.
      const entry = (list: readonly TodoItem[]): void => listener(list);
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
  };
}

const STATUSES: ReadonlySet<string> = new Set(["pending", "in_progress", "completed"]);

/**
 * The todo list a conversation left: the items of its last `todowrite` call that succeeded, or
 * none. What a resumed session's todo panel shows again (the list itself is not saved; the call
 * that wrote it is). A call is found by its id in the replies before its result, the nearest
 * first, since ids repeat across replies.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { todosFromMessages } from "./todos.ts";
 * const todos = [{ content: "Ship it", status: "pending" }];
 * const items = todosFromMessages([
 *   { role: "user", content: "plan" },
 *   {
 *     role: "assistant",
 *     content: "",
 *     toolCalls: [{ id: "c1", name: "todowrite", arguments: JSON.stringify({ todos }) }],
 *   },
 *   { role: "tool", toolCallId: "c1", name: "todowrite", content: "Todos (0 of 1 done)" },
 * ]);
 * assert.deepEqual(items, todos);
 * assert.deepEqual(todosFromMessages([]), []);
 * ```
 */
export function todosFromMessages(messages: readonly Message[]): TodoItem[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const result = messages[i];
    if (result.role !== "tool" || result.name !== "todowrite") continue;
    if (result.content.startsWith("error:")) continue;
    for (let j = i - 1; j >= 0; j--) {
      const reply = messages[j];
      if (reply.role !== "assistant") continue;
      const call = reply.toolCalls?.find((c) => c.id === result.toolCallId);
      if (call === undefined) continue;
      const items = parseTodos(call.arguments);
      if (items !== undefined) return items;
      break;
    }
  }
  return [];
}

function parseTodos(text: string): TodoItem[] | undefined {
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    return undefined;
  }
  const todos = (args as { todos?: unknown } | null)?.todos;
  if (!Array.isArray(todos)) return undefined;
  const items: TodoItem[] = [];
  for (const item of todos) {
    const { content, status } = (item ?? {}) as { content?: unknown; status?: unknown };
    if (typeof content !== "string" || typeof status !== "string" || !STATUSES.has(status)) {
      return undefined;
    }
    items.push({ content, status: status as TodoItem["status"] });
  }
  return items;
}
