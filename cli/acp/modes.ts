/**
 * amber's approval policies as ACP session modes: `ask` puts each tool that needs approval to
 * the editor, `auto` runs it, `deny` refuses it (the agent only reads). The editor sees them in
 * the `modes` of `session/new` and `session/load`, switches with `session/set_mode` (or the
 * `mode` config option), and hears of a switch as a `current_mode_update`. A switch reaches a
 * running turn's next question when the turn started under `ask`; otherwise it applies from the
 * next prompt.
 *
 * @module
 */

import { RequestError, type SessionMode, type SessionModeState } from "@agentclientprotocol/sdk";
import type { ApprovalPolicy } from "@amber/core";
import { APPROVAL_POLICIES } from "../session/approvals.ts";

/** The modes, one per approval policy, in the order `--approve` lists them. */
export const APPROVAL_MODES: readonly SessionMode[] = [
  {
    id: "ask",
    name: "Ask",
    description: "Ask before running a tool that needs approval (edits, commands)",
  },
  {
    id: "auto",
    name: "Auto",
    description: "Run tools without asking (a permission rule or a gate still asks)",
  },
  {
    id: "deny",
    name: "Read-only",
    description: "Refuse every tool that needs approval",
  },
];

/**
 * The `modes` of a session/new or session/load response: every mode, `policy` current.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { modeState } from "./modes.ts";
 * const state = modeState("auto");
 * assert.equal(state.currentModeId, "auto");
 * assert.deepEqual(state.availableModes.map((mode) => mode.id), ["ask", "auto", "deny"]);
 * ```
 */
export function modeState(policy: ApprovalPolicy): SessionModeState {
  return { currentModeId: policy, availableModes: [...APPROVAL_MODES] };
}

/**
 * The approval policy mode `id` stands for; an id that is none is the editor's error, an
 * invalid-params error naming it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { approvalOfMode } from "./modes.ts";
 * assert.equal(approvalOfMode("deny"), "deny");
 * assert.throws(() => approvalOfMode("yolo"), /unknown mode 'yolo'; modes: ask, auto, deny/);
 * ```
 */
export function approvalOfMode(id: string): ApprovalPolicy {
  const policy = APPROVAL_POLICIES.find((known) => known === id);
  if (policy !== undefined) return policy;
  throw RequestError.invalidParams(
    { modeId: id },
    `unknown mode '${id}'; modes: ${APPROVAL_POLICIES.join(", ")}`,
  );
}
