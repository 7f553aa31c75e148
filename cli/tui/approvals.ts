/**
 * Approval prompts: the kernel's `ask` callback, answered by the user in a dialog: allow once,
 * allow always for this session, or deny. The kernel decides when to ask and what each answer
 * means; this only asks. "Always" is also remembered here for the rest of the session (the
 * kernel's own memory lasts one turn), and a later call of the same tool is answered `always`
 * without a prompt, still through the kernel's path. A confirmation a tool gate asked for is
 * always put to the user, as the kernel does.
 *
 * @module
 */

import type { ApprovalAnswer, ApprovalRequest } from "@amber/core";
import type { Dialogs } from "./dialogs.ts";

const ANSWERS: readonly ApprovalAnswer[] = ["once", "always", "deny"];

/**
 * The session's approvals.
 *
 * @example
 * ```ts
 * import { Dialogs } from "./dialogs.ts";
 * import { Approvals } from "./approvals.ts";
 * const dialogs = new Dialogs();
 * const approvals = new Approvals(dialogs);
 * const request = { call: { id: "c1", name: "bash", arguments: "{}" }, args: {}, summary: "$ ls" };
 * const first = approvals.ask(request);
 * dialogs.key({ name: "text", text: "a", ctrl: false, alt: false, shift: false });
 * console.log(await first, await approvals.ask(request)); // "always" "always"
 * ```
 */
export class Approvals {
  readonly #dialogs: Dialogs;
  readonly #always = new Set<string>();

  /** Approvals asked through `dialogs`. */
  constructor(dialogs: Dialogs) {
    this.#dialogs = dialogs;
  }

  /** The tools allowed for the rest of the session. */
  get allowed(): readonly string[] {
    return [...this.#always];
  }

  /** Asks about one call; a dismissed prompt (Esc, Ctrl-C, a cancelled turn) denies. */
  async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalAnswer> {
    const name = request.call.name;
    if (request.correlationId === undefined && this.#always.has(name)) return "always";
    const why = request.correlationId === undefined ? "" : " (a tool gate asks to confirm)";
    const index = await this.#dialogs.pick(`Allow ${name}: ${request.summary}${why}`, [
      { label: "allow once", hotkey: "y" },
      { label: `allow always for this session (every ${name} call)`, hotkey: "a" },
      { label: "deny", hotkey: "n" },
    ], signal);
    const answer = index === undefined ? "deny" : ANSWERS[index];
    if (answer === "always") this.#always.add(name);
    return answer;
  }

  /** Forgets every "always" (a new session starts). */
  reset(): void {
    this.#always.clear();
  }
}
