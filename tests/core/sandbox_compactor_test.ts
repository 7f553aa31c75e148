// A sandboxed plugin's compactor and BeforeCompaction hook (issue 14), through a real
// PluginRuntime: `compact` runs in the plugin process on the conversation as data, its
// `summarize` and `next` cross back to the host, and whatever the process answers or asks is
// checked first. A careless or hostile process (garbage, a throw, a hang, a request about a
// compaction that is over) fails the compaction with an error naming the plugin; the kernel
// then falls back on its default strategy. The process is in memory (`_memory_connection.ts`).

import { deepStrictEqual, match, ok, rejects, strictEqual } from "node:assert/strict";
import {
  type AmberConfig,
  any,
  type Capability,
  type CompactionInput,
  type CompactionNext,
  type CompactionResult,
  type CompactorCapability,
  DeadlineError,
  type HookCapability,
  type HookReaction,
  type Message,
  type Plugin,
  type PluginRuntime,
  type Registries,
  type SummaryRequest,
} from "@amber/core";
import {
  loadSandboxedPlugin,
  PluginEndedError,
  SandboxedCompactionError,
  type SandboxedPlugin,
} from "@amber/core/sandbox";
import { COMPACTION_ASKS } from "../../core/sandbox/_proxy_compactor.ts";
import { makeRuntime } from "../_helpers.ts";
import { type MemoryConnection, memoryProcesses } from "./_memory_connection.ts";

const SPAWN = {
  specifier: "file:///plugins/squeeze/mod.ts",
  pluginId: "squeeze",
  grant: {},
  workspace: "/ws",
  dataDir: "/cfg/plugins/squeeze/data",
  readFolders: [],
  hostVersion: "1.0.0",
  importTimeoutMs: 2_000,
};

const CONVERSATION: readonly Message[] = [
  { role: "user", content: "Read the README." },
  {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "c1", name: "read", arguments: '{"path":"README.md"}' }],
  },
  { role: "tool", toolCallId: "c1", name: "read", content: "x".repeat(700) },
  { role: "assistant", content: "It describes amber." },
  { role: "user", content: "Now summarize it." },
];

// The plugin as its author writes it, with a compactor doing whatever `compact` says.
function squeezePlugin(
  compact: CompactorCapability["compact"],
  extra: readonly Capability[] = [],
): Plugin {
  return {
    id: "squeeze",
    version: "1.0.0",
    name: "Squeeze",
    bound: { compactors: any(), phaseHooks: ["BeforeCompaction"] },
    initialize: () => true,
    shutdown() {},
    capabilities: () => [{ kind: "compactor", name: "squeeze", compact }, ...extra],
  };
}

interface Scene extends AsyncDisposable {
  readonly runtime: PluginRuntime;
  readonly registries: Registries;
  readonly sandboxed: SandboxedPlugin;
  readonly made: MemoryConnection[];
}

async function scene(plugin: () => Plugin, config?: AmberConfig): Promise<Scene> {
  const processes = memoryProcesses(plugin);
  const { runtime, registries } = makeRuntime({ config: config ?? { plugins: {} } });
  const sandboxed = await loadSandboxedPlugin({
    ...SPAWN,
    connect: processes.connect,
    onFault: (fault) => runtime.fail(fault.pluginId, fault.where, fault.message),
  });
  runtime.register(sandboxed.plugin);
  await runtime.start();
  return {
    runtime,
    registries,
    sandboxed,
    made: processes.made,
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await sandboxed.close();
    },
  };
}

// The host's side of a compaction: what the kernel would hand the first compactor.
function hostInput(
  overrides: Partial<CompactionInput> = {},
  summaries: SummaryRequest[] = [],
): CompactionInput {
  return {
    reason: "auto",
    tokens: 900,
    budget: 1_000,
    threshold: 850,
    keepTurns: 1,
    instructions: "keep the file names",
    messages: CONVERSATION,
    state: new Map<string, unknown>([["todo.count", 2]]),
    signal: new AbortController().signal,
    summarize: (request) => {
      summaries.push(request);
      return Promise.resolve(`summary of ${request.messages.length} messages`);
    },
    // Four characters a token, as a provider's tokenizer might count.
    estimate: (messages) =>
      Math.ceil(
        messages.reduce(
          (n, m) =>
            n + m.content.length +
            (m.role === "assistant"
              ? (m.toolCalls ?? []).reduce(
                (c, t) => c + t.id.length + t.name.length + t.arguments.length,
                0,
              )
              : m.role === "tool"
              ? m.toolCallId.length + m.name.length
              : 0),
          0,
        ) / 4,
      ),
    ...overrides,
  };
}

