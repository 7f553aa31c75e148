/**
 * Error types raised by the plugin runtime. Each names what was wrong and where, and keeps the
 * underlying failure as `cause`.
 *
 * @module
 */

/**
 * Base class of every error amber raises on purpose.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AmberError } from "@amber/core";
 * const error = new AmberError("something went wrong");
 * assert.equal(error.name, "AmberError");
 * ```
 */
export class AmberError extends Error {
  /** Creates an error with a message and an optional cause. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AmberError";
  }
}

/**
 * A plugin could not be registered: a bad id or version, or an id that is already taken.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRegistrationError } from "@amber/core";
 * const error = new PluginRegistrationError("hello", "plugin id 'hello' is already registered");
 * assert.equal(error.pluginId, "hello");
 * ```
 */
export class PluginRegistrationError extends AmberError {
  /** The id of the plugin that was refused. */
  readonly pluginId: string;
  /** Creates the error for the plugin `pluginId`. */
  constructor(pluginId: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PluginRegistrationError";
    this.pluginId = pluginId;
  }
}

/**
 * A plugin id that the runtime does not know. The message lists the ids that exist.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UnknownPluginError } from "@amber/core";
 * const error = new UnknownPluginError("nope", ["hello", "metrics"]);
 * assert.equal(error.message, "unknown plugin 'nope'; known plugins: hello, metrics");
 * ```
 */
export class UnknownPluginError extends AmberError {
  /** The id that was asked for. */
  readonly pluginId: string;
  /** The ids the runtime knows. */
  readonly known: readonly string[];
  /** Creates the error for `pluginId`, listing the `known` ids. */
  constructor(pluginId: string, known: readonly string[]) {
    super(
      `unknown plugin '${pluginId}'; known plugins: ${known.length ? known.join(", ") : "(none)"}`,
    );
    this.name = "UnknownPluginError";
    this.pluginId = pluginId;
    this.known = known;
  }
}

/**
 * A `plugin.conf` file that cannot be read or parsed. Carries the file path and, when the
 * content is at fault, the 1-based line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginStateError } from "@amber/core";
 * const error = new PluginStateError("/cfg/plugins/hello/plugin.conf", 2, "expected 'key = value'");
 * assert.equal(error.message, "/cfg/plugins/hello/plugin.conf:2: expected 'key = value'");
 * ```
 */
export class PluginStateError extends AmberError {
  /** The file at fault. */
  readonly path: string;
  /** The 1-based line at fault, or 0 when the whole file is. */
  readonly line: number;
  /** Creates the error for `path` at `line` (0 for the whole file). */
  constructor(path: string, line: number, detail: string, options?: ErrorOptions) {
    super(`${path}${line > 0 ? `:${line}` : ""}: ${detail}`, options);
    this.name = "PluginStateError";
    this.path = path;
    this.line = line;
  }
}

/**
 * Something a plugin did went wrong: it threw, rejected, timed out or returned an invalid value.
 * The host reports it and keeps running.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginFaultError } from "@amber/core";
 * const error = new PluginFaultError("hello", "tick", new Error("boom"));
 * assert.equal(error.message, "plugin 'hello' failed in tick: boom");
 * ```
 */
export class PluginFaultError extends AmberError {
  /** The plugin at fault. */
  readonly pluginId: string;
  /** Where it failed: `initialize`, `tick`, `shutdown`, a capability name, an event type... */
  readonly where: string;
  /** Creates the error; the message quotes the cause's message. */
  constructor(pluginId: string, where: string, cause: unknown) {
    super(`plugin '${pluginId}' failed in ${where}: ${describeError(cause)}`, { cause });
    this.name = "PluginFaultError";
    this.pluginId = pluginId;
    this.where = where;
  }
}

/**
 * Turns anything thrown into a one-line description.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeError } from "@amber/core";
 * assert.equal(describeError(new TypeError("bad")), "TypeError: bad");
 * assert.equal(describeError("plain"), "plain");
 * ```
 */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    return error.name === "Error" ? error.message : `${error.name}: ${error.message}`;
  }
  return String(error);
}

/**
 * What kind of value `value` is, for a message that says what was expected instead: `null`,
 * `an array`, `an object`, or its `typeof`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeValueType } from "@amber/core";
 * assert.equal(describeValueType([]), "an array");
 * assert.equal(describeValueType(null), "null");
 * assert.equal(describeValueType(5), "number");
 * ```
 */
export function describeValueType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}
