/**
 * A session's approvals: the policy for tools that need approval, which a front end may switch
 * while the session lives (an editor's mode), and the tools the user answered "always", which
 * the session remembers across its turns (the kernel's own memory lasts one run).
 *
 * A turn hands the kernel the policy it starts with. The kernel puts a question to the session
 * only under `ask`, so a switch made while such a turn runs reaches its next question here:
 * `auto` answers it, `deny` refuses it. A turn that started under `auto` or `deny` keeps that
 * policy to its end; the switch applies from the next turn.
 *
 * @module
 */

import type { ApprovalPolicy } from "@amber/core";
import type { ApprovalAnswer, ApprovalRequest } from "@amber/core/kernel";
import type { ApprovalHandler } from "./session_types.ts";

/** The approval policies there are, in the order a front end offers them. */
export const APPROVAL_POLICIES: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];

/**
 * A policy that is not one of {@linkcode APPROVAL_POLICIES}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UnknownApprovalPolicyError } from "./approvals.ts";
 * assert.equal(
 *   new UnknownApprovalPolicyError("maybe").message,
 *   "unknown approval policy 'maybe'; policies: ask, auto, deny",
 * );
 * ```
 */
export class UnknownApprovalPolicyError extends Error {
  /** The policy asked for. */
  readonly policy: string;
  /** Creates the error for `policy`. */
  constructor(policy: string, options?: ErrorOptions) {
    super(
      `unknown approval policy '${policy}'; policies: ${APPROVAL_POLICIES.join(", ")}`,
      options,
    );
    this.name = "UnknownApprovalPolicyError";
    this.policy = policy;
  }
}

/**
 * The approval policy and the "always" answers of one session.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionApprovals } from "./approvals.ts";
 * const approvals = new SessionApprovals("ask");
 * const request = { call: { id: "c1", name: "bash", arguments: "{}" }, args: {}, summary: "ls" };
 * const never = new AbortController().signal;
 * assert.equal(await approvals.answer(request, never, async () => "always"), "always");
 * // Asked no more: the session remembers the answer.
 * assert.equal(await approvals.answer(request, never, async () => "deny"), "always");
 * approvals.setPolicy("deny");
 * assert.equal(await approvals.answer(request, never, async () => "once"), "deny");
 * ```
 */
export class SessionApprovals {
  #policy: ApprovalPolicy;
  readonly #always = new Set<string>();

  /** Starts with `policy` and no "always" answers. */
  constructor(policy: ApprovalPolicy) {
    this.#policy = checked(policy);
  }

  /** The policy in force. */
  get policy(): ApprovalPolicy {
    return this.#policy;
  }

  /**
   * Switches the policy; throws an {@linkcode UnknownApprovalPolicyError} for a name that is not
   * one (a caller without types).
   */
  setPolicy(policy: ApprovalPolicy): void {
    this.#policy = checked(policy);
  }

  /** The tools answered "always", asked no more until {@linkcode SessionApprovals.forget}. */
  get allowed(): readonly string[] {
    return [...this.#always];
  }

  /** Forgets the "always" answers (a reset, a resume). */
  forget(): void {
    this.#always.clear();
  }

  /**
   * Answers the kernel's question about `request`: a gate's confirmation and an ask rule's
   * question are put to `ask` every time; any other is answered by an earlier "always". The
   * policy in force answers first, as the kernel would had the turn started under it. Without
   * `ask`, the answer is no.
   */
  async answer(
    request: ApprovalRequest,
    signal: AbortSignal,
    ask: ApprovalHandler | undefined,
  ): Promise<ApprovalAnswer> {
    const name = request.call.name;
    const forced = request.correlationId !== undefined || request.rule !== undefined;
    if (this.#policy === "deny") return "deny";
    if (this.#policy === "auto" && !forced) return "once";
    if (!forced && this.#always.has(name)) return "always";
    if (ask === undefined) return "deny";
    const answer = await ask(request, signal);
    if (answer === "always" && !forced) this.#always.add(name);
    return answer;
  }
}

function checked(policy: ApprovalPolicy): ApprovalPolicy {
  if (!APPROVAL_POLICIES.includes(policy)) throw new UnknownApprovalPolicyError(policy);
  return policy;
}
