// A plugin that never answers must not hang an HTTP request of `amber serve`, nor a session's
// turn for good: a tool preview that never settles costs the gate deadline, and the approval is
// asked without a diff; a disable's dry run runs no plugin code at all; a real switch waits for a
// hung `initialize` or `shutdown` at most its deadline.

import assert from "node:assert/strict";
import type { Diagnostic, Plugin, Tool } from "@amber/core";
import { makeBundledPlugins } from "@amber/plugins";
import { makePlugin } from "../_helpers.ts";
import { created, drained, isEnd, kindOf, readEvents, serve } from "./_served.ts";

const never = <T>() => new Promise<T>(() => {});

// A tool that needs approval and whose preview never settles.
const stuckTool: Tool = {
  name: "stuck_write",
  description: "Writes nothing, after asking.",
  parameters: { type: "object" },
  requiresApproval: () => true,
  preview: () => never(),
  execute: () => ({ ok: true, output: "wrote nothing" }),
};

const previewing = (): Plugin[] => [
  ...makeBundledPlugins(),
  makePlugin("stuck", [{ kind: "tool", name: "stuck", tools: [stuckTool] }]),
];

// Off by default, and never finishes starting.
const stuckStart = () =>
  makePlugin("stuck_start", [], { enabledByDefault: false, initialize: () => never() });

// One that never finishes stopping, and one that never finishes starting.
const switching = (): Plugin[] => [
  ...makeBundledPlugins(),
  makePlugin("stuck_stop", [], { shutdown: () => never() }),
  stuckStart(),
];

// The gate deadline bounds a preview; the initialize deadline an activation.
const CONFIG = "timeouts:\n  gate: 300\n  initialize: 300\n";

Deno.test("a preview that never settles: the approval comes after the gate deadline, without a diff", async () => {
  const diagnostics: Diagnostic[] = [];
  await using s = await serve({
    plugins: previewing,
    configYaml: CONFIG,
    onDiagnostic: (d) => diagnostics.push(d),
  });
  const id = await created(s, [
    { toolCalls: [{ name: "stuck_write", arguments: {} }] },
    { text: "Asked, and done." },
  ], { approve: "ask" });
  const started = performance.now();
  const accepted = await s.call("POST", `/sessions/${id}/prompt`, { text: "write" });
  assert.equal(accepted.status, 202);
  await accepted.body?.cancel();
  const before = await readEvents(s, id, (e) => e.event === "approval");
  const waited = performance.now() - started;
  assert.ok(waited < 4000, `the approval came after ${waited.toFixed(0)} ms`);
  const approval = before.at(-1)!;
  assert.equal((approval.data.call as { name: string }).name, "stuck_write");
  assert.equal(approval.data.change, undefined);
  const answer = `/sessions/${id}/approvals/${approval.data.requestId}`;
  assert.equal((await drained(await s.call("POST", answer, { answer: "once" }))).status, 204);
  const after = await readEvents(s, id, isEnd, {}, `?from=${approval.id + 1}`);
  assert.equal(kindOf(after.at(-1)), "completed");
  const preview = diagnostics.find((d) => d.pluginId === "stuck");
  assert.match(preview?.where ?? "", /preview of 'stuck_write'/);
});

Deno.test("a disable's dry run answers at once; hung initialize and shutdown cost their deadline", async () => {
  await using s = await serve({ plugins: switching, configYaml: CONFIG });
  const id = await created(s, []);
  const timed = async (path: string) => {
    const started = performance.now();
    const response = await s.call("POST", `/sessions/${id}/plugins/${path}`);
    const body = await response.json();
    return { status: response.status, body, ms: performance.now() - started };
  };
  const dry = await timed("stuck_stop/disable?dryRun=true");
  assert.equal(dry.status, 200);
  const planned = dry.body.plan.plugins.map((p: { pluginId: string }) => p.pluginId);
  assert.deepEqual(planned, ["stuck_stop"]);
  assert.ok(dry.ms < 1000, `the dry run took ${dry.ms.toFixed(0)} ms`);
  const start = await timed("stuck_start/enable");
  assert.equal(start.status, 200);
  assert.equal(start.body.state, "failed");
  assert.ok(start.ms < 4000, `the enable took ${start.ms.toFixed(0)} ms`);
  // A shutdown's deadline is the runtime's fixed 5 s.
  const off = await timed("stuck_stop/disable");
  assert.equal(off.status, 200);
  assert.equal(off.body.state, "disabled");
  assert.ok(off.ms < 9000, `the disable took ${off.ms.toFixed(0)} ms`);
});

Deno.test("a plugin asked for at creation that never starts: the session is made within the deadline", async () => {
  await using s = await serve({
    plugins: () => [...makeBundledPlugins(), stuckStart()],
    configYaml: CONFIG,
  });
  const started = performance.now();
  const id = await created(s, [], { plugins: { enable: ["stuck_start"] } });
  const ms = performance.now() - started;
  assert.ok(ms < 4000, `the creation took ${ms.toFixed(0)} ms`);
  const listed = await (await s.call("GET", `/sessions/${id}/plugins`)).json();
  const stuck = listed.plugins.find((p: { id: string }) => p.id === "stuck_start");
  assert.equal(stuck.state, "failed");
});
