// One compaction's pipeline, through `compactConversation` (what `/compact` runs): the
// BeforeCompaction hooks and the compression interceptors that may veto or adjust it, the
// plugins' compactors (faults reported, the default strategy's result used instead), the
// default strategy itself, and the record it writes.

import { deepStrictEqual, equal, match, ok, strictEqual } from "node:assert/strict";
import type {
  AmberConfig,
  Capability,
  CompactorCapability,
  HookCapability,
  Message,
} from "@amber/core";
import { compactConversation, type RunEvent, SessionFile } from "@amber/core/kernel";
import { startRuntime } from "./_kernel_script.ts";
import { longHistory, text, TwoQueueModel } from "./_compaction_script.ts";
import { tempDir } from "../_helpers.ts";

const compactor = (name: string, compact: CompactorCapability["compact"]): CompactorCapability => ({
  kind: "compactor",
  name,
  compact,
});

async function compactWith(
  plugins: Record<string, readonly Capability[]>,
  options: { window?: number; config?: AmberConfig; history?: Message[]; instructions?: string } =
    {},
) {
  const { runtime, diagnostics } = await startRuntime(plugins, options.config);
  const model = new TwoQueueModel([], [text("The summary: facts 0 to 5 were read.")]);
  const events: RunEvent[] = [];
  const outcome = await compactConversation({
    runtime,
    model,
    modelName: "m",
    history: options.history ?? longHistory(6),
    contextWindow: options.window ?? 4_000,
    onEvent: (event) => events.push(event),
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
  });
  await runtime.stop();
  return { outcome, diagnostics, events, model };
}

// Every tool result answers a call before it, and the user's last message is there.
function assertWellFormed(messages: readonly Message[]): void {
  const called = new Set<string>();
  for (const message of messages) {
    if (message.role === "assistant") message.toolCalls?.forEach((c) => called.add(c.id));
    if (message.role === "tool") ok(called.has(message.toolCallId), `orphan ${message.toolCallId}`);
  }
  ok(messages.some((m) => m.role === "user" && m.content === "Read src/file_5.ts"));
}

Deno.test("the default strategy stubs old tool output first, keeping the prefix and the last turns", async () => {
  const history = longHistory(6);
  const { outcome, diagnostics, events, model } = await compactWith({}, { history });
  deepStrictEqual(diagnostics, []);
  strictEqual(outcome.compacted, true);
  strictEqual(outcome.strategy, "default");
  ok(
    outcome.tokensAfter <= 2_000,
    `${outcome.tokensAfter} tokens after, aiming at half the window`,
  );
  ok(outcome.tokensBefore > 6_000);
  strictEqual(model.summaryRequests.length, 0, "stubs were enough: no summary call");
  // The system prompt and the first messages are the same objects: the cached prefix holds.
  strictEqual(outcome.messages[0].content, history[0].content);
  deepStrictEqual(outcome.messages.slice(0, 3), history.slice(0, 3));
  strictEqual(
    outcome.messages[3].content,
    "[tool output removed by compaction: read src/file_0.ts, 4,000 chars]",
  );
  // The last turn is verbatim.
  deepStrictEqual(outcome.messages.slice(-4), history.slice(-4));
  assertWellFormed(outcome.messages);
  deepStrictEqual(events.map((e) => e.type), ["compactionStarted", "compactionFinished"]);
});

Deno.test("when stubs are not enough the default strategy summarizes, keeping paths and the todo list", async () => {
  const history = longHistory(6);
  history.splice(2, 0, {
    role: "assistant",
    content: "",
    toolCalls: [{
      id: "t1",
      name: "todowrite",
      arguments: JSON.stringify({
        todos: [{ content: "Read every file", status: "in_progress" }, {
          content: "Report",
          status: "pending",
        }],
      }),
    }],
  }, { role: "tool", toolCallId: "t1", name: "todowrite", content: "ok" });
  const { outcome, model } = await compactWith({}, {
    history,
    window: 1_000,
    instructions: "the facts",
  });
  strictEqual(outcome.compacted, true);
  strictEqual(model.summaryRequests.length, 1);
  const request = model.summaryRequests[0];
  match(request.messages[0].content, /The user asks the summary to keep: the facts$/);
  match(request.messages[1].content, /file_0 holds fact 0/);
  const summary = outcome.messages.find((m) => m.content.startsWith("[Compacted"));
  ok(summary !== undefined);
  match(summary.content, /The summary: facts 0 to 5 were read\./);
  for (let i = 0; i < 5; i++) match(summary.content, new RegExp(`- src/file_${i}\\.ts`));
  match(
    summary.content,
    /Todo list \(the last todowrite\):\n- \[~\] Read every file\n- \[ \] Report/,
  );
  assertWellFormed(outcome.messages);
  strictEqual(outcome.messages[0].role, "system");
});

