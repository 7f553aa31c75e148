// The run kernel against the fake provider on loopback: hooks, gates, approval, guards, max
// steps, cancellation and transcripts. The awaken tests of seed 004 are mirrored here.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { type Capability, exact, type GateOutcome, type Message, type Tool } from "@amber/core";
import {
  type EndCause,
  runAgent,
  type RunEvent,
  type RunOptions,
  runSelection,
  SessionFile,
} from "@amber/core/kernel";
import { createRegistries } from "@amber/registries";
import { ProviderClient } from "@amber/providers";
import { anthropicDialect } from "@amber/providers/anthropic";
import { geminiDialect } from "@amber/providers/gemini";
import { openaiDialect } from "@amber/providers/openai";
import {
  anthropicEncoder,
  FakeProvider,
  geminiEncoder,
  openaiEncoder,
  type ScriptedTurn,
  type WireEncoder,
} from "@amber/providers/testing";
import type { Dialect } from "@amber/core";
import { makePlugin, makeRuntime, tempDir } from "../_helpers.ts";

const noWait = () => Promise.resolve();

function echoTool(name = "echo", extra: Partial<Tool> = {}): Tool {
  return {
    name,
    description: "Echoes its text.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    execute: (args) => ({ ok: true, output: `echo: ${(args as { text: string }).text}` }),
    ...extra,
  };
}

const call = (text: string, name = "echo"): ScriptedTurn => ({
  toolCalls: [{ name, arguments: { text } }],
  usage: { promptTokens: 10, completionTokens: 5 },
});
const answer = (text: string): ScriptedTurn => ({
  text,
  usage: { promptTokens: 12, completionTokens: 3 },
});

interface Wire {
  readonly name: string;
  readonly dialect: () => Dialect;
  readonly encoder: WireEncoder;
  readonly base: (url: string) => string;
}

// The three protocols the kernel is tested over end to end.
const WIRES: readonly Wire[] = [
  { name: "openai", dialect: openaiDialect, encoder: openaiEncoder, base: (u) => `${u}/v1` },
  { name: "anthropic", dialect: anthropicDialect, encoder: anthropicEncoder, base: (u) => u },
  { name: "gemini", dialect: geminiDialect, encoder: geminiEncoder, base: (u) => u },
];

async function setup(capabilities: Capability[], turns: ScriptedTurn[], wire: Wire = WIRES[0]) {
  const server = await FakeProvider.start({ encoders: [wire.encoder] });
  server.script(...turns);
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("tools", capabilities));
  await runtime.start();
  const model = new ProviderClient(
    wire.dialect(),
    { baseUrl: wire.base(server.url), apiKey: "k" },
    {
      sleep: noWait,
    },
  );
  const events: RunEvent[] = [];
  const base: RunOptions = {
    runtime,
    model,
    modelName: "fake-small",
    prompt: "go",
    approval: "auto",
    onEvent: (e) => events.push(e),
  };
  return { server, runtime, base, events };
}

Deno.test("a multi-step tool loop runs every call and ends at the natural end", async () => {
  const { server, base, runtime } = await setup(
    [{ kind: "tool", name: "echo", tools: [echoTool()] }],
    [call("one"), call("two"), answer("done")],
  );
  await using _ = server;
  const completed: string[] = [];
  runtime.events.subscribe("toolCompleted", (e) => completed.push(e.result.output));
  const result = await runAgent(base);
  deepStrictEqual(result.cause, { kind: "completed", detail: "stop" });
  strictEqual(result.steps, 3);
  deepStrictEqual(completed, ["echo: one", "echo: two"]);
  deepStrictEqual(result.messages.map((m) => m.role), [
    "user",
    "assistant",
    "tool",
    "assistant",
    "tool",
    "assistant",
  ]);
  // The fake server reports the cache and reasoning counts as OpenAI does (zero), and the kernel
  // keeps them.
  deepStrictEqual(result.usage, {
    promptTokens: 32,
    completionTokens: 13,
    cachedTokens: 0,
    reasoningTokens: 0,
  });
  const second = server.chats[1].body as { messages: { role: string; content: string }[] };
  strictEqual(second.messages.at(-1)?.content, "echo: one", "the tool result went back");
});

