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

// A record is also the contribution handle of a single-entry install: one object instead of a
// record, a closure, a handle and an ids array per contribution. Enabling a thousand plugins
// allocates a few objects per contribution, and the young generation stays small.
class Node<V> implements OwnedRecord<V>, Contribution {
  kind: ContributionKind = "tool";
  name = "";
  // Whether the map holds this very node under its id: a handle's remove then needs no lookup.
  live = true;
  constructor(
    readonly id: string,
    readonly owner: string,
    readonly value: V,
    readonly seq: number,
    readonly map: OwnedMap<V>,
  ) {}

  get ids(): readonly string[] {
    return [this.id];
  }

  remove(): void {
    this.map.delete(this.id, this.owner, this);
  }
}

// The handle of a several-entry install: one object for the whole contribution, instead of a
// closure, its context and a handle (measured: provider installs of bench/runtime_bench.ts).
class Group<V> implements Contribution {
  #live = true;
  constructor(
    readonly kind: ContributionKind,
    readonly name: string,
    readonly ids: readonly string[],
    readonly nodes: readonly OwnedRecord<V>[],
    readonly map: OwnedMap<V>,
  ) {}

  remove(): void {
    if (!this.#live) return;
    this.#live = false;
    const nodes = this.nodes;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i];
      this.map.delete(node.id, node.owner, node);
    }
  }
}

/**
 * An insertion-ordered map of owned entries. Add and delete are one or two Map operations, and
 * the ordered views are rebuilt lazily once per change, so enabling and disabling thousands of
 * plugins never scans the registry. `purge` scans: it is the runtime's safety net after a faulty
 * unwind, not the way contributions normally leave (their handles remove them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OwnedMap } from "./_owned.ts";
 * const map = new OwnedMap<number>();
 * map.add("a", "p", 1);
 * map.add("b", "q", 2);
 * assert.deepEqual(map.purge("p"), ["a"]);
 * assert.deepEqual(map.entries(), [{ id: "b", owner: "q" }]);
 * ```
 */
export class OwnedMap<V> {
  // A removed node stays under its id, marked dead, until the id is added again or the map is
  // rebuilt. V8 leaves a deleted Map entry in its bucket until the table is rebuilt, so deleting
  // and adding the same id again and again (a plugin switched off and on) made every lookup of
  // that id walk a chain as long as the map is big (measured: 140 µs per toggle at 10,000
  // plugins, 5 µs without deleting); and a removal that only marks its node costs no lookup
  // (measured: the Map work of removals was the largest part of disabling 10,000 plugins in
  // bench/runtime_bench.ts). `#dead` counts such nodes; the map is rebuilt when they outnumber
  // the live ones four to one, which also bounds how long a removed value stays referenced.
  #byId = new Map<string, Node<V>>();
  #live = 0;
  #dead = 0;
  // An id added again sits at its old place in the Map: the ordered views then sort by seq.
  #reordered = false;
  #onRemove: ((record: OwnedRecord<V>) => void) | undefined;

  /** `onRemove` runs after an entry leaves by delete or purge (not by a failed install). */
  constructor(onRemove?: (record: OwnedRecord<V>) => void) {
    this.#onRemove = onRemove;
  }
  #seq = 0;
  #version = 0;
  // The id `get` looked up last and the node it found, until the next change.
  #lookedUp: string | undefined = undefined;
  #found: Node<V> | undefined = undefined;
  #records: readonly OwnedRecord<V>[] | undefined = undefined;
  #entries: readonly RegistryEntry[] | undefined = undefined;

  /** Moves on every change. */
  get version(): number {
    return this.#version;
  }

  /** How many entries are live. */
  get size(): number {
    return this.#live;
  }

  /** The entry `id`, if live. */
  get(id: string): OwnedRecord<V> | undefined {
    const node = this.#byId.get(id);
    this.#lookedUp = id;
    this.#found = node;
    return node !== undefined && node.live ? node : undefined;
  }

  /** Whether `id` is live. */
  has(id: string): boolean {
    return this.#byId.get(id)?.live === true;
  }

