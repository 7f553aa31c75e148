// Deadlines at the kernel's seams (issue 11, "Timeouts at every seam"): a tool gets an abort
// signal at its deadline and on the user's cancel; one that does not settle within the grace is
// abandoned, the step commits with that tool marked so, and the turn ends with a typed reason.
// Actions a gate schedules have their own deadline.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { type AmberConfig, DeadlineError, type Tool } from "@amber/core";
import { type EndCause, runAgent, type RunEvent, SessionFile } from "@amber/core/kernel";
import { tempDir } from "../_helpers.ts";
import {
  countingTool,
  runOptions,
  ScriptedModel,
  startRuntime,
  toolResults,
} from "./_kernel_script.ts";

// Fails the test instead of hanging it when the kernel waits forever.
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, hung]);
  } finally {
    clearTimeout(timer);
  }
}

// A tool that never settles and never looks at its signal.
const stuckTool = (seen: AbortSignal[]): Tool => ({
  name: "stuck",
  description: "Ignores its cancel.",
  parameters: { type: "object" },
  execute: (_args, { signal }) => {
    seen.push(signal);
    return new Promise(() => {});
  },
});

const FAST: AmberConfig = {
  plugins: {},
  timeouts: { tool: 60_000, toolGrace: 60_000, plugins: { slow: { tool: 30, toolGrace: 30 } } },
};

Deno.test("a tool that ignores its cancel is abandoned after the grace; the step commits and the turn ends", async () => {
  await using tmp = await tempDir();
  const signals: AbortSignal[] = [];
  const ran: string[] = [];
  const { runtime, diagnostics } = await startRuntime({
    slow: [{ kind: "tool", name: "stuck", tools: [stuckTool(signals)] }],
    quick: [{ kind: "tool", name: "echo", tools: [countingTool("echo", ran)] }],
  }, FAST);
  const model = new ScriptedModel([
    { calls: [{ name: "stuck" }, { name: "echo" }] },
    { text: "never asked" },
  ]);
  const session = await SessionFile.create(tmp.dir, { id: "abandon", workspace: tmp.dir });
  const events: RunEvent[] = [];
  const result = await within(
    5_000,
    runAgent({ ...runOptions(runtime, model), session, onEvent: (e) => events.push(e) }),
  );
  session.close();
  const cause = result.cause as Extract<EndCause, { kind: "error" }>;
  strictEqual(cause.failure.kind, "toolAbandoned");
  const failure = cause.failure as Extract<typeof cause.failure, { kind: "toolAbandoned" }>;
  deepStrictEqual([failure.tool, failure.pluginId, failure.callId], ["stuck", "slow", "call_1_0"]);
  match(failure.message, /tool 'stuck' of plugin 'slow' did not finish within 30 ms and did not/);
  match(failure.message, /within 30 ms of its cancel; it was abandoned/);
  ok(signals[0].aborted, "the tool was told to stop");
  ok(signals[0].reason instanceof DeadlineError);
  deepStrictEqual(ran, [], "no call after the abandoned one ran");
  strictEqual(model.requests.length, 1, "the turn ended: no further model call");
  const [stuck, echo] = toolResults(result.messages);
  match(stuck, /abandoned/);
  match(echo, /not run: the turn ended when 'stuck' was abandoned/);
  strictEqual(events.filter((e) => e.type === "toolEnd").length, 1);
  const loaded = await SessionFile.load(tmp.dir, "abandon");
  strictEqual(loaded.steps.length, 1);
  strictEqual(loaded.steps[0].end, "error");
  deepStrictEqual(loaded.messages.map((m) => m.role), ["user", "assistant", "tool", "tool"]);
  ok(diagnostics.some((d) => d.startsWith("slow: tool 'stuck' of plugin 'slow'")));
  await runtime.stop();
});

Deno.test("a tool that stops at its deadline answers with a timeout and the run goes on", async () => {
  const { runtime } = await startRuntime({
    slow: [{
      kind: "tool",
      name: "polite",
      tools: [{
        name: "polite",
        description: "Stops when told.",
        parameters: { type: "object" },
        execute: (_args, { signal }) =>
          new Promise((resolve) =>
            signal.addEventListener("abort", () => resolve({ ok: true, output: "partial" }))
          ),
      }],
    }],
  }, FAST);
  const model = new ScriptedModel([{ calls: [{ name: "polite" }] }, { text: "done" }]);
  const result = await within(5_000, runAgent(runOptions(runtime, model)));
  strictEqual(result.cause.kind, "completed");
  match(
    toolResults(result.messages)[0],
    /^error: tool 'polite' of plugin 'slow' did not finish within 30 ms and was cancelled$/,
  );
  await runtime.stop();
});

Deno.test("the user's cancel reaches a running tool; one that ignores it is abandoned after the grace", async () => {
  const signals: AbortSignal[] = [];
  const { runtime } = await startRuntime({
    slow: [{ kind: "tool", name: "stuck", tools: [stuckTool(signals)] }],
  }, FAST);
  const controller = new AbortController();
  const model = new ScriptedModel([{ calls: [{ name: "stuck" }] }, { text: "never" }]);
  const result = await within(
    5_000,
    runAgent({
      ...runOptions(runtime, model),
      signal: controller.signal,
      onEvent: (e) => e.type === "toolStart" && setTimeout(() => controller.abort(), 5),
    }),
  );
  deepStrictEqual(result.cause, { kind: "cancelled" });
  ok(signals[0].aborted);
  match(toolResults(result.messages)[0], /was cancelled and did not stop within 30 ms/);
  await runtime.stop();
});

Deno.test("an action a gate schedules runs under its deadline with an abort signal", async () => {
  const signals: AbortSignal[] = [];
  const { runtime, diagnostics } = await startRuntime({
    tools: [{ kind: "tool", name: "deploy", tools: [countingTool("deploy", [])] }],
    queue: [
      {
        kind: "gate",
        name: "defer",
        check: ({ call }) => ({ kind: "schedule", correlationId: call.id, actionKind: "later" }),
      },
      {
        kind: "action",
        name: "later",
        run: ({ signal }) => {
          if (signal !== undefined) signals.push(signal);
          return new Promise(() => {});
        },
      },
    ],
  }, { plugins: {}, timeouts: { action: 30 } });
  const model = new ScriptedModel([{ calls: [{ name: "deploy" }] }, { text: "done" }]);
  const result = await within(5_000, runAgent(runOptions(runtime, model)));
  strictEqual(result.cause.kind, "completed");
  match(
    toolResults(result.messages)[0],
    /action 'later' of plugin 'queue' did not finish within 30/,
  );
  ok(signals[0]?.aborted, "the action was told to stop");
  ok(diagnostics.some((d) => d.startsWith("queue: action 'later'")));
  await runtime.stop();
});
