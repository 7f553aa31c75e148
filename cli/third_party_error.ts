/**
 * The errors of third-party plugins, and how a load error is told on one line of a plugin list.
 *
 * @module
 */

import { AmberError, PLUGIN_SLUG_PATTERN } from "@amber/core";

/**
 * A third-party plugin could not be added, loaded or removed. The message names the spec or
 * file and the cause; `cause` keeps the underlying error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ThirdPartyPluginError } from "@amber/cli/third-party";
 * const error = new ThirdPartyPluginError("npm:nope", "npm:nope: cannot be imported: not found");
 * assert.equal(error.name, "ThirdPartyPluginError");
 * assert.equal(error.spec, "npm:nope");
 * ```
 */
export class ThirdPartyPluginError extends AmberError {
  /** The spec (or lock file) concerned. */
  readonly spec: string;
  /** Creates the error. */
  constructor(spec: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ThirdPartyPluginError";
    this.spec = spec;
  }
}

/**
 * A recorded plugin's source no longer has the hash it was added with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginHashMismatchError } from "@amber/cli/third-party";
 * const error = new PluginHashMismatchError("/p/mod.ts", "/p/mod.ts", "aa", "bb");
 * assert.equal(error.name, "PluginHashMismatchError");
 * assert.ok(error.message.includes("run `amber plugins add /p/mod.ts` again"));
 * ```
 */
export class PluginHashMismatchError extends ThirdPartyPluginError {
  /** The file whose bytes changed. */
  readonly file: string;
  /** The hash recorded when it was added. */
  readonly expected: string;
  /** The hash of the file now. */
  readonly actual: string;
  /** Creates the error. */
  constructor(spec: string, file: string, expected: string, actual: string) {
    super(
      spec,
      `${file}: refused: its sha256 changed since it was added (expected ${expected}, found ${actual}); run \`amber plugins add ${spec}\` again to accept it`,
    );
    this.name = "PluginHashMismatchError";
    this.file = file;
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * A file a recorded plugin imports changed or went missing since its module graph was recorded:
 * the plugin is refused before any of its code runs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginGraphChangedError } from "@amber/cli/third-party";
 * const error = new PluginGraphChangedError("/p/mod.ts", "greeter", "/p/helper.ts", "changed");
 * assert.equal(error.name, "PluginGraphChangedError");
 * assert.equal(
 *   error.message,
 *   "/p/helper.ts: refused: plugin 'greeter' imports it and it changed since it was added; " +
 *     "run `amber plugins update greeter` to accept it",
 * );
 * ```
 */
export class PluginGraphChangedError extends ThirdPartyPluginError {
  /** The plugin's id. */
  readonly id: string;
  /** The file that changed or is missing. */
  readonly file: string;
  /** Whether it has other bytes or cannot be read. */
  readonly state: "changed" | "missing";
  /** Creates the error. */
  constructor(spec: string, id: string, file: string, state: "changed" | "missing") {
    const what = state === "changed" ? "it changed since it was added" : "it is missing";
    super(
      spec,
      `${file}: refused: plugin '${id}' imports it and ${what}; run \`amber plugins update ${id}\` to accept it`,
    );
    this.name = "PluginGraphChangedError";
    this.id = id;
    this.file = file;
    this.state = state;
  }
}

/**
 * `error` on one line, as a plugin list shows a failed plugin's reason: Deno's import errors
 * run over several lines with colours (a code frame, then `at file:line`), so this keeps the
 * message and, when Deno said, where. amber's own errors already name the file, so their class
 * name is left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeLoadError } from "./third_party_error.ts";
 * const error = new SyntaxError("Unexpected token\n\n  1 | export {,\n    at file:///p/mod.js:1:9");
 * assert.equal(
 *   describeLoadError(error),
 *   "SyntaxError: Unexpected token (at file:///p/mod.js:1:9)",
 * );
 * const missing = new TypeError(
 *   "Could not find a matching package for 'npm:x@1' in the node_modules directory. Run `deno install`.",
 * );
 * assert.match(describeLoadError(missing), /^npm:x@1 is not installed where amber runs/);
 * ```
 */
export function describeLoadError(error: unknown): string {
  const described = error instanceof AmberError ? error.message : error instanceof Error
    // Deno wraps a module that does not parse in a TypeError whose message names the real one.
    ? (/^[A-Z]\w*Error: /.test(error.message) ? error.message : `${error.name}: ${error.message}`)
    : String(error);
  // fetch says only "fetch failed"; the reason (DNS, refused, TLS) is in its cause.
  const cause = error instanceof Error && error.cause instanceof Error &&
      !described.includes(error.cause.message)
    ? `: ${error.cause.message}`
    : "";
  // deno-lint-ignore no-control-regex
  const text = `${described}${cause}`.replace(/\x1b\[[0-9;]*m/g, "");
  // Run from the checkout, amber reads its npm packages as `deno task` (or `deno install`) set them
  // up (`--node-modules-dir=manual`), so a package it was not installed with is not fetched on the
  // fly: say what to do instead.
  const missing = /Could not find a matching package for '(npm:[^']+)' in the node_modules/
    .exec(text);
  if (missing !== null) {
    return `${missing[1]} is not installed where amber runs (amber reads its npm packages as ` +
      `they were installed): add it to amber's imports (\`deno add ${missing[1]}\` in amber's ` +
      `folder), then run \`deno task install\` again`;
  }
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "");
  const where = lines.slice(1).find((line) => line.startsWith("at "));
  return where === undefined ? lines[0] ?? "" : `${lines[0]} (${where})`;
}

/**
 * Why a third-party plugin may not have the id `id`, or `undefined` when it may: a dotted id
 * (`mcp.notes`) is reserved for the plugins amber realizes for a session, such as an MCP
 * server's `mcp.<name>`, so that no plugin someone adds can stand in for one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reservedIdProblem } from "./third_party_error.ts";
 * assert.equal(reservedIdProblem("notes"), undefined);
 * assert.match(reservedIdProblem("mcp.notes") ?? "", /dotted ids are reserved/);
 * ```
 */
export function reservedIdProblem(id: string): string | undefined {
  if (PLUGIN_SLUG_PATTERN.test(id)) return undefined;
  return `its id '${id}' has a dot, and dotted ids are reserved for the plugins amber ` +
    "realizes for a session (mcp.NAME for an MCP server); a third-party plugin needs an id " +
    "of lowercase letters, digits and '_'";
}
