/**
 * What every registry speaks: the capability kinds (the dispatch keys), the handle of one
 * installed contribution, and what installing a capability returns. It imports nothing, so
 * every contract and every engine can build on it.
 *
 * @module
 */

/**
 * The dispatch key: which registry installs a capability. The eight harness kinds (tool, prompt,
 * status, panel, command, provider, wallet, allowance) and the six kernel extension kinds
 * (hook, gate, guard, compactor, action, state).
 */
export type CapabilityKind =
  | "tool"
  | "prompt"
  | "status"
  | "panel"
  | "command"
  | "provider"
  | "wallet"
  | "allowance"
  | "hook"
  | "gate"
  | "guard"
  | "compactor"
  | "action"
  | "state";

/**
 * Every kind, in the order registries are listed: the eight harness kinds, then the kernel's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CAPABILITY_KINDS } from "@amber/core";
 * assert.equal(CAPABILITY_KINDS.length, 14);
 * ```
 */
export const CAPABILITY_KINDS: readonly CapabilityKind[] = Object.freeze([
  "tool",
  "prompt",
  "status",
  "panel",
  "command",
  "provider",
  "wallet",
  "allowance",
  "hook",
  "gate",
  "guard",
  "compactor",
  "action",
  "state",
]);

/** What the ledger records: a capability kind, or an event subscription made through a context. */
export type ContributionKind = CapabilityKind | "subscription";

/**
 * The handle of one installed contribution.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Contribution } from "@amber/core";
 * const tools = new Map([["greet", "plugin hello"]]);
 * const contribution: Contribution = {
 *   kind: "tool",
 *   name: "greet",
 *   ids: ["greet"],
 *   remove: () => tools.delete("greet"),
 * };
 * contribution.remove();
 * contribution.remove(); // idempotent
 * assert.equal(tools.size, 0);
 * ```
 */
export interface Contribution {
  /** What kind of thing it is. */
  readonly kind: ContributionKind;
  /** The capability's name. */
  readonly name: string;
  /** The ids it added to its registry (tool names, a command root, presets...). */
  readonly ids: readonly string[];
  /** Takes it out again. Idempotent. */
  readonly remove: () => void;
}

/**
 * What installing a capability returned: installed, declined (nothing to install, which is
 * normal), or failed (the plugin is broken).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { declined, failed, type InstallResult } from "@amber/core";
 * const results: InstallResult[] = [declined("no sub-agent service"), failed("bad schema")];
 * assert.deepEqual(results.map((r) => r.status), ["declined", "failed"]);
 * ```
 */
export type InstallResult =
  | { readonly status: "installed"; readonly contribution: Contribution }
  | { readonly status: "declined"; readonly reason: string }
  | {
    readonly status: "failed";
    readonly error: string;
    /** When the failure is a collision: the id, and who holds it already. */
    readonly conflict?: { readonly id: string; readonly owner: string };
  };

/**
 * An installed result.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { installed } from "@amber/core";
 * const result = installed({ kind: "tool", name: "greet", ids: ["greet"], remove: () => {} });
 * assert.equal(result.status, "installed");
 * ```
 */
export function installed(contribution: Contribution): InstallResult {
  return { status: "installed", contribution };
}

/**
 * A declined result: nothing to install, and the plugin stays active.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { declined } from "@amber/core";
 * assert.equal(declined("no host todos").status, "declined");
 * ```
 */
export function declined(reason: string): InstallResult {
  return { status: "declined", reason };
}

/**
 * A failed result: the plugin is marked Failed. A collision names the id and its holder, so the
 * runtime can report it as a duplicate.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { failed } from "@amber/core";
 * assert.equal(failed("tool name 'x y' is not valid").status, "failed");
 * ```
 */
export function failed(
  error: string,
  conflict?: { readonly id: string; readonly owner: string },
): InstallResult {
  return conflict === undefined
    ? { status: "failed", error }
    : { status: "failed", error, conflict };
}
