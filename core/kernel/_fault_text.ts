/**
 * How the kernel words a fault of plugin code in results and diagnostics, after the name of what
 * faulted: "did not finish within 30 ms" for a deadline, "failed: <what it threw>" otherwise.
 *
 * @module
 */

import { describeError } from "../errors.ts";
import { DeadlineError } from "../limits.ts";

/**
 * The phrase for `error`, to follow the name of the plugin code that raised it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DeadlineError } from "@amber/core";
 * import { faultText } from "./_fault_text.ts";
 * assert.equal(faultText(new DeadlineError("hook 'h'", 30)), "did not finish within 30 ms");
 * assert.equal(faultText(new TypeError("x is undefined")), "failed: TypeError: x is undefined");
 * ```
 */
export function faultText(error: unknown): string {
  if (error instanceof DeadlineError) return `did not finish within ${error.ms} ms`;
  return `failed: ${describeError(error)}`;
}