const DEFAULT_NEXT = (input?: CompactionInput): Promise<CompactionResult> =>
  Promise.resolve({ strategy: "default", messages: (input?.messages ?? []).slice(-1) });

// The environment's compactor of the plugin, its answer always a promise.
function compactorOf(s: Scene): {
  compact(input: CompactionInput, next: CompactionNext): Promise<CompactionResult>;
} {
  const [entry] = s.runtime.environment().compactors;
  strictEqual(entry.owner, "squeeze");
  return { compact: (input, next) => Promise.resolve(entry.capability.compact(input, next)) };
}

Deno.test("a sandboxed compactor runs in its process; summarize and next cross to the host", async () => {
  const seen: unknown[] = [];
  const halves: number[] = [];
  await using s = await scene(() =>
    squeezePlugin(async (input, next) => {
      seen.push({
        reason: input.reason,
        keepTurns: input.keepTurns,
        instructions: input.instructions,
        state: [...input.state],
        count: input.messages.length,
        estimate: input.estimate(input.messages),
      });
      halves.push(input.estimate(input.messages.slice(0, 2)));
      const summary = await input.summarize({
        system: "Summarize the work so far.",
        messages: input.messages.slice(0, -1),
        maxTokens: 200,
      });
      const inner = await next({
        ...input,
        messages: [{ role: "user", content: summary }, ...input.messages.slice(-1)],
        keepTurns: 2,
      });
      return { strategy: `squeeze+${inner.strategy}`, messages: inner.messages };
    })
  );
  deepStrictEqual(s.registries.compactor.entries(), [{ id: "squeeze", owner: "squeeze" }]);
  const summaries: SummaryRequest[] = [];
  const handed: CompactionInput[] = [];
  const input = hostInput({}, summaries);
  const result = await compactorOf(s).compact(input, (given) => {
    handed.push(given!);
    return DEFAULT_NEXT(given);
  });
  deepStrictEqual(result, {
    strategy: "squeeze+default",
    messages: [{ role: "user", content: "Now summarize it." }],
  });
  const estimate = input.estimate(CONVERSATION);
  deepStrictEqual(seen, [{
    reason: "auto",
    keepTurns: 1,
    instructions: "keep the file names",
    state: [["todo.count", 2]],
    count: 5,
    estimate,
  }]);
  // Another list is estimated in the process at the host's ratio, so close to the host's own.
  const half = input.estimate(CONVERSATION.slice(0, 2));
  ok(halves.length === 1 && Math.abs(halves[0] - half) <= 1, `${halves} against ${half}`);
  deepStrictEqual(summaries, [{
    system: "Summarize the work so far.",
    messages: CONVERSATION.slice(0, -1),
    maxTokens: 200,
  }]);
  strictEqual(handed.length, 1);
  deepStrictEqual(handed[0].messages, [
    { role: "user", content: "summary of 4 messages" },
    { role: "user", content: "Now summarize it." },
  ]);
  strictEqual(handed[0].keepTurns, 2);
  // What the process cannot change is the host's own: the facts, the state, the callbacks.
  strictEqual(handed[0].tokens, 900);
  strictEqual(handed[0].state, input.state);
  strictEqual(handed[0].summarize, input.summarize);
  strictEqual(handed[0].signal, input.signal);
});

Deno.test("next with the input unchanged sends nothing back but the handle", async () => {
  await using s = await scene(() => squeezePlugin((input, next) => next(input)));
  const handed: CompactionInput[] = [];
  const input = hostInput();
  const result = await compactorOf(s).compact(input, (given) => {
    handed.push(given!);
    return DEFAULT_NEXT(given);
  });
  strictEqual(result.strategy, "default");
  strictEqual(handed[0], input, "the host's own input, not a copy");
});

