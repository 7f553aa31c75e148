/**
 * Approval prompts: the session's approval question, put to the user in a dialog: allow once,
 * allow always for this session, allow always in this workspace (a rule saved in the
 * workspace's `.amber/permissions.yaml`, see `permission_rules.ts`), or deny. The kernel decides
 * when to ask and what each answer means, and the session remembers "always" (and answers for it
 * without asking); this only asks, and saves the workspace rule when that is the answer. A
 * confirmation a tool gate or an ask rule asked for says so, and offers no "always". When the
 * request says what the call would change in a file, the question shows the diff.
 *
 * @module
 */

import type { ApprovalAnswer, ApprovalRequest } from "@amber/core/kernel";
import { suggestWorkspaceRule } from "../permission_rules.ts";
import type { DialogChoice, Dialogs } from "./dialogs.ts";
import { renderChange } from "./diff_view.ts";

/** Where the prompt saves a rule the user chose to keep for the workspace. */
export interface WorkspaceRules {
  /** The workspace root. */
  readonly workspace: string;
  /** Saves `rule` as an allow rule of the workspace (and trusts the file as written). */
  allowInWorkspace(rule: string): Promise<void>;
}

/**
 * Approval questions asked in dialogs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Dialogs } from "./dialogs.ts";
 * import { Approvals } from "./approvals.ts";
 * const dialogs = new Dialogs();
 * const saved: string[] = [];
 * const approvals = new Approvals(dialogs, {
 *   workspace: "/w",
 *   allowInWorkspace: (rule) => Promise.resolve(void saved.push(rule)),
 * });
 * const request = {
 *   call: { id: "c1", name: "bash", arguments: "{}" },
 *   args: { command: "npm test -- x" },
 *   summary: "$ npm test -- x",
 * };
 * const answer = approvals.ask(request);
 * dialogs.key({ name: "text", text: "w", ctrl: false, alt: false, shift: false });
 * assert.equal(await answer, "once");
 * assert.deepEqual(saved, ["bash(npm test *)"]);
 * ```
 */
export class Approvals {
  readonly #dialogs: Dialogs;
  readonly #rules: WorkspaceRules | undefined;

  /** Approvals asked through `dialogs`; with `rules`, "always in this workspace" is offered. */
  constructor(dialogs: Dialogs, rules?: WorkspaceRules) {
    this.#dialogs = dialogs;
    this.#rules = rules;
  }

  /** Asks about one call; a dismissed prompt (Esc, Ctrl-C, a cancelled turn) denies. */
  async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalAnswer> {
    const name = request.call.name;
    const change = request.change;
    const body = change === undefined ? undefined : (width: number) => renderChange(change, width);
    if (request.correlationId !== undefined || request.rule !== undefined) {
      // A gate's or a rule's question is asked every time, so "always" is not offered.
      const why = request.rule !== undefined
        ? `the permission rule ${request.rule} asks${
          request.reason === undefined ? "" : `; ${request.reason}`
        }`
        : request.reason ?? "a tool gate asks to confirm";
      const index = await this.#dialogs.pick(
        `Allow ${name}: ${request.summary} (${why})`,
        [
          { label: "allow once", hotkey: "y" },
          { label: "deny", hotkey: "n" },
        ],
        signal,
        body,
      );
      return index === 0 ? "once" : "deny";
    }
    const rules = this.#rules;
    const suggested = rules === undefined
      ? undefined
      : suggestWorkspaceRule(name, request.args, rules.workspace);
    const choices: DialogChoice[] = [
      { label: "allow once", hotkey: "y" },
      { label: `allow always for this session (every ${name} call)`, hotkey: "a" },
    ];
    if (suggested !== undefined) {
      choices.push({ label: `allow ${suggested.label} (${suggested.rule})`, hotkey: "w" });
    }
    choices.push({ label: "deny", hotkey: "n" });
    const index = await this.#dialogs.pick(
      `Allow ${name}: ${request.summary}`,
      choices,
      signal,
      body,
    );
    if (index === undefined || index === choices.length - 1) return "deny";
    if (index === 0) return "once";
    if (index === 1) return "always";
    // The rule answers this call's like from now on; this one runs on the same answer, also
    // when the rule could not be saved (the user did say yes).
    try {
      await rules!.allowInWorkspace(suggested!.rule);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.#dialogs.notify(`the rule ${suggested!.rule} was not saved: ${why}`, "error");
    }
    return "once";
  }
}
