// A tool's parameters as they cross to the host, and the check of its arguments in the plugin
// process. The host's tool registry (registries/tools.ts) converts and validates a Standard
// Schema the same way in-process; core cannot import a registry, so the two rules (convert with
// `~standard.jsonSchema.input` at draft-2020-12 without the top-level `$schema`, report issues as
// `path: message`) are kept alike here, and the sandbox tests compare the two.

import type { JsonSchema, StandardJsonSchema, StandardResult } from "../tool.ts";

/** A tool's parameters prepared for the crossing: the JSON Schema, and the check when it has one. */
export interface PreparedParameters {
  /** What the host shows the model and validates against first. */
  readonly schema: JsonSchema;
  /** The Standard Schema's own check, run in the plugin process; absent for a raw schema. */
  readonly standard?: StandardJsonSchema["~standard"];
}

/**
 * Converts `parameters` for the crossing, or says why it cannot, in the words of the registry
 * (`label` is "tool 'x' from plugin 'y'").
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
    return `${label}: its parameters converted to ${typeof converted}, not a JSON Schema object`;
  }
  // Several providers refuse a top-level `$schema`; the registry drops it too.
  const { $schema: _dialect, ...schema } = converted;
  return { schema, standard };
}

/** Checks `value` with a Standard Schema: the value it yields, or the issues as one line. */
export async function checkArguments(
  standard: StandardJsonSchema["~standard"],
  value: unknown,
): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  const outcome: StandardResult = await standard.validate(value);
  if (outcome.issues === undefined) return { ok: true, value: outcome.value };
  return { ok: false, error: issuesLine(outcome.issues) };
}

function issuesLine(issues: Extract<StandardResult, { issues: unknown }>["issues"]): string {
  if (issues.length === 0) return "arguments: invalid";
  return issues.map((issue) => {
    const keys = (issue.path ?? []).map((segment) =>
      String(typeof segment === "object" && segment !== null ? segment.key : segment)
    );
    return `${keys.length ? keys.join(".") : "arguments"}: ${issue.message}`;
  }).join("; ");
}

/** The message of a thrown value. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    // A value whose toString throws still deserves a message rather than a second throw.
    return "unknown error";
  }
}
