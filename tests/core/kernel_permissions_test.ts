// The kernel under permission rules (issue 15): a deny rule blocks a call under `--approve auto`
// naming the rule, an ask rule asks under `auto` (and denies with no one to ask), an allow rule
// answers the approval question (also with no one to ask), and a gate still narrows what a rule
// allows: it blocks, or its confirmation is asked.

import { deepStrictEqual, equal, match } from "node:assert/strict";
import { parsePermissions, PermissionRules, type PermissionsConfig, type Tool } from "@amber/core";
import { type ApprovalRequest, runAgent, type RunOptions } from "@amber/core/kernel";
import {
  countingTool,
  runOptions,
  ScriptedModel,
  startRuntime,
  toolResults,
} from "./_kernel_script.ts";

function check(config: PermissionsConfig): RunOptions["permissions"] {
  const rules = new PermissionRules(parsePermissions(config, "config.yaml").entries, {
    workspace: "/w",
  });
  return (call) => rules.decide(call);
}

function bash(ran: string[]): Tool {
  return countingTool("bash", ran, { requiresApproval: () => true });
}

async function run(
  options: Partial<RunOptions>,
  command: string,
  gate?: { kind: "gate"; name: string; check: () => { kind: string } },
) {
  const ran: string[] = [];
  const asked: ApprovalRequest[] = [];
  const { runtime } = await startRuntime({
    tools: [{ kind: "tool", name: "bash", tools: [bash(ran)] }],
    ...(gate === undefined ? {} : { gates: [gate as never] }),
  });
  const model = new ScriptedModel([{ calls: [{ name: "bash", args: { command } }] }, {
    text: "ok",
  }]);
  const result = await runAgent({
    ...runOptions(runtime, model),
    ask: (request) => {
      asked.push(request);
      return Promise.resolve("once");
    },
    ...options,
  });
  await runtime.stop();
  return { ran, asked, results: toolResults(result.messages) };
}

Deno.test("a deny rule blocks the call under --approve auto, naming the rule", async () => {
  const { ran, asked, results } = await run(
    { approval: "auto", permissions: check({ deny: ["bash(rm *)"] }) },
    "rm -rf build",
  );
  deepStrictEqual(ran, []);
  deepStrictEqual(asked, []);
  match(results[0], /'bash' is denied by the permission rule 'bash\(rm \*\)' \(config\.yaml\)/);
});

Deno.test("an ask rule asks under --approve auto, and offers no 'always'", async () => {
  const { ran, asked } = await run(
    { approval: "auto", permissions: check({ ask: ["bash(git push *)"] }) },
    "git push origin",
  );
  deepStrictEqual(ran, ["bash"]);
  equal(asked.length, 1);
  equal(asked[0].rule, "bash(git push *)");
  match(asked[0].reason ?? "", /config\.yaml/);
});

Deno.test("an ask rule with no one to ask, or under deny, denies saying which rule", async () => {
  const none = await run(
    { approval: "auto", ask: undefined, permissions: check({ ask: ["bash(git push *)"] }) },
    "git push",
  );
  deepStrictEqual(none.ran, []);
  match(
    none.results[0],
    /permission rule 'bash\(git push \*\)' \(config\.yaml\) asks .* no one to ask/,
  );
  const denied = await run(
    { approval: "deny", permissions: check({ ask: ["bash(git push *)"] }) },
    "git push",
  );
  match(denied.results[0], /asks to confirm 'bash' and the approval policy is deny/);
});

Deno.test("an allow rule answers the approval question without asking, even with no one to ask", async () => {
  const asked = await run(
    { approval: "ask", permissions: check({ allow: ["bash(npm test *)"] }) },
    "npm test -- x",
  );
  deepStrictEqual(asked.ran, ["bash"]);
  deepStrictEqual(asked.asked, [], "the question was not put");
  const headless = await run(
    { approval: "ask", ask: undefined, permissions: check({ allow: ["bash(npm test *)"] }) },
    "npm test",
  );
  deepStrictEqual(headless.ran, ["bash"]);
  // What the rule does not cover is asked as before.
  const other = await run(
    { approval: "ask", permissions: check({ allow: ["bash(npm test *)"] }) },
    "npm publish",
  );
  equal(other.asked.length, 1);
  equal(other.asked[0].rule, undefined);
});

Deno.test("a gate still narrows an allowed call: it blocks, or its confirmation is asked", async () => {
  const allow = check({ allow: ["bash"] });
  const blocked = await run({ approval: "auto", permissions: allow }, "ls", {
    kind: "gate",
    name: "no",
    check: () => ({ kind: "block", reason: "the gate says no" }),
  });
  deepStrictEqual(blocked.ran, []);
  match(blocked.results[0], /the gate says no/);
  const confirmed = await run({ approval: "auto", permissions: allow }, "ls", {
    kind: "gate",
    name: "confirm",
    check: () => ({ kind: "requireConfirmation", correlationId: "c1" }),
  });
  equal(confirmed.asked.length, 1);
  equal(confirmed.asked[0].correlationId, "c1");
});

Deno.test("a permission check that throws blocks the call", async () => {
  const { ran, results } = await run({
    approval: "auto",
    permissions: () => {
      throw new Error("broken");
    },
  }, "ls");
  deepStrictEqual(ran, []);
  match(results[0], /permission rules could not be checked for 'bash': broken/);
});
