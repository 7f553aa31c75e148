/**
 * The ledger invariant a test host checks when a plugin is switched off: every registry holds
 * exactly what it held before the plugin was switched on. Re-exported by `@amber/core/testing`.
 *
 * @module
 */

import { AmberError } from "./errors.ts";
import type { Registries } from "./registries.ts";

/**
 * Disabling a plugin did not return the registries to their baseline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LedgerInvariantError } from "@amber/core/testing";
 * const error = new LedgerInvariantError("x", ["tool:x:greet"], []);
 * assert.equal(error.message, "plugin 'x' left the registries changed: left behind tool:x:greet");
 * ```
 */
export class LedgerInvariantError extends AmberError {
  /** The plugin. */
  readonly pluginId: string;
  /** Entries (`registry:owner:id`) still there that were not before. */
  readonly leftBehind: readonly string[];
  /** Entries of the baseline that are gone. */
  readonly missing: readonly string[];
  /** Creates the error. */
  constructor(pluginId: string, leftBehind: readonly string[], missing: readonly string[]) {
    const parts = [
      ...(leftBehind.length > 0 ? [`left behind ${leftBehind.join(", ")}`] : []),
      ...(missing.length > 0 ? [`removed ${missing.join(", ")}`] : []),
    ];
    super(`plugin '${pluginId}' left the registries changed: ${parts.join("; ")}`);
    this.name = "LedgerInvariantError";
    this.pluginId = pluginId;
    this.leftBehind = leftBehind;
    this.missing = missing;
  }
}

/**
 * Every registry's entries as sorted `registry:owner:id` strings: what the ledger invariant
 * compares.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { registryContents } from "@amber/core/testing";
 * import { createRegistries } from "@amber/registries";
 * assert.deepEqual(registryContents(createRegistries()), []);
 * ```
 */
export function registryContents(registries: Registries): string[] {
  const out: string[] = [];
  for (const [kind, registry] of Object.entries(registries)) {
    for (const entry of (registry as Registries["tool"]).entries()) {
      out.push(`${kind}:${entry.owner}:${entry.id}`);
    }
  }
  return out.sort();
}
