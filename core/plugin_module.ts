/**
 * What a plugin module exports, for hosts that load plugins at run time (`amber plugins add`):
 * the default export is a {@linkcode Plugin} or a {@linkcode PluginFactory} that receives the
 * {@linkcode PluginHostApi}. The shape is checked by duck typing, never with `instanceof`: a
 * plugin loaded from a file or a package has its own copy of every module it imports, so a
 * class identity check would refuse a perfectly good plugin.
 *
 * @module
 */

import { any, exact, namespace, namespacedExact } from "./bound.ts";
import { AmberError, describeError } from "./errors.ts";
import { type Plugin, PluginCategory } from "./plugin.ts";
import { pluginProblem } from "./plugin_validation.ts";

/**
 * The version of the {@linkcode PluginHostApi} contract; it moves only when the API object
 * changes in a way a plugin could notice.
 */
export const PLUGIN_HOST_API_VERSION = 1;

/**
 * What the host hands a plugin factory: the helpers a plugin needs to describe itself, so a
 * plugin loaded from disk or a registry needs no run-time import of `@amber/core` at all (a
 * type-only import, erased at load, is enough).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPluginHostApi } from "@amber/core";
 * const api = createPluginHostApi("0.1.0");
 * assert.deepEqual(api.exact("greet"), { kind: "exact", ids: ["greet"] });
 * assert.equal(api.PluginCategory.Tools, "tools");
 * ```
 */
export interface PluginHostApi {
  /** The contract's version, {@linkcode PLUGIN_HOST_API_VERSION}. */
  readonly apiVersion: number;
  /** The version of the host (amber's version for the `amber` command). */
  readonly version: string;
  /** A bound axis admitting any id; see `any` in `@amber/core`. */
  readonly any: typeof any;
  /** A bound axis admitting exactly these ids. */
  readonly exact: typeof exact;
  /** A bound axis admitting every id under a prefix. */
  readonly namespace: typeof namespace;
  /** A bound axis admitting exactly these ids, each under a prefix. */
  readonly namespacedExact: typeof namespacedExact;
  /** The common plugin categories. */
  readonly PluginCategory: typeof PluginCategory;
}

/**
 * A plugin module's default export when it wants the host API: called once per load.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPluginHostApi, type PluginFactory } from "@amber/core";
 * const factory: PluginFactory = (api) => ({
 *   id: "quiet",
 *   version: "1.0.0",
 *   name: "Quiet",
 *   category: api.PluginCategory.Other,
 *   bound: { prompts: api.exact("quiet") },
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [{ kind: "prompt", name: "quiet", priority: 400, render: () => "Be brief." }],
 * });
 * const plugin = await factory(createPluginHostApi("0.1.0"));
 * assert.equal(plugin.category, "other");
 * assert.deepEqual(plugin.bound, { prompts: { kind: "exact", ids: ["quiet"] } });
 * ```
 */
export type PluginFactory = (api: PluginHostApi) => Plugin | Promise<Plugin>;

/**
 * The host API for a host of version `version`: frozen, the same helpers `@amber/core` exports.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPluginHostApi } from "@amber/core";
 * assert.equal(createPluginHostApi("1.2.3").version, "1.2.3");
 * ```
 */
export function createPluginHostApi(version: string): PluginHostApi {
  return Object.freeze({
    apiVersion: PLUGIN_HOST_API_VERSION,
    version,
    any,
    exact,
    namespace,
    namespacedExact,
    PluginCategory,
  });
}

/**
 * A plugin module's export is not a plugin (or a factory of one), or the factory failed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginShapeError } from "@amber/core";
 * const error = new PluginShapeError("id is missing");
 * assert.equal(error.name, "PluginShapeError");
 * assert.equal(error.message, "id is missing");
 * ```
 */
export class PluginShapeError extends AmberError {
  /** Creates the error; `cause` is what a factory threw, when it threw. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PluginShapeError";
  }
}

/**
 * What is wrong with `value` as a {@linkcode Plugin}, or `undefined` when it has the shape of
 * one: the detail of {@linkcode pluginProblem}, the same check `PluginRuntime.register` makes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginShapeProblem } from "@amber/core";
 * assert.equal(pluginShapeProblem({ id: "x" }), "version is missing (a semver string such as 1.0.0)");
 * assert.equal(pluginShapeProblem(42), "it is a number, not an object");
 * assert.equal(pluginShapeProblem({ id: "x", version: "1.0.0+" }), "version '1.0.0+' is not semver (e.g. 1.0.0)");
 * ```
 */
export function pluginShapeProblem(value: unknown): string | undefined {
  return pluginProblem(value)?.detail;
}

/**
 * Turns a module's default export into a plugin: a plugin object as is, a function called with
 * `api` (and awaited). Throws a {@linkcode PluginShapeError} that says what is wrong otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPluginHostApi, pluginFromExport } from "@amber/core";
 * const plugin = await pluginFromExport(
 *   (api: { version: string }) => ({
 *     id: "v",
 *     version: "1.0.0",
 *     name: `On amber ${api.version}`,
 *     initialize: () => true,
 *     shutdown: () => {},
 *     capabilities: () => [],
 *   }),
 *   createPluginHostApi("0.1.0"),
 * );
 * assert.equal(plugin.name, "On amber 0.1.0");
 * ```
 */
export async function pluginFromExport(value: unknown, api: PluginHostApi): Promise<Plugin> {
  if (value === undefined) {
    throw new PluginShapeError(
      "there is no default export: export default a plugin, or a function (api) => plugin",
    );
  }
  let plugin: unknown = value;
  if (typeof value === "function") {
    try {
      plugin = await (value as (api: PluginHostApi) => unknown)(api);
    } catch (error) {
      throw new PluginShapeError(`the default export (a factory) threw: ${describeError(error)}`, {
        cause: error,
      });
    }
  }
  const problem = pluginShapeProblem(plugin);
  if (problem !== undefined) {
    const what = typeof value === "function"
      ? "the default export (a factory) returned something that is not a plugin"
      : "the default export is not a plugin";
    throw new PluginShapeError(
      `${what}: ${problem}; export default a plugin, or a function (api) => plugin`,
    );
  }
  return plugin as Plugin;
}