Deno.test("what a sandboxed compactor answers is checked: garbage fails it, naming the plugin", async () => {
  const answers: readonly [unknown, RegExp][] = [
    ["all done", /answered a compaction result that is not an object/],
    [{ messages: [] }, /without a strategy name/],
    [{ strategy: "x", messages: "short" }, /answered messages that are not a list/],
    [
      { strategy: "x", messages: [{ role: "root", content: "hi" }] },
      /message #1, which has role "root"/,
    ],
    [{ strategy: "x", messages: [{ role: "user" }] }, /message #1, which has no text content/],
    [
      {
        strategy: "x",
        messages: [
          { role: "user", content: "a" },
          { role: "assistant", content: "", toolCalls: [{ id: "c", name: "read", arguments: {} }] },
        ],
      },
      /message #2, which has a tool call without a text id, name and arguments/,
    ],
    [
      { strategy: "x", messages: [{ role: "tool", content: "out", name: "read" }] },
      /message #1, which is a tool result without the id and name of its call/,
    ],
  ];
  let answer: unknown;
  await using s = await scene(() => squeezePlugin(() => answer as CompactionResult));
  const compactor = compactorOf(s);
  for (const [given, expected] of answers) {
    answer = given;
    await rejects(compactor.compact(hostInput(), DEFAULT_NEXT), (error) => {
      ok(error instanceof SandboxedCompactionError, String(error));
      strictEqual(error.pluginId, "squeeze");
      match(error.message, /^compactor 'squeeze' of plugin 'squeeze' /);
      match(error.message, expected);
      return true;
    });
  }
  strictEqual(s.runtime.state("squeeze").status, "active", "a bad answer is the kernel's to judge");
});

Deno.test("what the process adds beside a message's fields does not reach the host", async () => {
  await using s = await scene(() =>
    squeezePlugin(() => ({
      strategy: "sly",
      messages: [
        { role: "user", content: "hi", injected: "<script>" } as unknown as Message,
        { role: "system", content: "rules", source: "sly", extra: 1 } as unknown as Message,
      ],
    }))
  );
  const result = await compactorOf(s).compact(hostInput(), DEFAULT_NEXT);
  deepStrictEqual(result.messages, [
    { role: "user", content: "hi" },
    { role: "system", content: "rules", source: "sly" },
  ]);
});

Deno.test("what a provider needs back survives a sandboxed compactor's answer", async () => {
  // DeepSeek's reasoning field, Gemini's text and call signatures: without them the next request
  // is refused (DeepSeek) or loses its proof (Gemini).
  const assistant = {
    role: "assistant",
    content: "Reading.",
    reasoning: "think",
    reasoningField: "reasoning_content",
    textSignature: "sig-text",
    toolCalls: [{ id: "c1", name: "read", arguments: "{}", signature: "sig-call" }],
  } as const;
  await using s = await scene(() =>
    squeezePlugin(() => ({
      strategy: "keep",
      messages: [
        { role: "user", content: "go" },
        assistant,
        { role: "tool", toolCallId: "c1", name: "read", content: "x" },
      ],
    }))
  );
  const result = await compactorOf(s).compact(hostInput(), DEFAULT_NEXT);
  deepStrictEqual(result.messages[1], assistant);
});

Deno.test("a garbage request to summarize or next fails the compaction even when caught", async () => {
  const requests: readonly [(input: CompactionInput, next: CompactionInput) => unknown, RegExp][] =
    [
      [
        (input) => input.summarize({ system: 3, messages: [] } as unknown as SummaryRequest),
        /asked for a summary without system instructions/,
      ],
      [
        (input) => input.summarize({ system: "s", messages: [{ role: "x" }] } as never),
        /asked for a summary of message #1, which has role "x"/,
      ],
      [
        (input) => input.summarize({ system: "s", messages: [], maxTokens: -1 }),
        /maxTokens is not a whole number from 1/,
      ],
      [(_, changed) => changed, /called next with a keepTurns that is not a whole number from 1/],
    ];
  let ask = requests[0][0];
  const summarized: SummaryRequest[] = [];
  await using s = await scene(() =>
    squeezePlugin(async (input, next) => {
      try {
        const changed = { ...input, keepTurns: 0 };
        const asked = ask(input, changed);
        if (asked === changed) await next(changed);
        else await asked;
      } catch {
        // A careless author swallows the refusal and answers anyway.
      }
      return { strategy: "swallowed", messages: input.messages.slice(-1) };
    })
  );
  const compactor = compactorOf(s);
  for (const [request, expected] of requests) {
    ask = request;
    let nexts = 0;
    await rejects(
      compactor.compact(hostInput({}, summarized), (given) => (nexts++, DEFAULT_NEXT(given))),
      (error) => {
        ok(error instanceof SandboxedCompactionError, String(error));
        match(error.message, /^compactor 'squeeze' of plugin 'squeeze' /);
        match(error.message, expected);
        return true;
      },
    );
    strictEqual(nexts, 0, "the host's chain never ran on a refused input");
  }
  deepStrictEqual(summarized, [], "the provider was never asked");
});

Deno.test("a compactor cannot make the host pay for summaries or nexts without limit", async () => {
  // A hostile author asks all at once, far past the limit, and answers whatever it got.
  let flood: (input: CompactionInput, next: CompactionNext) => Promise<unknown>[] = () => [];
  await using s = await scene(() =>
    squeezePlugin(async (input, next) => {
      await Promise.allSettled(flood(input, next));
      return { strategy: "flood", messages: input.messages.slice(-1) };
    })
  );
  const compactor = compactorOf(s);
  const floods: readonly [typeof flood, RegExp, "summaries" | "nexts"][] = [
    [
      (input) => Array.from({ length: 50 }, () => input.summarize({ system: "s", messages: [] })),
      /asked for more than 8 summaries/,
      "summaries",
    ],
    [
      (input, next) => Array.from({ length: 50 }, (_, i) => next({ ...input, keepTurns: i + 1 })),
      /called next more than 4 times/,
      "nexts",
    ],
  ];
  for (const [asks, expected, counted] of floods) {
    flood = asks;
    let summaries = 0;
    let nexts = 0;
    const input = hostInput({ summarize: () => (summaries++, Promise.resolve("s")) });
    await rejects(
      compactor.compact(input, (given) => (nexts++, DEFAULT_NEXT(given))),
      (error) => {
        ok(error instanceof SandboxedCompactionError, String(error));
        match(error.message, /^compactor 'squeeze' of plugin 'squeeze' /);
        match(error.message, expected);
        return true;
      },
    );
    deepStrictEqual(
      { summaries, nexts },
      counted === "summaries"
        ? { summaries: COMPACTION_ASKS.summaries, nexts: 0 }
        : { summaries: 0, nexts: COMPACTION_ASKS.nexts },
    );
  }
});

Deno.test("a compactor that throws in its process rejects with its words and the plugin", async () => {
  await using s = await scene(() =>
    squeezePlugin(() => {
      throw new Error("out of ideas");
    })
  );
  await rejects(compactorOf(s).compact(hostInput(), DEFAULT_NEXT), /out of ideas/);
  strictEqual(s.runtime.state("squeeze").status, "active");
});

Deno.test("a compactor that hangs is killed at the compactor deadline and its plugin fails", async () => {
  await using s = await scene(
    () => squeezePlugin(() => new Promise<CompactionResult>(() => {})),
    { plugins: {}, timeouts: { compactor: 60, hook: 5_000 } },
  );
  const started = performance.now();
  await rejects(compactorOf(s).compact(hostInput(), DEFAULT_NEXT), (error) => {
    ok(error instanceof DeadlineError, String(error));
    strictEqual(error.ms, 60);
    match(error.message, /compactor 'squeeze' of plugin 'squeeze' did not finish within 60 ms/);
    return true;
  });
  ok(performance.now() - started < 2_000);
  await s.made[0].ended;
  await Promise.resolve();
  await s.runtime.settled();
  const state = s.runtime.state("squeeze");
  strictEqual(state.status, "failed");
  match(
    state.status === "failed" ? state.reason : "",
    /compactor 'squeeze' of plugin 'squeeze' did not answer within 60 ms/,
  );
  deepStrictEqual(s.runtime.environment().compactors, [], "gone with its plugin");
});

Deno.test("the run's cancel crosses to the compactor in the process", async () => {
  const { promise: aborted, resolve } = Promise.withResolvers<string>();
  const { promise: started, resolve: start } = Promise.withResolvers<void>();
  await using s = await scene(() =>
    squeezePlugin((input) =>
      new Promise<CompactionResult>((_, reject) => {
        const stop = () => {
          resolve("aborted in the process");
          reject(new Error("cancelled"));
        };
        if (input.signal.aborted) stop();
        else input.signal.addEventListener("abort", stop);
        start();
      })
    )
  );
  const controller = new AbortController();
  const running = compactorOf(s).compact(hostInput({ signal: controller.signal }), DEFAULT_NEXT);
  await started;
  controller.abort();
  strictEqual(await aborted, "aborted in the process");
  await rejects(running, /cancelled/);
});

Deno.test("a request about a compaction that is over is refused", async () => {
  let kept: CompactionInput | undefined;
  await using s = await scene(() =>
    squeezePlugin((input, next) => {
      kept = input;
      return next(input);
    }, [{
      kind: "hook",
      name: "late",
      point: "BeforeCompaction",
      // Runs in the process after the compaction ended, with the callbacks it kept.
      run: async () => {
        try {
          await kept!.summarize({ system: "s", messages: [] });
          return { compaction: { veto: "summarize answered" } };
        } catch (error) {
          return { compaction: { veto: (error as Error).message } };
        }
      },
    }])
  );
  let summaries = 0;
  const input = hostInput({ summarize: () => (summaries++, Promise.resolve("s")) });
  await compactorOf(s).compact(input, DEFAULT_NEXT);
  const hook = s.runtime.environment().hooks.BeforeCompaction[0].capability;
  const reaction = await hook.run({
    point: "BeforeCompaction",
    step: 0,
    transcript: [],
    state: new Map(),
  });
  match(reaction.compaction?.veto ?? "", /no compaction 1 is running/);
  strictEqual(summaries, 0);
});

Deno.test("a switched-off sandboxed plugin takes its compactor along; the old proxy answers at once", async () => {
  await using s = await scene(() => squeezePlugin((input, next) => next(input)));
  const compactor = compactorOf(s);
  await s.runtime.setState("squeeze", false);
  deepStrictEqual(s.runtime.environment().compactors, []);
  deepStrictEqual(s.registries.compactor.entries(), []);
  await rejects(compactor.compact(hostInput(), DEFAULT_NEXT), (error) => {
    ok(error instanceof PluginEndedError, String(error));
    match(error.message, /plugin 'squeeze' is not running: it was switched off/);
    return true;
  });
  await s.runtime.setState("squeeze", true);
  strictEqual((await compactorOf(s).compact(hostInput(), DEFAULT_NEXT)).strategy, "default");
});

Deno.test("a sandboxed compactor outside its bound is refused", async () => {
  await using s = await scene(() => ({
    ...squeezePlugin((input, next) => next(input)),
    bound: { runEndGuards: any() },
  }));
  const state = s.runtime.state("squeeze");
  strictEqual(state.status, "failed");
  match(
    state.status === "failed" ? state.reason : "",
    /plugin 'squeeze' contributes compactor 'squeeze', outside its bound \(compactors: exact \[\]\)/,
  );
});

function beforeCompaction(react: HookCapability["run"]): Capability {
  return { kind: "hook", name: "steer", point: "BeforeCompaction", run: react };
}

Deno.test("a sandboxed BeforeCompaction hook sees the plan; its adjustment is checked", async () => {
  let reaction: unknown = {};
  const plans: unknown[] = [];
  await using s = await scene(() =>
    squeezePlugin((input, next) => next(input), [
      beforeCompaction((input) => {
        plans.push(input.compaction);
        return reaction as HookReaction;
      }),
    ])
  );
  const [entry] = s.runtime.environment().hooks.BeforeCompaction;
  strictEqual(entry.owner, "squeeze");
  const plan = { reason: "manual" as const, tokens: 10, budget: 100, threshold: 85, keepTurns: 2 };
  const run = () =>
    Promise.resolve(entry.capability.run({
      point: "BeforeCompaction",
      step: 3,
      transcript: [],
      state: new Map(),
      compaction: plan,
    }));
  reaction = { compaction: { veto: "not now", instructions: "keep todos", keepTurns: 3 } };
  deepStrictEqual(await run(), reaction);
  deepStrictEqual(plans, [plan]);
  reaction = { messages: [], compaction: { keepTurns: 4, sneaky: "dropped" } };
  deepStrictEqual(await run(), { messages: [], compaction: { keepTurns: 4 } });
  reaction = { state: [] };
  deepStrictEqual(await run(), { state: [] }, "no adjustment is none");
  const garbage: readonly [unknown, RegExp][] = [
    [{ veto: 5 }, /a compaction veto that is not text/],
    [{ instructions: ["a"] }, /compaction instructions that are not text/],
    [{ keepTurns: 0 }, /keepTurns that is not a whole number from 1/],
    [{ keepTurns: 1.5 }, /keepTurns that is not a whole number from 1/],
    [{ keepTurns: "2" }, /keepTurns that is not a whole number from 1/],
    ["veto", /a compaction adjustment that is not an object/],
    [null, /a compaction adjustment that is not an object/],
  ];
  for (const [compaction, expected] of garbage) {
    reaction = { compaction };
    await rejects(run(), (error) => {
      ok(error instanceof SandboxedCompactionError, String(error));
      strictEqual(error.pluginId, "squeeze");
      match(error.message, /^hook 'steer' of plugin 'squeeze' answered /);
      match(error.message, expected);
      return true;
    });
  }
});
