/**
 * Resolution errors: why a plugin selection does not resolve into one execution environment.
 * Each failure names its rule, the plugins concerned and, where there is one, the axis and the
 * offending id; {@linkcode CapabilityBoundError} gathers every failure of one resolution.
 *
 * @module
 */

import type { BoundAxis } from "./bound.ts";
import { AmberError } from "./errors.ts";

/**
 * Which resolution rule a selection broke: an unknown or repeated plugin id, a config section
 * that does not decode, a contribution outside its bound, a missing or wrong-version dependency,
 * a dependency cycle, or two plugins contributing the same id.
 */
export type ResolutionRule =
  | "unknown-plugin"
  | "repeated-plugin"
  | "config"
  | "bound"
  | "missing-dependency"
  | "version-mismatch"
  | "dependency-cycle"
  | "duplicate-id";

/**
 * Where a resolution failure sits: a bound axis, the phase hook points, the plugin selection
 * itself, or a plugin's config section.
 */
export type ResolutionAxis = BoundAxis | "phaseHooks" | "plugins" | "config";

/** What a {@linkcode ResolutionError} is made of. */
export interface ResolutionErrorInit {
  /** The rule that was broken. */
  readonly rule: ResolutionRule;
  /** The plugin or plugins concerned; for a duplicate id, both. */
  readonly pluginIds: readonly string[];
  /** The whole message: what was wrong and where. */
  readonly message: string;
  /** The axis, when the failure is about one. */
  readonly axis?: ResolutionAxis;
  /** The offending id. */
  readonly id?: string;
  /** A cycle path (first equals last), or a config path. */
  readonly path?: readonly string[];
}

/**
 * One reason a plugin selection does not resolve.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ResolutionError } from "@amber/core";
 * const error = new ResolutionError({
 *   rule: "missing-dependency",
 *   pluginIds: ["a"],
 *   id: "b",
 *   message: "plugin 'a' requires 'b', which is not installed",
 * });
 * assert.equal(error.name, "ResolutionError");
 * assert.equal(error.rule, "missing-dependency");
 * assert.equal(error.id, "b");
 * ```
 */
export class ResolutionError extends AmberError {
  /** The rule that was broken. */
  readonly rule: ResolutionRule;
  /** The plugin or plugins concerned; for a duplicate id, both. */
  readonly pluginIds: readonly string[];
  /** The axis, when the failure is about one. */
  declare readonly axis?: ResolutionAxis;
  /** The offending id. */
  declare readonly id?: string;
  /** A cycle path (first equals last), or a config path. */
  declare readonly path?: readonly string[];

  /** Creates the error; `options.cause` keeps an underlying failure (a config decode error...). */
  constructor(init: ResolutionErrorInit, options?: ErrorOptions) {
    super(init.message, options);
    this.name = "ResolutionError";
    this.rule = init.rule;
    this.pluginIds = Object.freeze([...init.pluginIds]);
    // Absent fields stay absent rather than `undefined`, so errors compare structurally.
    if (init.axis !== undefined) this.axis = init.axis;
    if (init.id !== undefined) this.id = init.id;
    if (init.path !== undefined) this.path = Object.freeze([...init.path]);
  }
}

/**
 * A plugin selection that does not resolve: the run ends with a capability-bound failure before
 * the first model call, and this error lists every reason, one line each.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CapabilityBoundError, ResolutionError } from "@amber/core";
 * const error = new CapabilityBoundError([
 *   new ResolutionError({
 *     rule: "dependency-cycle",
 *     pluginIds: ["a"],
 *     path: ["a", "b", "a"],
 *     message: "dependency cycle: a -> b -> a",
 *   }),
 * ]);
 * assert.equal(
 *   error.message,
 *   "the plugin selection does not resolve:\ndependency cycle: a -> b -> a",
 * );
 * ```
 */
export class CapabilityBoundError extends AmberError {
  /** Every failure, in the order resolution found them. */
  readonly failures: readonly ResolutionError[];

  /** Creates the error from the failures of one resolution. */
  constructor(failures: readonly ResolutionError[], options?: ErrorOptions) {
    super(
      `the plugin selection does not resolve:\n${failures.map((f) => f.message).join("\n")}`,
      options,
    );
    this.name = "CapabilityBoundError";
    this.failures = Object.freeze([...failures]);
  }
}
