/**
 * A tool's parameters, one rule for every place that holds a tool: a JSON Schema object is used
 * as it is; a Standard Schema describes itself with `~standard.jsonSchema.input` at
 * draft-2020-12 (the top-level `$schema` dropped, since several providers refuse it) and checks
 * arguments with its own `validate`, whose issues read as `path: message`. The tools registry
 * applies it in amber's process, and a sandboxed plugin's process before its tools cross.
 *
 * @module
 */

import { messageOf } from "./_message_of.ts";
import { describeValueType } from "./errors.ts";
import type { JsonSchema, StandardJsonSchema, StandardResult } from "./tool.ts";

/** A tool's parameters, ready: the JSON Schema, and the Standard Schema's check when it has one. */
export interface PreparedParameters {
  /** What the model is shown and, without `standard`, what arguments are checked against. */
  readonly schema: JsonSchema;
  /** The Standard Schema's own check; absent for a JSON Schema. */
  readonly standard?: StandardJsonSchema["~standard"];
}

/**
 * Prepares `parameters`, or says why it cannot, starting with `label` ("tool 'x' from plugin
 * 'y'").
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { prepareParameters } from "@amber/core";
 * const schema = { type: "object", properties: { path: { type: "string" } } };
 * assert.deepEqual(prepareParameters(schema, "tool 'read'"), { schema });
 * assert.equal(
 *   prepareParameters(null, "tool 'read'"),
 *   "tool 'read' has no parameters schema: expected a JSON Schema object or a Standard Schema",
 * );
 * ```
 */
export function prepareParameters(parameters: unknown, label: string): PreparedParameters | string {
  if (typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) {
    return `${label} has no parameters schema: expected a JSON Schema object or a Standard Schema`;
  }
  if (!("~standard" in parameters)) return { schema: parameters as JsonSchema };
  const standard = (parameters as StandardJsonSchema)["~standard"];
  if (typeof standard?.validate !== "function") {
    return `${label} has a Standard Schema without a validate function`;
  }
  const convert = standard.jsonSchema?.input;
  if (typeof convert !== "function") {
    return `${label} has a Standard Schema (${standard.vendor}) that cannot describe itself ` +
      `as JSON Schema (no ~standard.jsonSchema)`;
  }
  let converted: Record<string, unknown>;
  try {
    converted = convert({ target: "draft-2020-12" });
  } catch (error) {
    return `${label}: its parameters cannot be converted to JSON Schema: ${messageOf(error)}`;
  }
  if (typeof converted !== "object" || converted === null) {
    return `${label}: its parameters converted to ${
      describeValueType(converted)
    }, not a JSON Schema object`;
  }
  const { $schema: _dialect, ...schema } = converted;
  return { schema, standard };
}

/**
 * Checks `value` with a Standard Schema: the value it yields, or its issues as one line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkStandardArguments } from "@amber/core";
 * const standard = {
 *   version: 1 as const,
 *   vendor: "example",
 *   validate: (value: unknown) =>
 *     typeof value === "string" ? { value } : { issues: [{ message: "not text", path: ["a"] }] },
 * };
 * assert.deepEqual(await checkStandardArguments(standard, "x"), { ok: true, value: "x" });
 * assert.deepEqual(await checkStandardArguments(standard, 1), { ok: false, error: "a: not text" });
 * ```
 */
export async function checkStandardArguments(
  standard: StandardJsonSchema["~standard"],
  value: unknown,
): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  const outcome: StandardResult = await standard.validate(value);
  if (outcome.issues === undefined) return { ok: true, value: outcome.value };
  const { issues } = outcome;
  if (issues.length === 0) return { ok: false, error: "arguments: invalid" };
  const error = issues.map((issue) => {
    const keys = (issue.path ?? []).map((segment) =>
      String(typeof segment === "object" && segment !== null ? segment.key : segment)
    );
    return `${keys.length ? keys.join(".") : "arguments"}: ${issue.message}`;
  }).join("; ");
  return { ok: false, error };
}
