/**
 * Whether a run got any word from the model. A first turn the provider refused or never got (no
 * connection, a rejected key, an unknown model) is no conversation: the session drops the file
 * it created for it, so `amber sessions` lists only conversations there were.
 *
 * @module
 */

import type { EndCause, RunEvent } from "@amber/core/kernel";

// What a model's reply is made of; any of them means the request was answered.
const REPLY_EVENTS: ReadonlySet<string> = new Set([
  "text",
  "reasoning",
  "reasoningSignature",
  "textSignature",
  "toolCallStart",
  "toolCallDelta",
  "toolCallEnd",
]);

/**
 * Watches one run's events for a reply.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ReplyWatch } from "./reply_watch.ts";
 * const refusedKey = {
 *   kind: "error",
 *   failure: { kind: "provider", message: "401: bad key", status: 401, retryable: false },
 * } as const;
 * const watch = new ReplyWatch();
 * watch.see({ type: "stepStart", step: 0 });
 * assert.equal(watch.refused(refusedKey), true);
 * watch.see({ type: "text", delta: "Hel" });
 * assert.equal(watch.refused(refusedKey), false);
 * assert.equal(new ReplyWatch().refused({ kind: "cancelled" }), false);
 * ```
 */
export class ReplyWatch {
  #replied = false;

  /** Notes one of the run's events. */
  see(event: RunEvent): void {
    if (REPLY_EVENTS.has(event.type)) this.#replied = true;
  }

  /**
   * Whether the run ended with the provider's refusal before any word of a reply: a failure
   * with no response or with an error status. A cancel is the user's (the prompt is kept for
   * `--resume`), and a 200 whose stream broke was an answer.
   */
  refused(cause: EndCause): boolean {
    if (this.#replied || cause.kind !== "error" || cause.failure.kind !== "provider") return false;
    const status = cause.failure.status;
    return status === undefined || status < 200 || status > 299;
  }
}
