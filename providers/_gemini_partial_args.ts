/**
 * Function-call arguments Gemini streams in pieces (`functionCall.partialArgs`, Gemini 3 with
 * `streamFunctionCallArguments`): each piece names one leaf by a JSON path (RFC 9535, in the
 * simple form `$.a.b`, `$['a b']`, `$.list[0]`) and carries its value, or the next stretch of
 * it for a string whose piece says `willContinue`. Private to the package.
 *
 * @module
 */

/** One piece of streamed arguments, as Gemini writes it (`PartialArg`). */
export interface PartialArg {
  /** Where the value goes, e.g. `$.a.b` or `$.list[0]`. */
  jsonPath?: string;
  /** A string, or the next stretch of one. */
  stringValue?: string;
  /** A number (protobuf's JSON writes NaN and the infinities as strings). */
  numberValue?: number | string;
  /** A boolean. */
  boolValue?: boolean;
  /** Null (`"NULL_VALUE"`). */
  nullValue?: unknown;
  /** More of this path's string is to come. */
  willContinue?: boolean;
}

type Key = string | number;
type Container = Record<string, unknown> | unknown[];

/**
 * The segments of a JSON path, or undefined when it is not one this reader knows (then the
 * piece is dropped rather than put somewhere the model did not mean).
 */
export function pathSegments(path: string): (string | number)[] | undefined {
  if (!path.startsWith("$")) return undefined;
  const keys: Key[] = [];
  let i = 1;
  while (i < path.length) {
    const c = path[i];
    if (c === ".") {
      let end = i + 1;
      while (end < path.length && path[end] !== "." && path[end] !== "[") end++;
      if (end === i + 1) return undefined;
      keys.push(path.slice(i + 1, end));
      i = end;
    } else if (c === "[") {
      const quote = path[i + 1];
      if (quote === "'" || quote === '"') {
        // A quoted name: backslash escapes the next character.
        let name = "";
        let j = i + 2;
        for (; j < path.length && path[j] !== quote; j++) {
          if (path[j] === "\\" && j + 1 < path.length) j++;
          name += path[j];
        }
        if (path[j + 1] !== "]") return undefined;
        keys.push(name);
        i = j + 2;
      } else {
        const end = path.indexOf("]", i);
        if (end < 0) return undefined;
        const index = Number(path.slice(i + 1, end));
        if (!Number.isSafeInteger(index) || index < 0 || end === i + 1) return undefined;
        keys.push(index);
        i = end + 1;
      }
    } else {
      return undefined;
    }
  }
  return keys;
}

/** The value a piece carries, or undefined when it carries none. */
function valueOf(piece: PartialArg): unknown {
  if (piece.stringValue !== undefined) return piece.stringValue;
  if (piece.numberValue !== undefined) {
    // Protobuf's JSON writes NaN and the infinities as strings; JSON has no such numbers.
    const number = Number(piece.numberValue);
    return Number.isFinite(number) ? number : null;
  }
  if (piece.boolValue !== undefined) return piece.boolValue;
  if (piece.nullValue !== undefined) return null;
  return undefined;
}

// Own properties only, defined rather than assigned: a key the model wrote as `__proto__` is
// data, never the object's prototype.
function own(node: Container, key: Key): unknown {
  return Object.hasOwn(node, key) ? (node as Record<Key, unknown>)[key] : undefined;
}

// A name goes into an object and an index into an array, at most one past its end: arguments
// stream in order, and an index far beyond the end would make one short line of the stream an
// array of millions of nulls.
function fits(node: Container, key: Key): boolean {
  return typeof key === "number" ? Array.isArray(node) && key <= node.length : !Array.isArray(node);
}

function put(node: Container, key: Key, value: unknown): void {
  Object.defineProperty(node, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * Builds one call's arguments from its pieces, in the order they came.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ArgumentsBuilder } from "./_gemini_partial_args.ts";
 * const args = new ArgumentsBuilder();
 * args.apply([{ jsonPath: "$.id", stringValue: "A", willContinue: true }]);
 * args.apply([{ jsonPath: "$.id", stringValue: "B" }, { jsonPath: "$.n[0]", numberValue: 1 }]);
 * assert.equal(args.json(), '{"id":"AB","n":[1]}');
 * ```
 */
export class ArgumentsBuilder {
  readonly #root: Record<string, unknown> = {};
  // The paths of strings whose last piece said more is to come.
  readonly #continuing = new Set<string>();

  /** Merges whole arguments (`functionCall.args`) into what has been built. */
  merge(args: unknown): void {
    if (args === null || typeof args !== "object" || Array.isArray(args)) return;
    for (const [key, value] of Object.entries(args)) put(this.#root, key, value);
  }

  /** Applies pieces of streamed arguments; what is not a list of pieces is dropped. */
  apply(pieces: readonly PartialArg[]): void {
    if (!Array.isArray(pieces)) return;
    for (const piece of pieces) {
      if (piece === null || typeof piece !== "object") continue;
      const path = piece.jsonPath;
      if (typeof path !== "string") continue;
      const value = valueOf(piece);
      if (value === undefined) continue;
      const keys = pathSegments(path);
      if (keys === undefined || keys.length === 0) continue;
      const parent = this.#parentOf(keys);
      if (parent === undefined) continue;
      const key = keys[keys.length - 1];
      const held = own(parent, key);
      const more = piece.willContinue === true;
      if (this.#continuing.has(path) && typeof held === "string" && typeof value === "string") {
        put(parent, key, held + value);
      } else {
        put(parent, key, value);
      }
      if (more) this.#continuing.add(path);
      else this.#continuing.delete(path);
    }
  }

  /** The arguments as JSON text. */
  json(): string {
    return JSON.stringify(this.#root);
  }

  // The container the last key goes into, made on the way (an array before an index, an
  // object before a name); undefined, and nothing made, when the path runs through a value
  // that is neither, through a container of the other kind, or past an array's end.
  #parentOf(keys: readonly Key[]): Container | undefined {
    let node: Container = this.#root;
    let i = 0;
    // Down the containers already there.
    for (; i < keys.length - 1; i++) {
      if (!fits(node, keys[i])) return undefined;
      const next = own(node, keys[i]);
      if (next === undefined) break;
      if (next === null || typeof next !== "object") return undefined;
      node = next as Container;
    }
    // The rest is made anew, so an index below here is into an empty array.
    if (!fits(node, keys[i])) return undefined;
    for (let j = i + 1; j < keys.length; j++) {
      if (typeof keys[j] === "number" && keys[j] !== 0) return undefined;
    }
    for (; i < keys.length - 1; i++) {
      const next: Container = typeof keys[i + 1] === "number" ? [] : {};
      put(node, keys[i], next);
      node = next;
    }
    return node;
  }
}
