/**
 * What a plugin's process answers to `describe` and `initialize`, checked before the host uses
 * it: a process is not trusted to answer in shape, nor to stay the plugin it said it was.
 *
 * @module
 */

import { type PluginManifest, PROTOCOL_VERSION } from "./protocol.ts";

/** What the runtime itself says of an initialize that returned false. */
export const PLAIN_NO = "initialize returned false";

/** What a described manifest must agree with: the id expected, the version seen before. */
export interface ManifestExpectations {
  /** The plugin id the host expects (its lock entry's, or the first describe's). */
  readonly expectedId?: string;
  /** The version the process described the first time, if it was described before. */
  readonly version?: string;
}

/**
 * Why `value` is not a usable manifest, or undefined when it is: another protocol version, no
 * id, another plugin's id, or a version that changed while amber ran.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { manifestProblem } from "./_process_answers.ts";
 * const manifest = { protocolVersion: 1, id: "greeter", version: "1.0.0" };
 * assert.equal(manifestProblem(manifest, { expectedId: "greeter" }), undefined);
 * assert.equal(
 *   manifestProblem(manifest, { expectedId: "other" }),
 *   "its process describes plugin 'greeter', not 'other'",
 * );
 * assert.match(manifestProblem({ ...manifest, protocolVersion: 2 }, {})!, /version 2/);
 * assert.match(manifestProblem(manifest, { version: "0.9.0" })!, /changed from 0\.9\.0/);
 * ```
 */
export function manifestProblem(
  value: unknown,
  expected: ManifestExpectations,
): string | undefined {
  if (typeof value !== "object" || value === null) {
    return "its process described it with something that is not a manifest";
  }
  const manifest = value as Partial<Record<keyof PluginManifest, unknown>>;
  if (manifest.protocolVersion !== PROTOCOL_VERSION) {
    return `its process speaks protocol version ${String(manifest.protocolVersion)}; ` +
      `this amber speaks ${PROTOCOL_VERSION}`;
  }
  if (typeof manifest.id !== "string") return "its process described it without an id";
  if (expected.expectedId !== undefined && manifest.id !== expected.expectedId) {
    return `its process describes plugin '${manifest.id}', not '${expected.expectedId}'`;
  }
  if (expected.version !== undefined && manifest.version !== expected.version) {
    return `its version changed from ${expected.version} to ${
      String(manifest.version)
    } while amber ran`;
  }
  return undefined;
}

/**
 * Undefined for a usable yes to `initialize`, "" for a plain no, else the process's reason or
 * what is wrong with the answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { initializeProblem } from "./_process_answers.ts";
 * assert.equal(initializeProblem({ ok: true, capabilities: [] }), undefined);
 * assert.equal(initializeProblem({ ok: false }), "");
 * assert.equal(initializeProblem({ ok: false, reason: "no key" }), "no key");
 * assert.equal(initializeProblem(42), "its initialize answered something that is not a result");
 * ```
 */
export function initializeProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) {
    return "its initialize answered something that is not a result";
  }
  const result = value as { ok?: unknown; reason?: unknown; capabilities?: unknown };
  if (result.ok === false) return typeof result.reason === "string" ? result.reason : "";
  if (result.ok !== true || !Array.isArray(result.capabilities)) {
    return "its initialize answered something that is not a result";
  }
  return undefined;
}