Deno.test("a host deny masks the plugin gate chain", async () => {
  let pluginGateCalls = 0;
  const { server, base } = await setup([
    { kind: "tool", name: "echo", tools: [echoTool()] },
    {
      kind: "gate",
      name: "counter",
      check: () => {
        pluginGateCalls++;
        return { kind: "allow" };
      },
    },
  ], [call("x"), answer("ok")]);
  await using _ = server;
  const result = await runAgent({
    ...base,
    hostGate: (): GateOutcome => ({ kind: "block", reason: "host says no" }),
  });
  strictEqual(pluginGateCalls, 0);
  const tool = result.messages.find((m) => m.role === "tool") as Extract<Message, { role: "tool" }>;
  strictEqual(tool.isError, true);
  match(tool.content, /host says no/);
});

Deno.test("a plugin tool gate narrows an absent host allow", async () => {
  const { server, base } = await setup([
    { kind: "tool", name: "echo", tools: [echoTool()] },
    {
      kind: "gate",
      name: "no_secrets",
      check: ({ args }) =>
        (args as { text: string }).text.includes("secret")
          ? { kind: "block", reason: "no secrets" }
          : { kind: "allow" },
    },
  ], [call("secret stuff"), call("fine"), answer("ok")]);
  await using _ = server;
  const result = await runAgent(base);
  const tools = result.messages.filter((m) => m.role === "tool") as Extract<
    Message,
    { role: "tool" }
  >[];
  match(tools[0].content, /blocked by tool gate 'no_secrets' of plugin 'tools': no secrets/);
  strictEqual(tools[1].content, "echo: fine");
});

Deno.test("a gate's setResult answers without running the tool", async () => {
  let ran = 0;
  const { server, base } = await setup([
    {
      kind: "tool",
      name: "echo",
      tools: [echoTool("echo", { execute: () => (ran++, { ok: true, output: "ran" }) })],
    },
    {
      kind: "gate",
      name: "cache",
      check: () => ({ kind: "setResult", result: { ok: true, output: "cached" } }),
    },
  ], [call("x"), answer("ok")]);
  await using _ = server;
  const result = await runAgent(base);
  strictEqual(ran, 0);
  strictEqual(result.messages.find((m) => m.role === "tool")?.content, "cached");
});

Deno.test("approval: deny policy, ask answered deny, once and always", async () => {
  const needsApproval = echoTool("echo", { requiresApproval: () => true });
  const { server, base } = await setup(
    [{ kind: "tool", name: "echo", tools: [needsApproval] }],
    [call("a"), answer("1"), call("b"), call("c"), call("d"), answer("2"), call("e"), answer("3")],
  );
  await using _ = server;
  const denied = await runAgent({ ...base, approval: "deny" });
  match(denied.messages[2].content, /needs approval and the approval policy is deny/);

  const answers = ["deny", "always"] as const;
  const asked: string[] = [];
  const asking = await runAgent({
    ...base,
    approval: "ask",
    ask: (request) => {
      asked.push(request.summary);
      return Promise.resolve(answers[asked.length - 1]);
    },
  });
  const results = asking.messages.filter((m) => m.role === "tool").map((m) => m.content);
  match(results[0], /the user denied 'echo'/);
  deepStrictEqual(results.slice(1), ["echo: c", "echo: d"], "always covers the rest of the run");
  strictEqual(asked.length, 2);

  const headless = await runAgent({ ...base, approval: "ask" });
  match(
    headless.messages[2].content,
    /there is no one to ask; run in a terminal, or with --approve auto/,
  );
});

Deno.test("an interceptor on toolRequested cancels the call", async () => {
  const { server, base, runtime } = await setup(
    [{ kind: "tool", name: "echo", tools: [echoTool()] }],
    [call("x"), answer("ok")],
  );
  await using _ = server;
  runtime.events.intercept("toolRequested", () => false);
  const result = await runAgent(base);
  match(result.messages[2].content, /cancelled by a plugin before it ran/);
});

Deno.test("guards: no guard ends at the first natural end", async () => {
  const { server, base } = await setup([], [answer("first"), answer("never")]);
  await using _ = server;
  const result = await runAgent(base);
  strictEqual(result.cause.kind, "completed");
  strictEqual(result.steps, 1);
  strictEqual(server.pending, 1);
});

