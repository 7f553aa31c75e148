/**
 * The permission rules' say on one tool call, as the kernel takes it: a verdict to act on, or,
 * for a deny rule, the reason the call is blocked. Checked before the gates, so a deny rule
 * stops a call whatever a gate would say.
 *
 * @module
 */

import { describeError } from "../errors.ts";
import type { ToolCall } from "../message.ts";
import type { PermissionVerdict } from "../permissions.ts";
import type { RunOptions } from "./run_types.ts";

/**
 * What `permissions` says of `call`: undefined when no rule matches, the verdict for an ask or
 * allow rule, and why the call is blocked for a deny rule, or when the check throws (a broken
 * check must not let calls through).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkPermissions } from "./_permission_check.ts";
 * const call = { id: "1", name: "bash", arguments: "{}" };
 * const deny = () => ({ effect: "deny" as const, rule: "bash(rm *)", source: "config.yaml" });
 * assert.equal(
 *   checkPermissions(deny, call, {}, "rm x"),
 *   "'bash' is denied by the permission rule 'bash(rm *)' (config.yaml)",
 * );
 * assert.equal(checkPermissions(undefined, call, {}, "rm x"), undefined);
 * ```
 */
export function checkPermissions(
  permissions: RunOptions["permissions"],
  call: ToolCall,
  args: unknown,
  summary: string,
): PermissionVerdict | string | undefined {
  if (permissions === undefined) return undefined;
  let verdict;
  try {
    verdict = permissions({ name: call.name, args, summary });
  } catch (error) {
    return `the permission rules could not be checked for '${call.name}': ${describeError(error)}`;
  }
  if (verdict?.effect !== "deny") return verdict;
  return `'${call.name}' is denied by the permission rule '${verdict.rule}' (${verdict.source})`;
}
