/**
 * The CLI's todo list: the plan the `todowrite` tool keeps, held in memory for the session.
 *
 * @module
 */

import type { TodoItem, TodoService } from "@amber/core";

/**
 * Creates an empty in-memory todo list. `write` replaces the whole list with a frozen copy, so
 * neither the caller nor a reader of `list()` can change it behind the service's back.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createTodoService } from "./todos.ts";
 * const todos = createTodoService();
 * todos.write([{ content: "Add tests", status: "in_progress" }]);
 * assert.deepEqual(todos.list(), [{ content: "Add tests", status: "in_progress" }]);
 * ```
 */
export function createTodoService(): TodoService {
  let items: readonly TodoItem[] = Object.freeze([]);
  return {
    list: () => items,
    write(next: readonly TodoItem[]): void {
      items = Object.freeze(
        next.map((item) => Object.freeze({ content: item.content, status: item.status })),
      );
    },
  };
}
