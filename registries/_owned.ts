/**
 * Private helpers every registry shares: an insertion-ordered, owner-stamped map of entries with
 * a version counter, the idempotent contribution handle, and the wording of errors.
 *
 * @module
 */

import type { Contribution, ContributionKind, RegistryEntry } from "@amber/core";

/** One live entry: its id, its owner, what it holds, and when it was registered. */
export interface OwnedRecord<V> {
  /** The entry's id in its registry. */
  readonly id: string;
  /** The plugin that owns it, or `core`. */
  readonly owner: string;
  /** What the registry keeps for it. */
  readonly value: V;
  /** Registration sequence number: ties of any other order break on it. */
  readonly seq: number;
}

// A record also links to the previous and next record of the same owner, so adding, deleting
// and purging never touch a per-owner collection: a Set per owner cost as much as the Map itself.
class Node<V> implements OwnedRecord<V> {
  prev: Node<V> | undefined = undefined;
  next: Node<V> | undefined = undefined;
  constructor(
    readonly id: string,
    readonly owner: string,
    readonly value: V,
    readonly seq: number,
  ) {}
}

/**
 * An insertion-ordered map of owned entries. Add, delete and purge are O(1) per entry (a Map by
 * id, plus each owner's entries chained together), and the ordered views are rebuilt lazily
 * once per change, so enabling and disabling thousands of plugins never scans the registry.
 *
 * @example
 * ```ts
 * import { OwnedMap } from "./_owned.ts";
 * const map = new OwnedMap<number>();
 * map.add("a", "p", 1);
 * map.add("b", "q", 2);
 * console.log(map.purge("p"), map.entries()); // ["a"] [{ id: "b", owner: "q" }]
 * ```
 */
export class OwnedMap<V> {
  #byId = new Map<string, Node<V>>();
  // The newest record of each owner; older ones hang off `prev`.
  #lastOf = new Map<string, Node<V>>();
  #seq = 0;
  #version = 0;
  #records: readonly OwnedRecord<V>[] | undefined = undefined;
  #entries: readonly RegistryEntry[] | undefined = undefined;

  /** Moves on every change. */
  get version(): number {
    return this.#version;
  }

  /** How many entries are live. */
  get size(): number {
    return this.#byId.size;
  }

  /** The entry `id`, if live. */
  get(id: string): OwnedRecord<V> | undefined {
    return this.#byId.get(id);
  }

  /** Whether `id` is live. */
  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /**
   * Adds `id` for `owner`. Returns the new record, or undefined (and changes nothing) when the id
   * is taken: callers check for collisions first to word the error, this only guards the map.
   */
  add(id: string, owner: string, value: V): OwnedRecord<V> | undefined {
    if (this.#byId.has(id)) return undefined;
    const node = new Node(id, owner, value, this.#seq++);
    this.#byId.set(id, node);
    const last = this.#lastOf.get(owner);
    if (last !== undefined) {
      node.prev = last;
      last.next = node;
    }
    this.#lastOf.set(owner, node);
    this.#changed();
    return node;
  }

  /**
   * Removes `id`. With `owner`, only when that owner holds it, so one plugin can never remove
   * what another installed. With `record`, only when that exact registration is still live, so a
   * stale handle cannot remove a later registration of the same id.
   */
  delete(id: string, owner?: string, record?: OwnedRecord<V>): boolean {
    const node = this.#byId.get(id);
    if (node === undefined) return false;
    if (owner !== undefined && node.owner !== owner) return false;
    if (record !== undefined && node !== record) return false;
    this.#byId.delete(id);
    const { prev, next } = node;
    if (prev !== undefined) prev.next = next;
    if (next !== undefined) next.prev = prev;
    else if (prev !== undefined) this.#lastOf.set(node.owner, prev);
    else this.#lastOf.delete(node.owner);
    node.prev = node.next = undefined;
    this.#changed();
    return true;
  }

  /** Removes everything `owner` holds; returns the ids, in registration order. */
  purge(owner: string): string[] {
    let node = this.#lastOf.get(owner);
    if (node === undefined) return [];
    this.#lastOf.delete(owner);
    const removed: string[] = [];
    while (node !== undefined) {
      const prev: Node<V> | undefined = node.prev;
      this.#byId.delete(node.id);
      removed.push(node.id);
      node.prev = node.next = undefined;
      node = prev;
    }
    this.#changed();
    return removed.reverse();
  }

  /** Every live record in registration order; the same array until the next change. */
  records(): readonly OwnedRecord<V>[] {
    return this.#records ??= [...this.#byId.values()];
  }

  /** Every live entry as `{id, owner}` in registration order; cached until the next change. */
  entries(): readonly RegistryEntry[] {
    return this.#entries ??= this.records().map((record): RegistryEntry => ({
      id: record.id,
      owner: record.owner,
    }));
  }

  /** Marks a change that is not an add or a delete (say, a cached value the map holds). */
  touch(): void {
    this.#changed();
  }

  #changed(): void {
    this.#version++;
    this.#records = undefined;
    this.#entries = undefined;
  }
}

/**
 * A contribution handle whose `remove` runs `undo` at most once.
 *
 * @example
 * ```ts
 * import { contribution } from "./_owned.ts";
 * let undone = 0;
 * const handle = contribution("tool", "greet", ["greet"], () => undone++);
 * handle.remove();
 * handle.remove();
 * console.log(undone); // 1
 * ```
 */
export function contribution(
  kind: ContributionKind,
  name: string,
  ids: readonly string[],
  undo: () => void,
): Contribution {
  let live = true;
  return {
    kind,
    name,
    ids,
    remove: () => {
      if (!live) return;
      live = false;
      undo();
    },
  };
}

/**
 * How an owner is named in an error: `core`, or `plugin 'id'`.
 *
 * @example
 * ```ts
 * import { ownerLabel } from "./_owned.ts";
 * console.log(ownerLabel("core"), ownerLabel("hello")); // "core" "plugin 'hello'"
 * ```
 */
export function ownerLabel(owner: string): string {
  return owner === "core" ? "core" : `plugin '${owner}'`;
}

/**
 * The message of anything thrown: an Error's message, else its string form.
 *
 * @example
 * ```ts
 * import { errorMessage } from "./_owned.ts";
 * console.log(errorMessage(new Error("boom")), errorMessage("bad")); // "boom" "bad"
 * ```
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    // An object whose toString throws still deserves a message rather than a second throw.
    return "unknown error";
  }
}
