// The session's approval policy switched while it lives (an editor's mode): AgentSession's
// setApproval, and the answers SessionApprovals gives the kernel.

import assert from "node:assert/strict";
import type { ApprovalRequest } from "@amber/core/kernel";
import type { ScriptedTurn } from "@amber/providers/testing";
import {
  APPROVAL_POLICIES,
  SessionApprovals,
  UnknownApprovalPolicyError,
} from "../../cli/session/approvals.ts";
import type { ApprovalPolicy } from "@amber/core";
import { openFakeSession } from "./_fake_session.ts";

const NEVER = new AbortController().signal;

function bash(command: string): ScriptedTurn {
  return { toolCalls: [{ name: "bash", arguments: { command } }] };
}

function request(extra: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return { call: { id: "c1", name: "bash", arguments: "{}" }, args: {}, summary: "$ ls", ...extra };
}

Deno.test("setApproval switches the policy the next turn runs under", async () => {
  await using s = await openFakeSession([
    bash("echo denied"),
    { text: "refused" },
    bash("echo allowed"),
    { text: "ran" },
  ]);
  const asked: string[] = [];
  const ask = (question: ApprovalRequest) => {
    asked.push(question.summary);
    return Promise.resolve("once" as const);
  };
  assert.equal(s.session.approval, "ask");
  s.session.setApproval("deny");
  assert.equal(s.session.approval, "deny");
  const refused = await s.session.turn("try", { ask });
  assert.match(
    refused.messages.find((m) => m.role === "tool")?.content ?? "",
    /the approval policy is deny/,
  );
  s.session.setApproval("auto");
  const ran = await s.session.turn("again", { ask });
  assert.match(ran.messages.findLast((m) => m.role === "tool")?.content ?? "", /^allowed\n/);
  assert.deepEqual(asked, [], "neither policy asked");
});

Deno.test("setApproval mid-turn: a turn started under ask puts its next question to the new policy", async () => {
  await using s = await openFakeSession([
    bash("echo one"),
    bash("echo two"),
    bash("echo three"),
    { text: "done" },
  ]);
  const asked: string[] = [];
  // The first question switches to auto, and is allowed: the others are not asked.
  const ask = (question: ApprovalRequest) => {
    asked.push(question.summary);
    s.session.setApproval("auto");
    return Promise.resolve("once" as const);
  };
  const result = await s.session.turn("go", { ask });
  assert.deepEqual(asked, ["$ echo one"]);
  const outputs = result.messages.filter((m) => m.role === "tool").map((m) =>
    m.content.split("\n")[0]
  );
  assert.deepEqual(outputs, ["one", "two", "three"]);
  assert.equal(s.session.approval, "auto");
});

Deno.test("setApproval refuses a policy that is none", async () => {
  await using s = await openFakeSession([]);
  assert.throws(
    () => s.session.setApproval("sometimes" as ApprovalPolicy),
    (error: unknown) =>
      error instanceof UnknownApprovalPolicyError && error.policy === "sometimes" &&
      error.name === "UnknownApprovalPolicyError",
  );
  assert.equal(s.session.approval, "ask", "unchanged");
});

Deno.test("SessionApprovals: deny refuses every question, auto answers all but forced ones", async () => {
  const approvals = new SessionApprovals("ask");
  const asked: string[] = [];
  const ask = (question: ApprovalRequest) => {
    asked.push(question.rule ?? question.correlationId ?? question.call.name);
    return Promise.resolve("once" as const);
  };
  approvals.setPolicy("deny");
  assert.equal(await approvals.answer(request(), NEVER, ask), "deny");
  assert.equal(await approvals.answer(request({ rule: "ask: bash" }), NEVER, ask), "deny");
  approvals.setPolicy("auto");
  assert.equal(await approvals.answer(request(), NEVER, ask), "once");
  // A rule's question and a gate's confirmation are put to the user under auto too.
  assert.equal(await approvals.answer(request({ rule: "ask: bash" }), NEVER, ask), "once");
  assert.equal(await approvals.answer(request({ correlationId: "g1" }), NEVER, ask), "once");
  assert.deepEqual(asked, ["ask: bash", "g1"]);
  // Without anyone to ask, a forced question is refused.
  assert.equal(await approvals.answer(request({ correlationId: "g2" }), NEVER, undefined), "deny");
  assert.deepEqual(APPROVAL_POLICIES, ["ask", "auto", "deny"]);
});

Deno.test("SessionApprovals: 'always' holds under ask until forgotten, never for a forced question", async () => {
  const approvals = new SessionApprovals("ask");
  let answers = 0;
  const ask = () => {
    answers++;
    return Promise.resolve("always" as const);
  };
  assert.equal(await approvals.answer(request(), NEVER, ask), "always");
  assert.equal(await approvals.answer(request(), NEVER, ask), "always");
  assert.equal(answers, 1);
  assert.deepEqual(approvals.allowed, ["bash"]);
  await approvals.answer(request({ correlationId: "g1" }), NEVER, ask);
  assert.equal(answers, 2, "a gate's confirmation is asked every time");
  approvals.forget();
  assert.deepEqual(approvals.allowed, []);
  assert.equal(await approvals.answer(request(), NEVER, undefined), "deny");
});