  /**
   * Adds `id` for `owner`. Returns the new record, or undefined (and changes nothing) when the id
   * is taken: callers check for collisions first to word the error, this only guards the map.
   */
  add(id: string, owner: string, value: V): OwnedRecord<V> | undefined {
    // A registry looks an id up to word a collision and then adds it: the add reuses that
    // lookup (measured: Map lookups were the largest cost of installing in
    // bench/runtime_bench.ts; nothing changes the map between the two).
    const known = id === this.#lookedUp ? this.#found : this.#byId.get(id);
    if (known !== undefined && known.live) return undefined;
    const node = new Node(id, owner, value, this.#seq++, this);
    this.#byId.set(id, node);
    if (known !== undefined) {
      this.#dead--;
      this.#reordered = true;
    }
    this.#live++;
    this.#changed();
    return node;
  }

  /**
   * Adds `id` for `owner` and returns its contribution handle: removing it deletes exactly this
   * registration (and calls `onRemove`), once. Undefined when the id is taken.
   */
  install(
    id: string,
    owner: string,
    value: V,
    kind: ContributionKind,
    name: string,
  ): Contribution | undefined {
    const node = this.add(id, owner, value) as Node<V> | undefined;
    if (node === undefined) return undefined;
    node.kind = kind;
    node.name = name;
    return node;
  }

  /**
   * Adds every id of `ids` with the value at the same index of `values`, for `owner`, as one
   * contribution: removing its handle deletes exactly these registrations (and calls `onRemove`
   * for each), once. Callers check every id first; undefined (and nothing added) when one is
   * taken all the same.
   */
  installAll(
    ids: readonly string[],
    owner: string,
    values: readonly V[],
    kind: ContributionKind,
    name: string,
  ): Contribution | undefined {
    const nodes: OwnedRecord<V>[] = new Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const node = this.add(ids[i], owner, values[i]);
      if (node === undefined) {
        for (let j = i - 1; j >= 0; j--) this.#take(nodes[j]);
        return undefined;
      }
      nodes[i] = node;
    }
    return new Group(kind, name, ids, nodes, this);
  }

  /**
   * Removes `id`. With `owner`, only when that owner holds it, so one plugin can never remove
   * what another installed. With `record`, only when that exact registration is still live, so a
   * stale handle cannot remove a later registration of the same id.
   */
  delete(id: string, owner?: string, record?: OwnedRecord<V>): boolean {
    let node: Node<V> | undefined;
    if (record instanceof Node && record.map === this) {
      // A handle removing itself: its flag says whether it is live, without a lookup.
      if (!record.live || record.id !== id) return false;
      node = record as Node<V>;
    } else {
      node = this.#byId.get(id);
      if (node === undefined || !node.live) return false;
      if (record !== undefined && node !== record) return false;
    }
    if (owner !== undefined && node.owner !== owner) return false;
    this.#bury(node);
    this.#changed();
    this.#onRemove?.(node);
    return true;
  }

  // Takes back an add that has not been handed out, without onRemove.
  #take(record: OwnedRecord<V>): void {
    const node = record as Node<V>;
    if (!node.live) return;
    this.#bury(node);
    this.#changed();
  }

  /** Removes everything `owner` holds; returns the ids, in registration order. */
  purge(owner: string): string[] {
    const nodes = this.records().filter((node) => node.owner === owner) as Node<V>[];
    const removed = nodes.map((node) => node.id);
    if (nodes.length === 0) return removed;
    for (const node of nodes) this.#bury(node);
    this.#changed();
    if (this.#onRemove !== undefined) { for (const node of nodes) this.#onRemove(node); }
    return removed;
  }

  /** Every live record in registration order; the same array until the next change. */
  records(): readonly OwnedRecord<V>[] {
    if (this.#records !== undefined) return this.#records;
    const records: Node<V>[] = [];
    for (const node of this.#byId.values()) if (node.live) records.push(node);
    if (this.#reordered) records.sort((a, b) => a.seq - b.seq);
    return this.#records = records;
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

  #bury(node: Node<V>): void {
    node.live = false;
    this.#live--;
    this.#dead++;
    // Rebuilt when the dead outnumber the live four to one: a plugin switched off and on keeps
    // its keys, and a teardown of everything rebuilds a few small maps, not one per removal.
    if (this.#live === 0) {
      this.#byId = new Map();
      this.#dead = 0;
      this.#reordered = false;
    } else if (this.#dead > 4 * this.#live + 1024) {
      // The live nodes keep their relative order, so whether the views must sort stays as it was.
      const old = this.#byId;
      this.#byId = new Map();
      for (const kept of old.values()) if (kept.live) this.#byId.set(kept.id, kept);
      this.#dead = 0;
    }
  }

  #changed(): void {
    this.#lookedUp = undefined;
    this.#found = undefined;
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
 * import assert from "node:assert/strict";
 * import { contribution } from "./_owned.ts";
 * let undone = 0;
 * const handle = contribution("tool", "greet", ["greet"], () => undone++);
 * handle.remove();
 * handle.remove();
 * assert.equal(undone, 1);
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
 * import assert from "node:assert/strict";
 * import { ownerLabel } from "./_owned.ts";
 * assert.equal(ownerLabel("core"), "core");
 * assert.equal(ownerLabel("hello"), "plugin 'hello'");
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
 * import assert from "node:assert/strict";
 * import { errorMessage } from "./_owned.ts";
 * assert.equal(errorMessage(new Error("boom")), "boom");
 * assert.equal(errorMessage("bad"), "bad");
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
