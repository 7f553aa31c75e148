/**
 * Capability bounds: the structural ceiling a plugin declares on what it may contribute. The
 * runtime checks every contribution against it; the default admits nothing.
 *
 * @module
 */

import type { PhaseHookPoint } from "./hooks.ts";

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
  | "compactors"
  | "actionKinds"
  | "stateKeys";

/**
 * A plugin's capability bound: an {@linkcode IdBound} per axis (absent means none) and the phase
 * hook points it may hook.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type CapabilityBound, exact, namespace } from "@amber/core";
 * const bound: CapabilityBound = {
 *   tools: namespace("mcp__github__"),
 *   commands: exact("github"),
 *   phaseHooks: ["StepEnd"],
 * };
 * assert.equal(bound.tools?.kind, "namespace");
 * assert.equal(bound.panels, undefined); // an absent axis admits nothing
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
 * import assert from "node:assert/strict";
 * import { any } from "@amber/core";
 * assert.equal(any().kind, "any");
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
 * import assert from "node:assert/strict";
 * import { exact } from "@amber/core";
 * assert.deepEqual(exact("read", "write"), { kind: "exact", ids: ["read", "write"] });
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
 * import assert from "node:assert/strict";
 * import { namespace } from "@amber/core";
 * assert.equal(namespace("mcp__").kind, "namespace");
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
 * import assert from "node:assert/strict";
 * import { namespacedExact } from "@amber/core";
 * assert.equal(namespacedExact("mcp__gh__", ["mcp__gh__issues"]).kind, "namespacedExact");
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
 * import assert from "node:assert/strict";
 * import { admits, exact, namespace, namespacedExact } from "@amber/core";
 * assert.equal(admits(exact("read"), "read"), true);
 * assert.equal(admits(exact("read"), "write"), false);
 * assert.equal(admits(namespace("mcp__"), "mcp__gh__issues"), true);
 * assert.equal(admits(namespacedExact("mcp__", ["mcp__a"]), "mcp__b"), false);
 * assert.equal(admits(undefined, "read"), false);
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
 * import assert from "node:assert/strict";
 * import { any, describeIdBound, exact, namespace, namespacedExact } from "@amber/core";
 * assert.equal(describeIdBound(any()), "any");
 * assert.equal(describeIdBound(exact("a", "b")), "exact [a, b]");
 * assert.equal(describeIdBound(undefined), "exact []");
 * assert.equal(describeIdBound(namespace("mcp__")), "namespace 'mcp__'");
 * assert.equal(describeIdBound(namespacedExact("p", ["pa"])), "namespacedExact 'p' [pa]");
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
