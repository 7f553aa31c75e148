/**
 * The CLI's todo list: the plan the `todowrite` tool keeps, held in memory for the session.
 *
 * @module
 */

import type { TodoItem, TodoService } from "@amber/core";

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