Deno.test("guards: a guard steers then completes, and each round is surfaced", async () => {
  let rounds = 0;
  const { server, base, events } = await setup([{
    kind: "guard",
    name: "tests_green",
    decide: () =>
      ++rounds < 2
        ? { kind: "steer", feedback: "Run the tests first." }
        : { kind: "complete", detail: "green" },
  }], [answer("done?"), answer("done!")]);
  await using _ = server;
  const result = await runAgent(base);
  strictEqual(result.cause.kind, "completed");
  strictEqual(result.steps, 2);
  deepStrictEqual(
    events.filter((e) => e.type === "steer").map((e) => (e as { feedback: string }).feedback),
    ["Run the tests first."],
  );
  deepStrictEqual(result.messages.map((m) => m.content), [
    "go",
    "done?",
    "Run the tests first.",
    "done!",
  ]);
});

Deno.test("guards: a later guard's steer overrides an earlier guard's completion", async () => {
  let second = 0;
  const { server, base } = await setup([
    { kind: "guard", name: "first", decide: () => ({ kind: "complete" }) },
    {
      kind: "guard",
      name: "second",
      decide:
        () => (second++ === 0 ? { kind: "steer", feedback: "one more" } : { kind: "complete" }),
    },
  ], [answer("a"), answer("b")]);
  await using _ = server;
  const result = await runAgent(base);
  strictEqual(result.steps, 2);
  strictEqual(result.cause.kind, "completed");
});

Deno.test("guards: an always-steering guard is bounded by max steps", async () => {
  const { server, base } = await setup(
    [{ kind: "guard", name: "never", decide: () => ({ kind: "steer", feedback: "again" }) }],
    Array.from({ length: 10 }, (_, i) => answer(`try ${i}`)),
  );
  await using _ = server;
  const result = await runAgent({ ...base, maxSteps: 3 });
  deepStrictEqual(result.cause, { kind: "maxSteps", steps: 3 });
});

Deno.test("a guard outside its bound fails the run closed before the first model call", async () => {
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(answer("never"));
  await using tmp = await tempDir();
  const session = await SessionFile.create(tmp.dir, { id: "closed", workspace: tmp.dir });
  const result = await runSelection({
    available: [makePlugin("judge", [
      { kind: "guard", name: "judge", decide: () => ({ kind: "complete" }) },
    ], { bound: { runEndGuards: exact("other") } })],
    pluginIds: ["judge"],
    registries: createRegistries(),
    model: new ProviderClient(openaiDialect(), { baseUrl: `${server.url}/v1` }),
    modelName: "m",
    prompt: "hi",
    approval: "auto",
    session,
  });
  session.close();
  const cause = result.cause as Extract<EndCause, { kind: "error" }>;
  strictEqual(cause.failure.kind, "capabilityBound");
  strictEqual(server.chats.length, 0, "no model call was made");
  const loaded = await SessionFile.load(tmp.dir, "closed");
  strictEqual(loaded.steps[0].end, "error");
  deepStrictEqual(loaded.messages, [{ role: "user", content: "hi" }]);
});

Deno.test("hooks run at their points, stage state through the commit path and add reminders", async () => {
  const seen: string[] = [];
  const { server, base } = await setup([
    { kind: "tool", name: "echo", tools: [echoTool()] },
    { kind: "state", name: "calls", initial: 0 },
    {
      kind: "hook",
      name: "count",
      point: "AfterTool",
      run: ({ state }) => ({
        state: [{ op: "set", key: "calls", value: (state.get("calls") as number) + 1 }],
      }),
    },
    {
      kind: "hook",
      name: "trace",
      point: "StepStart",
      run: ({ step, state }) => {
        seen.push(`step ${step}: calls=${state.get("calls")}`);
        return {};
      },
    },
    {
      kind: "hook",
      name: "remind",
      point: "StepEnd",
      run: ({ step }) =>
        step === 0 ? { messages: [{ role: "user", content: "Reminder: be brief." }] } : {},
    },
  ], [call("x"), answer("ok")]);
  await using _ = server;
  const result = await runAgent(base);
  deepStrictEqual(seen, ["step 0: calls=0", "step 1: calls=1"]);
  strictEqual(result.state.get("calls"), 1);
  ok(result.messages.some((m) => m.content === "Reminder: be brief."));
  const second = server.chats[1].body as { messages: { content: string }[] };
  ok(second.messages.some((m) => m.content === "Reminder: be brief."), "reminders reach the model");
});

