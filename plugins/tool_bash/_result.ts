/**
 * The `bash` tool's result, the same wherever the command ran (a local process group or an
 * editor's terminal): how it ended, with its output.
 *
 * @module
 */

import type { ToolResult } from "@amber/core";

/** What stopped a command before it ended on its own, if anything did. */
export type Stopped = "timeout" | "cancelled" | undefined;

/** How a command ended on its own: its exit code and the signal, as far as they are known. */
export interface CommandEnd {
  /** The exit code; absent when the runner did not say (an editor's terminal may not). */
  readonly code?: number;
  /** The signal that ended it, if one did. */
  readonly signal?: string;
}

/**
 * The result of a command whose (already cut and redacted) output is `text`. A stopped
 * command's result is an error that carries its output so far, also as the result's `output`
 * for a front end to keep in the call's row; a command that ended is a success with its exit
 * status on the last line, since the command did run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandResult } from "./_result.ts";
 * assert.deepEqual(commandResult("hi\n", undefined, 1000, { code: 0 }), {
 *   ok: true,
 *   output: "hi\n[exit code 0]",
 *   data: { exitCode: 0 },
 * });
 * assert.equal(commandResult("", "timeout", 1000, {}).error, "timed out after 1000 ms: the command was stopped. It printed nothing.");
 * ```
 */
export function commandResult(
  text: string,
  stopped: Stopped,
  timeoutMs: number,
  end: CommandEnd,
): ToolResult {
  const sofar = text === "" ? " It printed nothing." : ` Output so far:\n${text}`;
  if (stopped === "cancelled") {
    return { ok: false, output: text, error: `cancelled: the command was stopped.${sofar}` };
  }
  if (stopped === "timeout") {
    return {
      ok: false,
      output: text,
      error: `timed out after ${timeoutMs} ms: the command was stopped.${sofar}`,
    };
  }
  const code = end.code === undefined ? "" : `exit code ${end.code}`;
  const by = end.signal === undefined ? "" : `ended by ${end.signal}`;
  const status = code === "" && by === ""
    ? "[exit code unknown]"
    : `[${code}${code && by ? ", " : ""}${by}]`;
  return {
    ok: true,
    output: `${text === "" ? "(no output)\n" : text.endsWith("\n") ? text : `${text}\n`}${status}`,
    ...(end.code === undefined ? {} : { data: { exitCode: end.code } }),
  };
}
