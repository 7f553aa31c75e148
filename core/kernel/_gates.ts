/**
 * The gate chain of one tool call, failing closed: the host gate, then every plugin gate in
 * dependency order, each under its deadline. An outcome outside the closed set (undefined, null,
 * an unknown kind, a field missing), a throw or a deadline overrun is a block that names the gate
 * and its plugin. A gate can only narrow: a block anywhere wins over what came before it, so a
 * gate that asks for a confirmation or supplies a result never skips a later plugin's block.
 *
 * @module
 */

import type { GateCapability, GateInput, GateOutcome } from "../hooks.ts";
import { timeoutFor, withDeadline } from "../limits.ts";
import type { NamedEntry } from "../registry.ts";
import type { PluginRuntime } from "../runtime.ts";
import { isToolResult } from "../tool.ts";
import { faultText } from "./_fault_text.ts";

/** What the gate chain needs of the runtime: its config (deadlines) and its diagnostics. */
export type GateRuntime = Pick<PluginRuntime, "config" | "report">;

/**
 * Decides one call: `block` when any gate blocks (or misbehaves); else the first `setResult` or
 * `schedule` (the tool does not run); else the first `requireConfirmation`; else `allow`. The host
 * gate is consulted first, and its block ends the chain before any plugin gate runs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideGates } from "./_gates.ts";
 * const reported: string[] = [];
 * const runtime = { config: () => ({ plugins: {} }), report: (d: { message: string }) => reported.push(d.message) };
 * const gate = (name: string, outcome: unknown) => ({
 *   name,
 *   owner: `p_${name}`,
 *   capability: { kind: "gate" as const, name, check: () => outcome as never },
 * });
 * const input = { call: { id: "1", name: "bash", arguments: "{}" }, args: {}, state: new Map() };
 * const outcome = await decideGates(runtime, undefined, [gate("odd", { kind: "bogus" })], input);
 * assert.equal(outcome.kind, "block");
 * assert.match(outcome.kind === "block" ? outcome.reason : "", /tool gate 'odd' of plugin 'p_odd'/);
 * const asked = await decideGates(runtime, undefined, [
 *   gate("ask", { kind: "requireConfirmation", correlationId: "c1" }),
 *   gate("wall", { kind: "block", reason: "no" }),
 * ], input);
 * assert.equal(asked.kind, "block");
 * ```
 */
export async function decideGates(
  runtime: GateRuntime,
  hostGate: ((input: GateInput) => GateOutcome | Promise<GateOutcome>) | undefined,
  gates: readonly NamedEntry<GateCapability>[],
  input: GateInput,
): Promise<GateOutcome> {
  let decided: GateOutcome | undefined;
  let confirm: GateOutcome | undefined;
  const take = (outcome: GateOutcome): void => {
    if (outcome.kind === "requireConfirmation") confirm ??= outcome;
    else if (outcome.kind !== "allow") decided ??= outcome;
  };
  if (hostGate !== undefined) {
    const outcome = await consult(runtime, "the host gate", "core", () => hostGate(input));
    if (outcome.kind === "block") return outcome;
    take(outcome);
  }
  for (const entry of gates) {
    const what = `tool gate '${entry.name}' of plugin '${entry.owner}'`;
    const outcome = await consult(runtime, what, entry.owner, () => entry.capability.check(input));
    if (outcome.kind === "block") return outcome;
    take(outcome);
  }
  return decided ?? confirm ?? { kind: "allow" };
}

// One gate under its deadline; whatever goes wrong is a block naming it, reported once.
async function consult(
  runtime: GateRuntime,
  what: string,
  owner: string,
  check: () => GateOutcome | Promise<GateOutcome>,
): Promise<GateOutcome> {
  let raw: unknown;
  try {
    raw = await withDeadline(check, timeoutFor(runtime.config(), "gate", owner), what);
  } catch (error) {
    const message = faultText(error);
    runtime.report({ pluginId: owner, where: what, message, error });
    return { kind: "block", reason: `${what} ${message}, so the call is blocked` };
  }
  const outcome = checkOutcome(raw);
  if (typeof outcome === "string") {
    runtime.report({ pluginId: owner, where: what, message: `returned ${outcome}` });
    return { kind: "block", reason: `${what} returned ${outcome}, so the call is blocked` };
  }
  if (outcome.kind === "block") {
    return { kind: "block", reason: `blocked by ${what}: ${outcome.reason}` };
  }
  return outcome;
}

/**
 * The outcome `value` as a well-formed {@linkcode GateOutcome} (a fresh object, so the gate
 * cannot change it afterwards), or what is wrong with it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkOutcome } from "./_gates.ts";
 * assert.deepEqual(checkOutcome({ kind: "allow" }), { kind: "allow" });
 * assert.equal(checkOutcome(undefined), "undefined instead of an outcome");
 * assert.equal(
 *   checkOutcome({ kind: "requireConfirmation" }),
 *   "'requireConfirmation' without a string correlationId",
 * );
 * ```
 */
export function checkOutcome(value: unknown): GateOutcome | string {
  if (typeof value !== "object" || value === null) {
    return `${describe(value)} instead of an outcome`;
  }
  const outcome = value as Record<string, unknown>;
  const kind = outcome.kind;
  switch (kind) {
    case "allow":
      return { kind };
    case "block":
      return typeof outcome.reason === "string" && outcome.reason !== ""
        ? { kind, reason: outcome.reason }
        : "'block' without a reason";
    case "setResult":
      return isToolResult(outcome.result)
        ? { kind, result: { ...outcome.result } }
        : "'setResult' without a valid result ({ok, output, error?})";
    case "requireConfirmation":
      if (!nonEmpty(outcome.correlationId)) {
        return "'requireConfirmation' without a string correlationId";
      }
      if (outcome.reason !== undefined && typeof outcome.reason !== "string") {
        return "'requireConfirmation' with a reason that is not a string";
      }
      return outcome.reason === undefined
        ? { kind, correlationId: outcome.correlationId }
        : { kind, correlationId: outcome.correlationId, reason: outcome.reason };
    case "schedule":
      if (!nonEmpty(outcome.correlationId)) return "'schedule' without a string correlationId";
      if (outcome.actionKind !== undefined && typeof outcome.actionKind !== "string") {
        return "'schedule' with an actionKind that is not a string";
      }
      return outcome.actionKind === undefined
        ? { kind, correlationId: outcome.correlationId }
        : { kind, correlationId: outcome.correlationId, actionKind: outcome.actionKind };
    default:
      return `an unknown outcome kind ${describe(kind)}`;
  }
}

function nonEmpty(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return `'${value.slice(0, 40)}'`;
  if (typeof value === "object") return Array.isArray(value) ? "an array" : "an object";
  return typeof value === "undefined" ? "undefined" : `a ${typeof value}`;
}