Deno.test("transcripts: every step is committed and a resumed run continues the conversation", async () => {
  await using tmp = await tempDir();
  const { server, base } = await setup(
    [{ kind: "tool", name: "echo", tools: [echoTool()] }],
    [call("x"), answer("first"), answer("second")],
  );
  await using _ = server;
  const session = await SessionFile.create(tmp.dir, { id: "s1", workspace: tmp.dir }, [
    "sk-SECRETKEY",
  ]);
  await runAgent({ ...base, session, prompt: "leak sk-SECRETKEY please" });
  session.close();
  const text = await Deno.readTextFile(SessionFile.pathOf(tmp.dir, "s1"));
  strictEqual(text.includes("sk-SECRETKEY"), false, "keys never reach the transcript");
  const loaded = await SessionFile.load(tmp.dir, "s1");
  strictEqual(loaded.steps.length, 2);

  const resumed = await SessionFile.resume(tmp.dir, "s1");
  const result = await runAgent({
    ...base,
    session: resumed.file,
    history: resumed.session.messages,
    firstStep: resumed.session.steps.length,
    prompt: "and again",
  });
  resumed.file.close();
  strictEqual(result.messages.at(-1)?.content, "second");
  const third = server.chats[2].body as { messages: { content: string }[] };
  deepStrictEqual(
    third.messages.filter((m) => m.content !== null).map((m) => m.content).slice(-2),
    ["first", "and again"],
  );
  strictEqual((await SessionFile.load(tmp.dir, "s1")).steps.length, 3);
});

Deno.test("cancellation mid-stream ends the run cancelled and commits what came", async () => {
  await using tmp = await tempDir();
  const { server, base } = await setup([], [{
    text: "a long answer that keeps going and going",
    chunkSize: 2,
    fault: { kind: "slowFirstByte", delayMs: 0 },
  }]);
  await using _ = server;
  const controller = new AbortController();
  const session = await SessionFile.create(tmp.dir, { id: "c1", workspace: tmp.dir });
  let deltas = 0;
  const result = await runAgent({
    ...base,
    session,
    signal: controller.signal,
    onEvent: (e) => {
      if (e.type === "text" && ++deltas === 3) controller.abort();
    },
  });
  session.close();
  strictEqual(result.cause.kind, "cancelled");
  const loaded = await SessionFile.load(tmp.dir, "c1");
  strictEqual(loaded.steps.at(-1)?.end, "cancelled");
  strictEqual(loaded.messages[0].content, "go");
});

Deno.test("a dropped connection ends the run with a clear error and keeps every committed step", async () => {
  await using tmp = await tempDir();
  const { server, base } = await setup(
    [{ kind: "tool", name: "echo", tools: [echoTool()] }],
    [call("x"), { text: "partial answer", chunkSize: 3, fault: { kind: "drop", afterEvents: 3 } }],
  );
  await using _ = server;
  const session = await SessionFile.create(tmp.dir, { id: "d1", workspace: tmp.dir });
  const result = await runAgent({ ...base, session });
  session.close();
  const cause = result.cause as Extract<EndCause, { kind: "error" }>;
  strictEqual(cause.failure.kind, "provider");
  match((cause.failure as { message: string }).message, /dropped|connection/i);
  const loaded = await SessionFile.load(tmp.dir, "d1");
  strictEqual(loaded.steps.length, 2);
  strictEqual(loaded.steps[0].messages.at(-1)?.content, "echo: x");
  strictEqual(loaded.steps[1].end, "error");
});

