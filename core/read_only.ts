/**
 * Read-only views: how the host hands a plugin data it must not change (the configuration,
 * another plugin's tool schema, an event's payload). A view reads through to the value, deeply
 * and lazily, and refuses every write with a {@linkcode ReadOnlyViewError}; the value itself is
 * left as it is, so the host keeps writing to it where it must. A small record read field by
 * field (an event, a status snapshot) is cheaper as a sealed copy, and data the host never
 * changes again (a tool's schema) is simply frozen: it is then its own view.
 *
 * @module
 */

/**
 * A write through a read-only view: a plugin tried to change something the host owns. A
 * `TypeError`, as the same write to a frozen object in strict mode would be.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readOnlyView, ReadOnlyViewError } from "@amber/core";
 * const view = readOnlyView({ approval: "ask" as string });
 * assert.throws(() => {
 *   view.approval = "auto";
 * }, ReadOnlyViewError);
 * assert.equal(view.approval, "ask");
 * ```
 */
export class ReadOnlyViewError extends TypeError {
  /** The property the write was aimed at. */
  readonly property: string;
  /** Creates the error for a write of `property` (`what` says which kind of write). */
  constructor(property: PropertyKey, what = "set") {
    const name = typeof property === "symbol" ? property.toString() : String(property);
    super(`cannot ${what} '${name}': this is a read-only view of what the host owns`);
    this.name = "ReadOnlyViewError";
    this.property = name;
  }
}

// A view's target is a blank object (or array) holding, under keys no one else has, the real
// value and the views already made of its children. One handler then serves every view, a trap
// costs a property read, and a child's view lives exactly as long as its parent's.
const REAL: unique symbol = Symbol("real");
const KIDS: unique symbol = Symbol("kids");
type Kid = { source: object; view: object };
type Shadow = { [REAL]: object; [KIDS]: Map<PropertyKey, Kid> | undefined };

// value -> its view, for readOnlyView only: the long-lived values (the configuration, a schema)
// that are handed out again and again. A payload made for one delivery never enters it.
const views = new WeakMap<object, object>();
// Values already deeply frozen (by deepFreeze): they are their own view, at no cost.
const frozen = new WeakSet<object>();

function refuse(what: string): (shadow: Shadow, key: PropertyKey) => never {
  return (_shadow, key) => {
    throw new ReadOnlyViewError(key, what);
  };
}

// The proxy's target is the blank shadow rather than the value itself, so the proxy invariants
// never force a trap to return the raw nested value of a frozen parent.
const HANDLER: ProxyHandler<Shadow> = {
  get: (shadow, key) => {
    const real = shadow[REAL];
    // Only this module knows REAL: asking a view for it is how a view is recognised.
    if (key === REAL) return real;
    return child(shadow, key, Reflect.get(real, key, real));
  },
  has: (shadow, key) => Reflect.has(shadow[REAL], key),
  ownKeys: (shadow) => Reflect.ownKeys(shadow[REAL]),
  getOwnPropertyDescriptor: (shadow, key) => {
    const real = shadow[REAL];
    const found = Reflect.getOwnPropertyDescriptor(real, key);
    if (found === undefined) return undefined;
    const value = child(shadow, key, Reflect.get(real, key, real));
    // An array target's own `length` is non-configurable and writable; the invariants want it
    // reported the same way. Writes are still refused by the `set` trap.
    if (key === "length" && Array.isArray(shadow)) {
      return { value, writable: true, enumerable: false, configurable: false };
    }
    return { value, writable: false, enumerable: found.enumerable, configurable: true };
  },
  getPrototypeOf: (shadow) => Reflect.getPrototypeOf(shadow[REAL]),
  isExtensible: () => true,
  set: refuse("set"),
  defineProperty: refuse("define"),
  deleteProperty: refuse("delete"),
  setPrototypeOf: () => {
    throw new ReadOnlyViewError("[[Prototype]]", "replace");
  },
  preventExtensions: () => {
    throw new ReadOnlyViewError("[[Extensible]]", "seal");
  },
};

// The view of what `key` of a view's value holds now, made once while it holds the same object.
function child(shadow: Shadow, key: PropertyKey, value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const kids = shadow[KIDS] ??= new Map();
  const known = kids.get(key);
  if (known !== undefined && known.source === value) return known.view;
  const view = ephemeralView(value);
  kids.set(key, { source: value, view });
  return view;
}

/**
 * A deep, read-only view of `value`: reading gives what `value` holds now (nested objects as
 * views too), and every write (set, define, delete, a prototype change) throws a
 * {@linkcode ReadOnlyViewError} and leaves `value` as it was. Views are cached by identity, so
 * `readOnlyView(x) === readOnlyView(x)`: this is for values handed out again and again (the
 * configuration, a schema); for a value made for one delivery use {@linkcode ephemeralView}.
 * Primitives and functions come back as they are. Maps, sets, dates, regular expressions and
 * binary data come back as copies, since their methods refuse a proxy: writing to the copy
 * changes nothing the host sees. A view cannot be passed to `structuredClone`;
 * `JSON.stringify` and spreading work.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readOnlyView } from "@amber/core";
 * const config = { plugins: { search: { limit: 10 } } };
 * const view = readOnlyView(config);
 * assert.equal(view.plugins.search.limit, 10);
 * assert.throws(() => {
 *   (view.plugins.search as { limit: number }).limit = 0;
 * }, TypeError);
 * config.plugins.search.limit = 20;
 * assert.equal(view.plugins.search.limit, 20);
 * assert.equal(readOnlyView(config), view);
 * ```
 */
