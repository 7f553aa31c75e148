/**
 * Approval prompts: the session's approval question, put to the user in a dialog: allow once,
 * allow always for this session, or deny. The kernel decides when to ask and what each answer
 * means, and the session remembers "always" (and answers for it without asking); this only
 * asks. A confirmation a tool gate asked for says so.
 *
 * @module
 */

import type { ApprovalAnswer, ApprovalRequest } from "@amber/core/kernel";
import type { Dialogs } from "./dialogs.ts";

const ANSWERS: readonly ApprovalAnswer[] = ["once", "always", "deny"];

/**
 * Approval questions asked in dialogs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Dialogs } from "./dialogs.ts";
 * import { Approvals } from "./approvals.ts";
 * const dialogs = new Dialogs();
 * const approvals = new Approvals(dialogs);
 * const request = { call: { id: "c1", name: "bash", arguments: "{}" }, args: {}, summary: "$ ls" };
 * const answer = approvals.ask(request);
 * dialogs.key({ name: "text", text: "a", ctrl: false, alt: false, shift: false });
 * assert.equal(await answer, "always");
 * ```
 */
export class Approvals {
  readonly #dialogs: Dialogs;

  /** Approvals asked through `dialogs`. */
  constructor(dialogs: Dialogs) {
    this.#dialogs = dialogs;
  }

  /** Asks about one call; a dismissed prompt (Esc, Ctrl-C, a cancelled turn) denies. */
  async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalAnswer> {
    const name = request.call.name;
    if (request.correlationId !== undefined) {
      // A gate's question is asked every time, so "always" is not offered.
      const why = request.reason ?? "a tool gate asks to confirm";
      const index = await this.#dialogs.pick(`Allow ${name}: ${request.summary} (${why})`, [
        { label: "allow once", hotkey: "y" },
        { label: "deny", hotkey: "n" },
      ], signal);
      return index === 0 ? "once" : "deny";
    }
    const index = await this.#dialogs.pick(`Allow ${name}: ${request.summary}`, [
      { label: "allow once", hotkey: "y" },
      { label: `allow always for this session (every ${name} call)`, hotkey: "a" },
      { label: "deny", hotkey: "n" },
    ], signal);
    return index === undefined ? "deny" : ANSWERS[index];
  }
}
