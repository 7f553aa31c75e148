/**
 * What plugin code is shown of a run: the state store and the transcript as they were at the last
 * commit, frozen. Hooks, gates and guards read them; none can change what the kernel holds. Each
 * message and each state value is frozen once, when it enters the run, so a snapshot costs one
 * shallow copy and never a deep one.
 *
 * @module
 */

import type { Message } from "../message.ts";
import { deepFreeze } from "../read_only.ts";

/**
 * Freezes a message that enters the conversation (and its tool calls), and returns it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { freezeMessage } from "./_snapshot.ts";
 * const message = freezeMessage({
 *   role: "assistant",
 *   content: "",
 *   toolCalls: [{ id: "1", name: "x", arguments: "{}" }],
 * });
 * assert.ok(Object.isFrozen(message));
 * assert.ok(message.role === "assistant" && Object.isFrozen(message.toolCalls?.[0]));
 * ```
 */
export function freezeMessage(message: Message): Message {
  if (Object.isFrozen(message)) return message;
  return deepFreeze(message);
}

/**
 * A frozen view of the conversation so far: the committed messages then the step's own.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { transcriptSnapshot } from "./_snapshot.ts";
 * const committed = [{ role: "user" as const, content: "hi" }];
 * const snapshot = transcriptSnapshot(committed, []);
 * assert.ok(Object.isFrozen(snapshot));
 * assert.notEqual(snapshot, committed);
 * ```
 */
export function transcriptSnapshot(
  committed: readonly Message[],
  step: readonly Message[],
): readonly Message[] {
  return Object.freeze(step.length === 0 ? [...committed] : [...committed, ...step]);
}

/**
 * The state store as of one commit, read-only: it has no `set`, `delete` or `clear`, and its
 * values are frozen. A new one is made after each commit that changed the store.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { StateSnapshot } from "./_snapshot.ts";
 * const store = new Map<string, unknown>([["a", 1]]);
 * const snapshot = new StateSnapshot(store);
 * store.set("a", 2);
 * assert.equal(snapshot.get("a"), 1);
 * assert.equal("set" in snapshot, false);
 * ```
 */
export class StateSnapshot implements ReadonlyMap<string, unknown> {
  readonly #entries: Map<string, unknown>;

  /** Copies `store` as it is now. */
  constructor(store: ReadonlyMap<string, unknown>) {
    this.#entries = new Map(store);
    Object.freeze(this);
  }

  /** How many keys. */
  get size(): number {
    return this.#entries.size;
  }

  /** The value of `key`. */
  get(key: string): unknown {
    return this.#entries.get(key);
  }

  /** Whether `key` has a value. */
  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /** Calls `callback` for each entry. */
  forEach(
    callback: (value: unknown, key: string, map: ReadonlyMap<string, unknown>) => void,
    thisArg?: unknown,
  ): void {
    for (const [key, value] of this.#entries) callback.call(thisArg, value, key, this);
  }

  /** The entries. */
  entries(): MapIterator<[string, unknown]> {
    return this.#entries.entries();
  }

  /** The keys. */
  keys(): MapIterator<string> {
    return this.#entries.keys();
  }

  /** The values. */
  values(): MapIterator<unknown> {
    return this.#entries.values();
  }

  /** The entries. */
  [Symbol.iterator](): MapIterator<[string, unknown]> {
    return this.#entries[Symbol.iterator]();
  }
}