export function readOnlyView<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  const known = views.get(value);
  if (known !== undefined) return known as T;
  const view = ephemeralView(value);
  if (view !== value) views.set(value, view);
  return view;
}

/**
 * The read-only view of {@linkcode readOnlyView} without the identity cache, for a value made
 * for one delivery (an event's payload, a frame's status snapshot): it leaves nothing behind
 * for the garbage collector to track. Each call makes a new view; the view of each child is made
 * once, when it is first read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ephemeralView } from "@amber/core";
 * const event = { result: { ok: false, output: "denied" } };
 * const view = ephemeralView(event);
 * assert.equal(view.result, view.result);
 * assert.throws(() => {
 *   (view.result as { ok: boolean }).ok = true;
 * }, TypeError);
 * assert.equal(event.result.ok, false);
 * ```
 */
export function ephemeralView<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if ((value as { [REAL]?: object })[REAL] !== undefined) return value;
  if (Object.isFrozen(value) && frozen.has(value)) return value;
  const copy = copied(value);
  if (copy !== undefined) return copy as T;
  const shadow = (Array.isArray(value) ? [] : {}) as unknown as Shadow;
  shadow[REAL] = value;
  shadow[KIDS] = undefined;
  return new Proxy(shadow, HANDLER) as T;
}

/**
 * A frozen copy of a small plain record whose nested objects are read-only views
 * ({@linkcode ephemeralView}): the cheapest read-only form of a value that is read field by
 * field, often or once (a frame's status snapshot, an event's payload). Its own fields read at
 * full speed; writing one throws a `TypeError` in strict code. Anything but a plain object gets
 * an {@linkcode ephemeralView} instead.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sealedCopy } from "@amber/core";
 * const event = { name: "bash", args: { command: "ls" } };
 * const sealed = sealedCopy(event);
 * assert.ok(Object.isFrozen(sealed));
 * assert.throws(() => {
 *   (sealed.args as { command: string }).command = "rm -rf /";
 * }, TypeError);
 * assert.equal(event.args.command, "ls");
 * ```
 */
export function sealedCopy<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return ephemeralView(value);
  const copy: Record<PropertyKey, unknown> = { ...(value as Record<PropertyKey, unknown>) };
  // Reading the fields from the source, whose shape the engine has seen before, is the quicker.
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    if (typeof field !== "object" || field === null) continue;
    // An empty list (no MCP servers, say) is the common case: a shared frozen one reads the same
    // and costs no view.
    copy[key] = Array.isArray(field) && field.length === 0 ? NO_ITEMS : ephemeralView(field);
  }
  return Object.freeze(copy) as T;
}

const NO_ITEMS: readonly never[] = Object.freeze([]);

// Built-ins whose methods need their internal slots, which a proxy does not have.
function slotted(value: object): boolean {
  return value instanceof Map || value instanceof Set || value instanceof Date ||
    value instanceof RegExp || value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

// Such a built-in is handed out as a copy: writing to it changes nothing the host sees.
function copied(value: object): object | undefined {
  if (!slotted(value)) return undefined;
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
}

/**
 * Freezes `value` and everything reachable from it, in place, and returns it. Plain JSON data
 * (what a JSON Schema or a tool definition is) is the intended use; a frozen value is its own
 * read-only view, so {@linkcode readOnlyView} hands it out at no cost.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deepFreeze, readOnlyView } from "@amber/core";
 * const schema = deepFreeze({ type: "object", properties: { path: { type: "string" } } });
 * assert.ok(Object.isFrozen(schema.properties.path));
 * assert.equal(readOnlyView(schema), schema);
 * ```
 */
export function deepFreeze<T>(value: T): T {
  freezeAll(value);
  return value;
}

// Freezes what is reachable from `value`; true when nothing in it can change any more, which is
// when it may stand for its own view (a frozen Map still has a working `set`).
function freezeAll(value: unknown, seen = new Set<object>()): boolean {
  if (typeof value !== "object" || value === null || frozen.has(value)) return true;
  if (slotted(value)) return false;
  if (seen.has(value)) return true;
  seen.add(value);
  Object.freeze(value);
  let sealed = true;
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
    // A getter may hand out something that changes: never sealed.
    if (descriptor === undefined || !("value" in descriptor)) sealed = false;
    else if (!freezeAll(descriptor.value, seen)) sealed = false;
  }
  if (sealed) frozen.add(value);
  return sealed;
}