for (const wire of WIRES) {
  Deno.test(`${wire.name}: a multi-step loop with parallel calls, a 429 retried, then the answer`, async () => {
    const { server, base } = await setup([{ kind: "tool", name: "echo", tools: [echoTool()] }], [
      { fault: { kind: "status", status: 429, retryAfterMs: 1 } },
      {
        toolCalls: [
          { name: "echo", arguments: { text: "left" } },
          { name: "echo", arguments: { text: "right" } },
        ],
        usage: { promptTokens: 10, completionTokens: 5 },
      },
      call("again"),
      answer("both done"),
    ], wire);
    await using _ = server;
    const result = await runAgent(base);
    strictEqual(result.cause.kind, "completed");
    const tools = result.messages.filter((m) => m.role === "tool").map((m) => m.content);
    deepStrictEqual(tools, ["echo: left", "echo: right", "echo: again"]);
    strictEqual(result.messages.at(-1)?.content, "both done");
    strictEqual(server.chats.length, 4, "the 429 was retried");
  });

  Deno.test(`${wire.name}: a blocking gate, a denied approval and a steering guard`, async () => {
    let steered = false;
    const { server, base } = await setup(
      [
        { kind: "tool", name: "echo", tools: [echoTool("echo", { requiresApproval: () => true })] },
        { kind: "tool", name: "other", tools: [echoTool("blocked_tool")] },
        {
          kind: "gate",
          name: "wall",
          check: ({ call }) =>
            call.name === "blocked_tool"
              ? { kind: "block", reason: "not here" }
              : { kind: "allow" },
        },
        {
          kind: "guard",
          name: "once_more",
          decide: () =>
            steered
              ? { kind: "complete" }
              : (steered = true, { kind: "steer", feedback: "check again" }),
        },
      ],
      [call("x", "blocked_tool"), call("y"), answer("first"), answer("second")],
      wire,
    );
    await using _ = server;
    const result = await runAgent({ ...base, approval: "deny" });
    const tools = result.messages.filter((m) => m.role === "tool").map((m) => m.content);
    match(tools[0], /blocked by tool gate 'wall'/);
    match(tools[1], /approval policy is deny/);
    deepStrictEqual(result.messages.slice(-3).map((m) => m.content), [
      "first",
      "check again",
      "second",
    ]);
  });

  Deno.test(`${wire.name}: max steps, a dropped connection, and resume`, async () => {
    await using tmp = await tempDir();
    const { server, base } = await setup([{ kind: "tool", name: "echo", tools: [echoTool()] }], [
      call("1"),
      call("2"),
      call("3"),
      { text: "cut", chunkSize: 1, fault: { kind: "drop", afterEvents: 2 } },
      answer("resumed fine"),
    ], wire);
    await using _ = server;
    const capped = await runAgent({ ...base, maxSteps: 2 });
    deepStrictEqual(capped.cause, { kind: "maxSteps", steps: 2 });
    const session = await SessionFile.create(tmp.dir, { id: "r1", workspace: tmp.dir });
    const dropped = await runAgent({ ...base, session });
    session.close();
    strictEqual(dropped.cause.kind, "error");
    const resumed = await SessionFile.resume(tmp.dir, "r1");
    strictEqual(resumed.session.steps.at(-1)?.end, "error");
    const result = await runAgent({
      ...base,
      session: resumed.file,
      history: resumed.session.messages,
      firstStep: resumed.session.steps.length,
      prompt: "try again",
    });
    resumed.file.close();
    strictEqual(result.cause.kind, "completed");
    strictEqual(result.messages.at(-1)?.content, "resumed fine");
  });
}

Deno.test("anthropic: signed thinking is kept on the assistant message and sent back with its tool call", async () => {
  const wire = WIRES.find((w) => w.name === "anthropic")!;
  const { server, base } = await setup([{ kind: "tool", name: "echo", tools: [echoTool()] }], [
    { reasoning: "I will echo.", toolCalls: [{ name: "echo", arguments: { text: "x" } }] },
    answer("done"),
  ], wire);
  await using _ = server;
  const result = await runAgent(base);
  const assistant = result.messages[1] as Extract<Message, { role: "assistant" }>;
  strictEqual(assistant.reasoning, "I will echo.");
  ok(assistant.reasoningSignature, "the signature was kept");
  const second = server.chats[1].body as {
    messages: { role: string; content: { type: string; signature?: string }[] }[];
  };
  const turn = second.messages.find((m) => m.role === "assistant")!;
  strictEqual(turn.content[0].type, "thinking");
  strictEqual(turn.content[0].signature, assistant.reasoningSignature);
});
