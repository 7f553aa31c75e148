/**
 * The one check of a plugin's shape, shared by `PluginRuntime.register` and by hosts that load
 * plugins at run time (`amber plugins add`), so both accept exactly the same plugins. Versions
 * are strict semver 2.0.0: no leading zeros, no empty pre-release or build part.
 *
 * @module
 */

import { PluginRegistrationError } from "./errors.ts";
import { type Plugin, PLUGIN_ID_PATTERN } from "./plugin.ts";

// C0 and C1 controls and DEL: an escape sequence starts with one.
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The field of a plugin a {@linkcode PluginValidationError} is about. */
export type PluginField =
  | "plugin"
  | "id"
  | "version"
  | "name"
  | "initialize"
  | "shutdown"
  | "capabilities"
  | "tick"
  | "liveVersion"
  | "description"
  | "category"
  | "enabledByDefault"
  | "requires"
  | "bound"
  | "config";

/** What is wrong with a plugin: the field, and the problem in words (without the plugin's id). */
export interface PluginProblem {
  /** The field concerned. */
  readonly field: PluginField;
  /** What is wrong with it, e.g. `version '01.0.0' is not semver (e.g. 1.0.0)`. */
  readonly detail: string;
}

/**
 * A value is not a valid plugin. The message names the plugin (its id, or what it was), where it
 * came from when that is known, and the field; {@linkcode PluginValidationError.field} says
 * which field. It is a {@linkcode PluginRegistrationError}, which `register` has always thrown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginValidationError, validatePlugin } from "@amber/core";
 * assert.throws(
 *   () => validatePlugin({ id: "tiny", version: "01.0.0" }, "/p/tiny.ts"),
 *   (error: unknown) => {
 *     assert.ok(error instanceof PluginValidationError);
 *     assert.equal(error.name, "PluginValidationError");
 *     assert.equal(error.field, "version");
 *     assert.equal(
 *       error.message,
 *       "plugin 'tiny' (/p/tiny.ts): version '01.0.0' is not semver (e.g. 1.0.0)",
 *     );
 *     return true;
 *   },
 * );
 * ```
 */
export class PluginValidationError extends PluginRegistrationError {
  /** The field that is wrong. */
  readonly field: PluginField;
  /** Where the plugin came from, when the caller said. */
  readonly source?: string;
  /** Creates the error for plugin `pluginId` (or what stood in its place). */
  constructor(
    pluginId: string,
    field: PluginField,
    message: string,
    options?: ErrorOptions & { readonly source?: string },
  ) {
    super(pluginId, message, options);
    this.name = "PluginValidationError";
    this.field = field;
    if (options?.source !== undefined) this.source = options.source;
  }
}

// Semver 2.0.0, section 9 and 10: numeric identifiers without leading zeros, identifiers never
// empty, in the pre-release part as in the core version.
const NUMBER = "(?:0|[1-9]\\d*)";
const PRE_ID = `(?:${NUMBER}|\\d*[A-Za-z-][0-9A-Za-z-]*)`;
const BUILD_ID = "[0-9A-Za-z-]+";
const SEMVER = new RegExp(
  `^${NUMBER}\\.${NUMBER}\\.${NUMBER}(?:-${PRE_ID}(?:\\.${PRE_ID})*)?(?:\\+${BUILD_ID}(?:\\.${BUILD_ID})*)?$`,
);

function notA(field: PluginField, what: string): PluginProblem {
  return { field, detail: `${field} is not ${what}` };
}

function objectOrAbsent(item: unknown): boolean {
  return item === undefined || (typeof item === "object" && item !== null);
}

/**
 * Whether `version` is a strict semver 2.0.0 version.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSemver } from "@amber/core";
 * assert.equal(isSemver("1.0.0-rc.1+build.5"), true);
 * assert.equal(isSemver("01.0.0"), false);
 * assert.equal(isSemver("1.0.0-"), false);
 * assert.equal(isSemver("1.0.0+"), false);
 * ```
 */
export function isSemver(version: string): boolean {
  return SEMVER.test(version);
}

/**
 * What is wrong with `value` as a {@linkcode Plugin}, or `undefined` when it is one. Duck typing
 * only: a plugin loaded from a file has its own copies of every module, so nothing is checked
 * with `instanceof`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginProblem } from "@amber/core";
 * assert.deepEqual(pluginProblem({ id: "x", version: "1.0.0-" }), {
 *   field: "version",
 *   detail: "version '1.0.0-' is not semver (e.g. 1.0.0)",
 * });
 * ```
 */
