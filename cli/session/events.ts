/**
 * What a session tells its front end: the kernel's run events, and the session's own (a session
 * file opened, a resumed file's torn last line, a provider retry). One stream, so a front end
 * is one function over it; the end of a run in words and as an exit code.
 *
 * @module
 */

import type { EndCause, RunEvent } from "@amber/core/kernel";

/**
 * An event of the session itself, beside the kernel's.
 *
 * - `session`: a session file was opened for this conversation (created by its first turn, or
 *   resumed); `id` is what `--resume` takes.
 * - `torn`: the resumed file's last line was cut off (a crash mid-write); it was moved aside to
 *   `movedTo` and the session goes on from the last whole step.
 * - `retry`: the provider failed in a way worth retrying; `message` says what and when.
 */
export type SessionNotice =
  | { readonly type: "session"; readonly id: string; readonly resumed: boolean }
  | { readonly type: "torn"; readonly id: string; readonly movedTo: string }
  | { readonly type: "retry"; readonly message: string };

/**
 * A model call's token counts as the session passes them on: with `cost`, the dollars of that
 * call, when the model's prices are known (the catalog's, or `models:` in config.yaml). A
 * provider may report a call's usage more than once as it goes; each report prices the call as
 * it stands, so the last one is what the call cost.
 */
export type UsageEvent = Extract<RunEvent, { readonly type: "usage" }> & {
  /** The call's cost in dollars, when the prices are known. */
  readonly cost?: number;
};

/** One event of a session's stream: the kernel's (usage priced), or the session's own. */
export type SessionEvent =
  | Exclude<RunEvent, { readonly type: "usage" }>
  | UsageEvent
  | SessionNotice;

/** Receives a session's events. */
export type SessionListener = (event: SessionEvent) => void;

/**
 * The exit code of a run that ended this way: 0 completed, 130 cancelled, 1 otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exitCodeOf } from "./events.ts";
 * assert.equal(exitCodeOf({ kind: "cancelled" }), 130);
 * assert.equal(exitCodeOf({ kind: "maxSteps", steps: 3 }), 1);
 * ```
 */
export function exitCodeOf(cause: EndCause): number {
  switch (cause.kind) {
    case "completed":
      return 0;
    case "cancelled":
      return 130;
    default:
      return 1;
  }
}

/**
 * A run's end in words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeEnd } from "./events.ts";
 * assert.equal(describeEnd({ kind: "maxSteps", steps: 3 }), "stopped after 3 steps (--max-steps)");
 * ```
 */
export function describeEnd(cause: EndCause): string {
  switch (cause.kind) {
    case "completed":
      return "completed";
    case "cancelled":
      return "cancelled";
    case "maxSteps":
      return `stopped after ${cause.steps} steps (--max-steps)`;
    case "error":
      return cause.failure.kind === "capabilityBound"
        ? cause.failure.error.message
        : cause.failure.message;
  }
}
