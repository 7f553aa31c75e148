/**
 * One tool execution under its deadline and the user's cancel. At the deadline (or the cancel)
 * the tool's abort signal fires; a tool that has not settled `graceMs` later is abandoned: the
 * kernel stops waiting for it and says so in its result. An abandoned tool may still be running;
 * whatever it returns or throws afterwards is dropped.
 *
 * @module
 */

import { describeError } from "../errors.ts";
import { DeadlineError } from "../limits.ts";
import type { ToolResult } from "../tool.ts";

/** How one execution ended. */
export type ToolRun =
  /** It settled by itself (or, after the user's cancel, within the grace). */
  | { readonly kind: "settled"; readonly result: ToolResult }
  /** Its deadline passed and it stopped within the grace; the result says it timed out. */
  | { readonly kind: "timedOut"; readonly result: ToolResult }
  /** It did not stop within the grace after its cancel; the result says it was abandoned. */
  | {
    readonly kind: "abandoned";
    readonly result: ToolResult;
    readonly after: "deadline" | "cancel";
  };

/** The limits of one execution. */
export interface ToolLimits {
  /** How long the tool may run, in milliseconds. */
  readonly deadlineMs: number;
  /** How long a cancelled tool is waited for before it is abandoned, in milliseconds. */
  readonly graceMs: number;
  /** The tool as messages name it: "tool 'x' of plugin 'p'". */
  readonly what: string;
}

/**
 * Runs `execute` with an abort signal that fires at the deadline or when `cancel` aborts, and
 * waits at most the grace after that.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runTool } from "./_tool_deadline.ts";
 * const limits = { deadlineMs: 10, graceMs: 10, what: "tool 'stuck' of plugin 'p'" };
 * const never = new AbortController().signal;
 * const quick = await runTool(() => Promise.resolve({ ok: true, output: "hi" }), limits, never);
 * assert.equal(quick.kind, "settled");
 * const stuck = await runTool(() => new Promise(() => {}), limits, never);
 * assert.equal(stuck.kind, "abandoned");
 * assert.match(stuck.result.error ?? "", /did not stop within 10 ms of its cancel/);
 * ```
 */
export async function runTool(
  execute: (signal: AbortSignal) => ToolResult | Promise<ToolResult>,
  limits: ToolLimits,
  cancel: AbortSignal,
): Promise<ToolRun> {
  const controller = new AbortController();
  let running: Promise<ToolResult>;
  try {
    running = Promise.resolve(execute(controller.signal));
  } catch (error) {
    running = Promise.reject(error);
  }
  running = running.catch((error): ToolResult => ({
    ok: false,
    output: "",
    error: `${limits.what} failed: ${describeError(error)}`,
  }));
  const first = await settles(running, limits.deadlineMs, cancel);
  if (first.done) return { kind: "settled", result: first.result };
  const after = first.why;
  controller.abort(
    after === "deadline" ? new DeadlineError(limits.what, limits.deadlineMs) : cancel.reason,
  );
  const second = await settles(running, limits.graceMs, undefined);
  if (second.done) {
    if (after === "cancel") return { kind: "settled", result: second.result };
    return {
      kind: "timedOut",
      result: {
        ok: false,
        output: second.result.output,
        error: `${limits.what} did not finish within ${limits.deadlineMs} ms and was cancelled`,
      },
    };
  }
  const why = after === "deadline"
    ? `did not finish within ${limits.deadlineMs} ms and `
    : "was cancelled and ";
  return {
    kind: "abandoned",
    after,
    result: {
      ok: false,
      output: "",
      error: `${limits.what} ${why}did not stop within ${limits.graceMs} ms of its cancel; ` +
        "it was abandoned (it may still be running)",
    },
  };
}

type Settled =
  | { readonly done: true; readonly result: ToolResult }
  | { readonly done: false; readonly why: "deadline" | "cancel" };

// Waits for `running`, at most `ms`, and no longer than `cancel` stays unaborted. Leaves no timer
// or listener behind.
function settles(
  running: Promise<ToolResult>,
  ms: number,
  cancel: AbortSignal | undefined,
): Promise<Settled> {
  if (cancel?.aborted) return Promise.resolve({ done: false, why: "cancel" });
  return new Promise<Settled>((resolve) => {
    const onCancel = (): void => finish({ done: false, why: "cancel" });
    const timer = setTimeout(() => finish({ done: false, why: "deadline" }), ms);
    cancel?.addEventListener("abort", onCancel, { once: true });
    function finish(settled: Settled): void {
      clearTimeout(timer);
      cancel?.removeEventListener("abort", onCancel);
      resolve(settled);
    }
    running.then((result) => finish({ done: true, result }));
  });
}
