/**
 * Capability bounds: the structural ceiling a plugin declares on what it may contribute. The
 * runtime checks every contribution against it; the default admits nothing.
 *
 * @module
 */

import type { CapabilityKind } from "./capability.ts";
import type { PhaseHookPoint } from "./kernel.ts";
import { ResolutionError } from "./resolution_error.ts";

/**
 * Which ids an axis admits: any id, an exact list, every id under a prefix, or an exact list
 * that must also sit under a prefix.
 */
export type IdBound =
  | { readonly kind: "any" }
  | { readonly kind: "exact"; readonly ids: readonly string[] }
  | { readonly kind: "namespace"; readonly prefix: string }
  | { readonly kind: "namespacedExact"; readonly prefix: string; readonly ids: readonly string[] };

/** The axes a bound has, one per kind of identity a plugin can contribute. */
export type BoundAxis =
  | "tools"
  | "commands"
  | "panels"
  | "segments"
  | "prompts"
  | "flavors"
  | "presets"
  | "wallets"
  | "allowances"
  | "toolGates"
  | "runEndGuards"
  | "actionKinds"
  | "stateKeys";

/**
 * A plugin's capability bound: an {@linkcode IdBound} per axis (absent means none) and the phase
 * hook points it may hook.
 *
 * @example
 * ```ts
 * import { type CapabilityBound, exact, namespace } from "@amber/core";
 * const bound: CapabilityBound = {
 *   tools: namespace("mcp__github__"),
 *   commands: exact("github"),
 *   phaseHooks: ["StepEnd"],
 * };
 * ```
 */
export type CapabilityBound =
  & { readonly [A in BoundAxis]?: IdBound }
  & { readonly phaseHooks?: readonly PhaseHookPoint[] };

/**
 * An axis that admits any id.
 *
 * @example
 * ```ts
 * import { any } from "@amber/core";
 * console.log(any().kind); // "any"
 * ```
 */
export function any(): IdBound {
  return ANY;
}

/**
 * An axis that admits exactly these ids. `exact()` admits nothing, which is the default.
 *
 * @example
 * ```ts
 * import { exact } from "@amber/core";
 * console.log(exact("read", "write")); // { kind: "exact", ids: [ "read", "write" ] }
 * ```
 */
export function exact(...ids: string[]): IdBound {
  return Object.freeze({ kind: "exact", ids: Object.freeze(ids) });
}

/**
 * An axis that admits every id starting with `prefix`.
 *
 * @example
 * ```ts
 * import { namespace } from "@amber/core";
 * console.log(namespace("mcp__").kind); // "namespace"
 * ```
 */
export function namespace(prefix: string): IdBound {
  return Object.freeze({ kind: "namespace", prefix });
}

/**
 * An axis that admits only the listed ids, each of which must also start with `prefix`: a
 * stray id under a valid prefix still fails.
 *
 * @example
 * ```ts
 * import { namespacedExact } from "@amber/core";
 * console.log(namespacedExact("mcp__gh__", ["mcp__gh__issues"]).kind); // "namespacedExact"
 * ```
 */
export function namespacedExact(prefix: string, ids: readonly string[]): IdBound {
  return Object.freeze({ kind: "namespacedExact", prefix, ids: Object.freeze([...ids]) });
}

const ANY: IdBound = Object.freeze({ kind: "any" });

/**
 * Whether `bound` admits `id`. An absent bound admits nothing, like `exact()`.
 *
 * @example
 * ```ts
 * import { admits, exact, namespace, namespacedExact } from "@amber/core";
 * console.log(admits(exact("read"), "read"), admits(exact("read"), "write")); // true false
 * console.log(admits(namespace("mcp__"), "mcp__gh__issues")); // true
 * console.log(admits(namespacedExact("mcp__", ["mcp__a"]), "mcp__b")); // false
 * console.log(admits(undefined, "read")); // false
 * ```
 */
export function admits(bound: IdBound | undefined, id: string): boolean {
  // Runs once per contributed id at every activation: no allocation, no closures.
  if (bound === undefined) return false;
  switch (bound.kind) {
    case "any":
      return true;
    case "exact":
      return bound.ids.includes(id);
    case "namespace":
      return id.startsWith(bound.prefix);
    case "namespacedExact":
      return id.startsWith(bound.prefix) && bound.ids.includes(id);
  }
}

/**
 * A bound as it reads in an error message. An absent bound reads as `exact []`, which is what it
 * admits.
 *
 * @example
 * ```ts
 * import { any, describeIdBound, exact, namespace, namespacedExact } from "@amber/core";
 * console.log(describeIdBound(any())); // "any"
 * console.log(describeIdBound(exact("a", "b"))); // "exact [a, b]"
 * console.log(describeIdBound(undefined)); // "exact []"
 * console.log(describeIdBound(namespace("mcp__"))); // "namespace 'mcp__'"
 * console.log(describeIdBound(namespacedExact("p", ["pa"]))); // "namespacedExact 'p' [pa]"
 * ```
 */
export function describeIdBound(bound: IdBound | undefined): string {
  if (bound === undefined) return "exact []";
  switch (bound.kind) {
    case "any":
      return "any";
    case "exact":
      return `exact [${bound.ids.join(", ")}]`;
    case "namespace":
      return `namespace '${bound.prefix}'`;
    case "namespacedExact":
      return `namespacedExact '${bound.prefix}' [${bound.ids.join(", ")}]`;
  }
}

/** How a provider registry id marks a dialect rather than a preset. */
const FLAVOR_PREFIX = "flavor:";

/**
 * The bound axis that governs a registry id of `kind`. A provider contributes presets and, as
 * `flavor:<name>`, flavors; a hook is bounded by its point, not by an id.
 *
 * @example
 * ```ts
 * import { axisOf } from "@amber/core";
 * console.log(axisOf("tool", "read")); // "tools"
 * console.log(axisOf("provider", "flavor:gemini"), axisOf("provider", "gemini-pro")); // "flavors" "presets"
 * console.log(axisOf("hook", "count")); // "phaseHooks"
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
 * import { boundId } from "@amber/core";
 * console.log(boundId("provider", "flavor:gemini")); // "gemini"
 * console.log(boundId("tool", "flavor:x")); // "flavor:x"
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
 * import { enforceBound, exact } from "@amber/core";
 * const failures = enforceBound("x", { tools: exact("read", "write") }, [
 *   { kind: "tool", ids: ["read", "rm"] },
 * ]);
 * console.log(failures.map((f) => f.message));
 * // [ "plugin 'x' contributes tool 'rm', outside its bound (tools: exact [read, write])" ]
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