Deno.test("a failed summary falls back to what could be extracted, and says so", async () => {
  const { runtime } = await startRuntime({});
  const model = new TwoQueueModel([], [[{ type: "error", message: "503: busy", retryable: true }]]);
  const events: RunEvent[] = [];
  const outcome = await compactConversation({
    runtime,
    model,
    modelName: "m",
    history: longHistory(6),
    contextWindow: 1_000,
    onEvent: (e) => events.push(e),
  });
  await runtime.stop();
  strictEqual(outcome.compacted, true);
  match(outcome.message ?? "", /the summary failed \(.*503: busy\)/);
  const summary = outcome.messages.find((m) => m.content.startsWith("[Compacted"))!;
  match(summary.content, /summary failed/);
  match(summary.content, /- src\/file_0\.ts/);
  match(summary.content, /The user asked: Read src\/file_0\.ts/);
  const finished = events.at(-1);
  ok(finished?.type === "compactionFinished" && finished.success);
  match(finished.message ?? "", /summary failed/);
});

Deno.test("a compactor that calls next extends the default strategy's result", async () => {
  const { outcome, diagnostics } = await compactWith({
    p: [compactor("tagged", async (input, next) => {
      const result = await next(input);
      return {
        strategy: "tagged",
        messages: [
          ...result.messages.slice(0, 1),
          { role: "system", content: "tag" },
          ...result.messages.slice(1),
        ],
      };
    })],
  });
  deepStrictEqual(diagnostics, []);
  strictEqual(outcome.strategy, "tagged");
  strictEqual(outcome.messages[1].content, "tag");
  match(outcome.messages[4].content, /^\[tool output removed/);
});

Deno.test("a compactor that answers alone replaces the default strategy", async () => {
  const history = longHistory(6);
  const { outcome, diagnostics } = await compactWith({
    p: [
      compactor(
        "last_only",
        (input) => ({ strategy: "last_only", messages: input.messages.slice(-4) }),
      ),
    ],
  }, { history });
  deepStrictEqual(diagnostics, []);
  strictEqual(outcome.strategy, "last_only");
  deepStrictEqual(outcome.messages, history.slice(-4));
});

// A careless or hostile compactor: each is reported as its plugin's fault, and the default
// strategy's result is used.
const BROKEN: readonly { name: string; compact: CompactorCapability["compact"]; fault: RegExp }[] =
  [
    {
      name: "throws",
      compact: () => {
        throw new Error("boom");
      },
      fault: /failed: boom; the default strategy.s result is used/,
    },
    {
      name: "not a list",
      compact: () => ({ strategy: "x", messages: "nope" as unknown as Message[] }),
      fault: /gave messages that are not a list/,
    },
    {
      name: "null",
      compact: () => null as unknown as { strategy: string; messages: Message[] },
      fault: /returned a null instead of a result/,
    },
    {
      name: "orphan tool result",
      compact: (input) => ({
        strategy: "x",
        messages: [
          { role: "tool", toolCallId: "nowhere", name: "read", content: "?" },
          ...input.messages.slice(-1),
        ],
      }),
      fault: /a tool result \(at 0\) that answers no earlier call \('nowhere'\)/,
    },
    {
      name: "answers a call that is made only later",
      compact: (input) => ({
        strategy: "x",
        messages: [
          { role: "tool", toolCallId: "h0", name: "read", content: "early" },
          ...input.messages,
        ],
      }),
      fault: /a tool result \(at 0\) that answers no earlier call \('h0'\)/,
    },
    {
      name: "answers one call twice",
      compact: (input) => ({
        strategy: "x",
        messages: [...input.messages.slice(0, 4), input.messages[3], ...input.messages.slice(-1)],
      }),
      fault: /a tool result \(at 4\) that answers no earlier call \('h0'\)/,
    },
    {
      name: "makes one call id twice",
      compact: (input) => ({
        strategy: "x",
        messages: [input.messages[2], ...input.messages.slice(2, 4), ...input.messages.slice(-1)],
      }),
      fault: /gave a call id twice \(at 1: 'h0'\)/,
    },
    {
      name: "gives an image that is not one",
      compact: (input) => ({
        strategy: "x",
        messages: [
          ...input.messages.slice(0, 3),
          { ...input.messages[3], images: [null] } as unknown as Message,
          ...input.messages.slice(-1),
        ],
      }),
      fault: /a message \(at 3\) that has images that are not a list of images/,
    },
    {
      name: "makes the conversation bigger",
      compact: (input) => ({
        strategy: "x",
        messages: [{ role: "user", content: "x".repeat(1_000_000) }, ...input.messages],
      }),
      fault: /gave a conversation bigger than its input \(\d+ estimated tokens, not \d+\)/,
    },
    {
      name: "drops the last user turn",
      compact: (input) => ({ strategy: "x", messages: input.messages.slice(0, 2) }),
      fault: /dropped the user's last message/,
    },
    {
      name: "a malformed message",
      compact: (input) => ({
        strategy: "x",
        messages: [{ role: "robot", content: 1 } as unknown as Message, ...input.messages],
      }),
      fault: /a message \(at 0\) that has no text content/,
    },
  ];

for (const broken of BROKEN) {
  Deno.test(`a compactor that ${broken.name} is reported and the default result is used`, async () => {
    const { outcome, diagnostics } = await compactWith({
      bad: [compactor("bad_one", broken.compact)],
    });
    strictEqual(diagnostics.length, 1, diagnostics.join("\n"));
    match(diagnostics[0], /^bad: compactor 'bad_one' of plugin 'bad': /);
    match(diagnostics[0], broken.fault);
    strictEqual(outcome.compacted, true);
    strictEqual(outcome.strategy, "default");
    assertWellFormed(outcome.messages);
  });
}

Deno.test("a compactor that hangs past its deadline is reported and the default result is used", async () => {
  const config: AmberConfig = { plugins: {}, timeouts: { compactor: 50 } };
  let release = () => {};
  const hung = new Promise<never>((_, reject) => release = () => reject(new Error("late")));
  hung.catch(() => {});
  const { outcome, diagnostics } = await compactWith({
    slow: [compactor("slow_one", () => hung)],
  }, { config });
  release();
  deepStrictEqual(diagnostics, [
    "slow: compactor 'slow_one' of plugin 'slow': did not finish within 50 ms; " +
    "the default strategy's result is used",
  ]);
  strictEqual(outcome.compacted, true);
  strictEqual(outcome.strategy, "default");
});

Deno.test("a compactor's garbage passed to next is its fault; its own input goes on", async () => {
  const { outcome, diagnostics } = await compactWith({
    p: [
      compactor(
        "passes_junk",
        (input, next) => next({ ...input, messages: [{ role: "tool" } as unknown as Message] }),
      ),
    ],
  });
  strictEqual(diagnostics.length, 1);
  match(diagnostics[0], /compactor 'passes_junk' of plugin 'p': passed on gave a message/);
  strictEqual(outcome.compacted, true);
  assertWellFormed(outcome.messages);
});

const hook = (run: HookCapability["run"]): HookCapability => ({
  kind: "hook",
  name: "before",
  point: "BeforeCompaction",
  run,
});

Deno.test("a BeforeCompaction hook vetoes a manual compaction, and sees the plan", async () => {
  const seen: unknown[] = [];
  const { outcome, events, diagnostics } = await compactWith({
    h: [hook((input) => {
      seen.push(input.compaction);
      return { compaction: { veto: "not now" } };
    })],
  });
  deepStrictEqual(diagnostics, []);
  strictEqual(outcome.compacted, false);
  strictEqual(
    outcome.message,
    "hook 'before' of plugin 'h' at BeforeCompaction vetoed it: not now",
  );
  strictEqual(outcome.messages.length, longHistory(6).length);
  const plan = seen[0] as { reason: string; budget: number; threshold: number; keepTurns: number };
  deepStrictEqual([plan.reason, plan.budget, plan.threshold, plan.keepTurns], [
    "manual",
    4_000,
    3_400,
    2,
  ]);
  deepStrictEqual(events.map((e) => e.type), ["compactionFinished"]);
});

Deno.test("a BeforeCompaction hook adjusts the turns kept and the instructions", async () => {
  const { outcome, model, diagnostics } = await compactWith({
    h: [hook(() => ({ compaction: { keepTurns: 1, instructions: "every fact" } }))],
  }, { window: 1_000 });
  deepStrictEqual(diagnostics, []);
  strictEqual(outcome.compacted, true);
  match(model.summaryRequests[0].messages[0].content, /keep: every fact$/);
});

Deno.test("a hook's malformed adjustment is reported and ignored", async () => {
  const { outcome, diagnostics } = await compactWith({
    h: [hook(() => ({ compaction: { keepTurns: 0 }, messages: [{ role: "user", content: "x" }] }))],
  });
  strictEqual(outcome.compacted, true);
  deepStrictEqual(diagnostics.map((d) => d.replace(/^.*BeforeCompaction: /, "")), [
    "proposed state or messages, which this point takes none of; ignored",
    "proposed keepTurns that is not a whole number from 1; ignored",
  ]);
});

Deno.test("a compression interceptor vetoes a manual compaction; the end is published", async () => {
  const { runtime } = await startRuntime({});
  const completed: unknown[] = [];
  runtime.events.intercept("compression", () => false);
  runtime.events.subscribe("compressionCompleted", (e) => completed.push(e));
  const outcome = await compactConversation({
    runtime,
    model: new TwoQueueModel([]),
    modelName: "m",
    history: longHistory(6),
    contextWindow: 4_000,
  });
  await runtime.stop();
  strictEqual(outcome.compacted, false);
  match(outcome.message ?? "", /interceptor/);
  deepStrictEqual(completed, [{
    success: false,
    tokensBefore: outcome.tokensBefore,
    tokensAfter: outcome.tokensBefore,
  }]);
});

Deno.test("compactConversation writes a record a resumed session continues from", async () => {
  await using tmp = await tempDir();
  const history = longHistory(6);
  const file = await SessionFile.create(tmp.dir, { id: "s", workspace: "/w" });
  await file.append({ step: 0, messages: history });
  const { runtime } = await startRuntime({});
  const outcome = await compactConversation({
    runtime,
    model: new TwoQueueModel([]),
    modelName: "m",
    history,
    session: file,
    step: 1,
    contextWindow: 4_000,
  });
  await runtime.stop();
  file.close();
  const loaded = await SessionFile.load(tmp.dir, "s");
  deepStrictEqual(loaded.messages, outcome.messages);
  strictEqual(loaded.compactions.length, 1);
  const record = loaded.compactions[0];
  deepStrictEqual(
    [record.step, record.reason, record.strategy, record.tokensBefore, record.tokensAfter],
    [1, "manual", "default", outcome.tokensBefore, outcome.tokensAfter],
  );
  equal(loaded.steps[0].messages.length, history.length, "the full history stays on disk");
});

Deno.test("a compaction record holds no part of a secret the session redacts", async () => {
  await using tmp = await tempDir();
  const key = "sk-test-" + "0123456789abcdef".repeat(4);
  // The key straddles the 120 characters a stub keeps of a command.
  const command = `${"echo padding && ".repeat(4)}curl -H 'Authorization: Bearer ${key}' x.io`;
  ok(command.indexOf(key) < 119 && command.indexOf(key) + key.length > 119);
  const history: Message[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Call the API" },
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "k", name: "bash", arguments: JSON.stringify({ command }) }],
    },
    { role: "tool", toolCallId: "k", name: "bash", content: "y".repeat(4_000) },
    ...longHistory(6).slice(1),
  ];
  const file = await SessionFile.create(tmp.dir, { id: "s", workspace: "/w" }, [key]);
  const { runtime } = await startRuntime({});
  const outcome = await compactConversation({
    runtime,
    model: new TwoQueueModel([]),
    modelName: "m",
    history,
    session: file,
    contextWindow: 4_000,
  });
  await runtime.stop();
  file.close();
  match(outcome.messages[3].content, /^\[tool output removed by compaction: bash echo padding/);
  const written = await Deno.readTextFile(SessionFile.pathOf(tmp.dir, "s"));
  ok(written.includes("[redacted]"));
  ok(!written.includes(key.slice(0, 12)), "a clipped key reached the file");
});

Deno.test("nothing to compact is no compaction", async () => {
  const { outcome } = await compactWith({}, { history: longHistory(1, 10) });
  strictEqual(outcome.compacted, false);
  strictEqual(outcome.message, "nothing to compact");
});