export function pluginProblem(value: unknown): PluginProblem | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    return { field: "plugin", detail: `it is ${kind}, not an object` };
  }
  const plugin = value as Record<string, unknown>;
  const id = plugin.id;
  if (typeof id !== "string") {
    return { field: "id", detail: "id is missing (a slug such as my_plugin)" };
  }
  if (!PLUGIN_ID_PATTERN.test(id)) {
    return {
      field: "id",
      detail: `id '${id}' is not a slug: use lowercase letters, digits and '_'`,
    };
  }
  const version = plugin.version;
  if (typeof version !== "string") {
    return { field: "version", detail: "version is missing (a semver string such as 1.0.0)" };
  }
  if (!SEMVER.test(version)) {
    return { field: "version", detail: `version '${version}' is not semver (e.g. 1.0.0)` };
  }
  if (typeof plugin.name !== "string" || plugin.name.trim() === "") {
    return { field: "name", detail: "name is empty or missing" };
  }
  // Shown in lists and prompts as it is: an escape sequence in it would be the terminal's.
  if (CONTROL.test(plugin.name)) {
    return { field: "name", detail: "name holds a control character" };
  }
  // Field by field rather than a loop over the names: a load whose name varies is megamorphic,
  // and this runs for every plugin a runtime registers (measured: bench/runtime_bench.ts).
  if (typeof plugin.initialize !== "function") return notA("initialize", "a function");
  if (typeof plugin.shutdown !== "function") return notA("shutdown", "a function");
  if (typeof plugin.capabilities !== "function") return notA("capabilities", "a function");
  if (plugin.tick !== undefined && typeof plugin.tick !== "function") {
    return notA("tick", "a function");
  }
  if (plugin.liveVersion !== undefined && typeof plugin.liveVersion !== "function") {
    return notA("liveVersion", "a function");
  }
  if (plugin.description !== undefined && typeof plugin.description !== "string") {
    return notA("description", "a string");
  }
  if (plugin.description !== undefined && CONTROL.test(plugin.description)) {
    return { field: "description", detail: "description holds a control character" };
  }
  if (plugin.category !== undefined && CONTROL.test(String(plugin.category))) {
    return { field: "category", detail: "category holds a control character" };
  }
  if (plugin.category !== undefined && typeof plugin.category !== "string") {
    return notA("category", "a string");
  }
  if (plugin.enabledByDefault !== undefined && typeof plugin.enabledByDefault !== "boolean") {
    return notA("enabledByDefault", "a boolean");
  }
  if (!objectOrAbsent(plugin.requires)) return notA("requires", "an object");
  if (!objectOrAbsent(plugin.bound)) return notA("bound", "an object");
  if (!objectOrAbsent(plugin.config)) return notA("config", "an object");
  const requires = plugin.requires as Record<string, unknown> | undefined;
  if (requires !== undefined) {
    for (const dependency in requires) {
      if (typeof requires[dependency] !== "string") {
        return {
          field: "requires",
          detail: `requires.${dependency} must be a semver range string ("*" for any)`,
        };
      }
    }
  }
  const config = plugin.config as { "~standard"?: { validate?: unknown } } | undefined;
  if (config !== undefined && typeof config["~standard"]?.validate !== "function") {
    return {
      field: "config",
      detail: "config is not a Standard Schema (a zod 4 schema, for one)",
    };
  }
  return undefined;
}

/**
 * Returns `value` as a {@linkcode Plugin} when it is one; throws a
 * {@linkcode PluginValidationError} naming the plugin, `source` (where it came from, when
 * given) and the field otherwise. `register` and `amber plugins add` both call it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validatePlugin } from "@amber/core";
 * const plugin = validatePlugin({
 *   id: "tiny",
 *   version: "1.0.0",
 *   name: "Tiny",
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [],
 * });
 * assert.equal(plugin.id, "tiny");
 * assert.throws(() => validatePlugin({ id: "Bad-Id" }), /plugin id 'Bad-Id' is not a slug/);
 * ```
 */
export function validatePlugin(value: unknown, source?: string): Plugin {
  const problem = pluginProblem(value);
  if (problem === undefined) return value as Plugin;
  const id = (value as { id?: unknown } | null)?.id;
  const from = source === undefined ? "" : ` (${source})`;
  const message = problem.field === "plugin"
    ? `plugin${from}: ${problem.detail}`
    : problem.field === "id"
    ? `plugin ${problem.detail}${from}`
    : `plugin '${String(id)}'${from}: ${problem.detail}`;
  return fail(String(id), problem.field, message, source);
}

function fail(id: string, field: PluginField, message: string, source?: string): never {
  throw new PluginValidationError(id, field, message, source === undefined ? {} : { source });
}
