/**
 * Checking what a plugin contributed against its capability bound: which axis governs a
 * registry id, and one resolution error per contribution outside the bound.
 *
 * @module
 */

import { admits, type BoundAxis, type CapabilityBound, describeIdBound } from "./bound.ts";
import type { CapabilityKind } from "./contribution.ts";
import type { PhaseHookPoint } from "./hooks.ts";
import { ResolutionError } from "./resolution_error.ts";

/** How a provider registry id marks a dialect rather than a preset. */
const FLAVOR_PREFIX = "flavor:";

/**
 * The bound axis that governs a registry id of `kind`. A provider contributes presets and, as
 * `flavor:<name>`, flavors; a hook is bounded by its point, not by an id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { axisOf } from "./bound_check.ts";
 * assert.equal(axisOf("tool", "read"), "tools");
 * assert.equal(axisOf("provider", "flavor:gemini"), "flavors");
 * assert.equal(axisOf("provider", "gemini-pro"), "presets");
 * assert.equal(axisOf("hook", "count"), "phaseHooks");
 * ```
 */
export function axisOf(kind: Exclude<CapabilityKind, "hook">, id: string): BoundAxis;
/** Any kind: a hook's axis is its point list, `phaseHooks`. */
export function axisOf(kind: CapabilityKind, id: string): BoundAxis | "phaseHooks";
export function axisOf(kind: CapabilityKind, id: string): BoundAxis | "phaseHooks" {
  switch (kind) {
    case "tool":
      return "tools";
    case "command":
      return "commands";
    case "panel":
      return "panels";
    case "status":
      return "segments";
    case "prompt":
      return "prompts";
    case "provider":
      return id.startsWith(FLAVOR_PREFIX) ? "flavors" : "presets";
    case "wallet":
      return "wallets";
    case "allowance":
      return "allowances";
    case "gate":
      return "toolGates";
    case "guard":
      return "runEndGuards";
    case "compactor":
      return "compactors";
    case "action":
      return "actionKinds";
    case "state":
      return "stateKeys";
    case "hook":
      return "phaseHooks";
  }
}

/**
 * The id a bound names for a registry id: the bare flavor for a provider's `flavor:<name>`, the
 * id itself otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { boundId } from "./bound_check.ts";
 * assert.equal(boundId("provider", "flavor:gemini"), "gemini");
 * assert.equal(boundId("tool", "flavor:x"), "flavor:x");
 * ```
 */
export function boundId(kind: CapabilityKind, id: string): string {
  return kind === "provider" && id.startsWith(FLAVOR_PREFIX) ? id.slice(FLAVOR_PREFIX.length) : id;
}

/** What a plugin actually contributed, as checked against its bound. */
export interface BoundContribution {
  /** The registry it went to. */
  readonly kind: CapabilityKind;
  /** The registry ids it added (tool names, a command root, presets, `flavor:<name>`...). */
  readonly ids: readonly string[];
  /** For a hook: the point it runs at. */
  readonly point?: PhaseHookPoint;
}

/** How an axis's ids read in a message, singular. */
const NOUN: { readonly [A in BoundAxis | "phaseHooks"]: string } = {
  tools: "tool",
  commands: "command",
  panels: "panel",
  segments: "status segment",
  prompts: "prompt block",
  flavors: "flavor",
  presets: "preset",
  wallets: "wallet",
  allowances: "allowance",
  toolGates: "tool gate",
  runEndGuards: "run-end guard",
  compactors: "compactor",
  actionKinds: "action kind",
  stateKeys: "state key",
  phaseHooks: "hook",
};

/**
 * Checks a plugin's actual contributions against its declared bound: every id must be admitted
 * by its axis, and every hook's point must be among `bound.phaseHooks`. Returns one `"bound"`
 * {@linkcode ResolutionError} per violation, in contribution order; empty when all are admitted.
 * An absent bound, axis or `phaseHooks` admits nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exact } from "@amber/core";
 * import { enforceBound } from "./bound_check.ts";
 * const failures = enforceBound("x", { tools: exact("read", "write") }, [
 *   { kind: "tool", ids: ["read", "rm"] },
 * ]);
 * assert.deepEqual(failures.map((f) => f.message), [
 *   "plugin 'x' contributes tool 'rm', outside its bound (tools: exact [read, write])",
 * ]);
 * ```
 */
export function enforceBound(
  pluginId: string,
  bound: CapabilityBound | undefined,
  contributions: readonly BoundContribution[],
): ResolutionError[] {
  const failures: ResolutionError[] = [];
  for (const contribution of contributions) {
    const { kind, ids } = contribution;
    if (kind === "hook") {
      const point = contribution.point;
      const points = bound?.phaseHooks;
      if (point !== undefined && points !== undefined && points.includes(point)) continue;
      const names = ids.length > 0 ? ` '${ids.join("', '")}'` : "";
      failures.push(
        new ResolutionError({
          rule: "bound",
          pluginIds: [pluginId],
          axis: "phaseHooks",
          id: point ?? ids[0] ?? "",
          message: point === undefined
            // A hook that does not say where it runs cannot be shown to be inside the bound.
            ? `plugin '${pluginId}' contributes hook${names} without a phase hook point`
            : `plugin '${pluginId}' contributes hook${names} at ${point}, outside its bound ` +
              `(phaseHooks: [${(points ?? []).join(", ")}])`,
        }),
      );
      continue;
    }
    for (const id of ids) {
      const axis = axisOf(kind, id);
      const bare = boundId(kind, id);
      const axisBound = bound?.[axis];
      if (admits(axisBound, bare)) continue;
      failures.push(
        new ResolutionError({
          rule: "bound",
          pluginIds: [pluginId],
          axis,
          id: bare,
          message: `plugin '${pluginId}' contributes ${NOUN[axis]} '${bare}', outside its bound ` +
            `(${axis}: ${describeIdBound(axisBound)})`,
        }),
      );
    }
  }
  return failures;
}
