// A compactor is a capability kind like any other (issue 14): a plugin contributes it inside its
// bound, the registry rejects a duplicate name or a missing `compact`, the execution environment
// holds the chain outermost first, and a plugin switched off takes its compactor with it at the
// next step boundary.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import {
  type CapabilityBound,
  type CompactionInput,
  type CompactionResult,
  type CompactorCapability,
  exact,
  type Message,
  namespace,
  PHASE_HOOK_POINTS,
} from "@amber/core";
import { makePlugin, makeRuntime } from "../_helpers.ts";

function compactor(
  name: string,
  compact: CompactorCapability["compact"] = (input, next) => next(input),
): CompactorCapability {
  return { kind: "compactor", name, compact };
}

function failureOf(runtime: ReturnType<typeof makeRuntime>["runtime"], id: string): string {
  const state = runtime.state(id);
  return state.status === "failed" ? state.reason : `not failed but ${state.status}`;
}

const messages: readonly Message[] = [
  { role: "user", content: "start" },
  { role: "assistant", content: "ok" },
  { role: "user", content: "go on" },
];

function input(): CompactionInput {
  return {
    reason: "manual",
    tokens: 100,
    budget: 1_000,
    threshold: 850,
    keepTurns: 1,
    messages,
    state: new Map(),
    signal: new AbortController().signal,
    summarize: () => Promise.resolve("summary"),
    estimate: (list) => list.length,
  };
}

// Runs a chain the way the kernel does: each compactor's `next` is the one after it, the last
// one's is the default strategy.
function runChain(
  chain: readonly { readonly capability: CompactorCapability }[],
  start: CompactionInput,
): Promise<CompactionResult> {
  const at = (i: number) => (given?: CompactionInput): Promise<CompactionResult> => {
    const current = given ?? start;
    if (i === chain.length) {
      return Promise.resolve({ strategy: "default", messages: current.messages });
    }
    return Promise.resolve(chain[i].capability.compact(current, at(i + 1)));
  };
  return at(0)();
}

Deno.test("a compactor inside its bound lands in the registry and the environment", async () => {
  const { runtime, registries } = makeRuntime();
  runtime.register(
    makePlugin("trim", [compactor("trim")], { bound: { compactors: exact("trim") } }),
  );
  await runtime.start();
  strictEqual(runtime.state("trim").status, "active");
  deepStrictEqual(registries.compactor.entries(), [{ id: "trim", owner: "trim" }]);
  deepStrictEqual(runtime.environment().compactors.map((e) => `${e.owner}/${e.name}`), [
    "trim/trim",
  ]);
  deepStrictEqual(runtime.info("trim").contributions.map((c) => c.kind), ["compactor"]);
});

Deno.test("a compactor outside its bound is refused, naming the plugin and the compactor", async () => {
  const bounds: readonly (CapabilityBound | undefined)[] = [
    undefined,
    {},
    { compactors: exact("other") },
    { compactors: namespace("mine_") },
    // An open guard axis is no licence for a compactor: each kind has its own axis.
    { runEndGuards: exact("sneaky"), phaseHooks: PHASE_HOOK_POINTS },
  ];
  for (const bound of bounds) {
    const { runtime, registries } = makeRuntime();
    runtime.register(makePlugin("sneaky", [compactor("sneaky")], { bound }));
    await runtime.start();
    match(
      failureOf(runtime, "sneaky"),
      /plugin 'sneaky' contributes compactor 'sneaky', outside its bound \(compactors: /,
      JSON.stringify(bound),
    );
    deepStrictEqual(registries.compactor.entries(), [], "nothing of it stays");
    deepStrictEqual(runtime.environment().compactors, []);
  }
});

Deno.test("two plugins cannot hold compactors of one name: the second fails naming both", async () => {
  const { runtime, registries } = makeRuntime();
  runtime.register(makePlugin("first", [compactor("summary")]));
  runtime.register(makePlugin("second", [compactor("summary")]));
  await runtime.start();
  strictEqual(runtime.state("first").status, "active");
  match(
    failureOf(runtime, "second"),
    /compactor 'summary' of plugin 'second' collides with the compactor of plugin 'first'/,
  );
  deepStrictEqual(registries.compactor.entries(), [{ id: "summary", owner: "first" }]);
});

Deno.test("a compactor without a compact function fails its plugin", async () => {
  const { runtime, registries } = makeRuntime();
  const careless = {
    kind: "compactor",
    name: "lazy",
    compact: "later",
  } as unknown as CompactorCapability;
  runtime.register(makePlugin("careless", [careless]));
  await runtime.start();
  match(failureOf(runtime, "careless"), /compactor 'lazy' of plugin 'careless' has no compact/);
  deepStrictEqual(registries.compactor.entries(), []);
});

Deno.test("the chain runs outermost first: a plugin's compactor wraps those it requires", async () => {
  const { runtime } = makeRuntime();
  const seen: string[] = [];
  const tagging = (name: string): CompactorCapability =>
    compactor(name, async (given, next) => {
      seen.push(`${name} in`);
      const result = await next(given);
      seen.push(`${name} out`);
      return { ...result, strategy: `${name}(${result.strategy})` };
    });
  // Registered dependents first, so registration order cannot be what puts them outside.
  runtime.register(makePlugin("tweak", [tagging("tweak")], { requires: { base: "^1.0.0" } }));
  runtime.register(makePlugin("base", [tagging("base_a"), tagging("base_b")]));
  runtime.register(makePlugin("lone", [tagging("lone")]));
  await runtime.start();
  const env = runtime.environment();
  const chain = env.compactors.map((e) => e.name);
  ok(
    chain.indexOf("tweak") < chain.indexOf("base_a"),
    `tweak requires base, so it wraps it: ${chain}`,
  );
  ok(chain.indexOf("base_a") < chain.indexOf("base_b"), "within a plugin, registration order");
  const result = await runChain(env.compactors, input());
  strictEqual(seen[0], `${chain[0]} in`);
  strictEqual(result.strategy, chain.reduceRight((inner, name) => `${name}(${inner})`, "default"));
  ok(result.strategy.startsWith("tweak(") || result.strategy.startsWith("lone("));
  ok(result.strategy.includes("tweak(base_a(base_b("), result.strategy);
});

Deno.test("a compactor that answers without next replaces what comes after it", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("outer", [
    compactor("outer", () => ({ strategy: "outer", messages: messages.slice(-1) })),
  ], { requires: { inner: "^1.0.0" } }));
  const ran: string[] = [];
  runtime.register(makePlugin("inner", [
    compactor("inner", (given, next) => (ran.push("inner"), next(given))),
  ]));
  await runtime.start();
  const result = await runChain(runtime.environment().compactors, input());
  deepStrictEqual(result, { strategy: "outer", messages: messages.slice(-1) });
  deepStrictEqual(ran, [], "the inner compactor never ran");
});

Deno.test("a plugin switched off takes its compactor with it at the next step boundary", async () => {
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("keep", [compactor("keep")]));
  runtime.register(makePlugin("drop", [compactor("drop")]));
  await runtime.start();
  const before = runtime.environment();
  deepStrictEqual(before.compactors.map((e) => e.name).sort(), ["drop", "keep"]);
  await runtime.setState("drop", false);
  // The snapshot a step resolved keeps what it had; the next one does not.
  deepStrictEqual(before.compactors.map((e) => e.name).sort(), ["drop", "keep"]);
  const after = runtime.environment();
  ok(after !== before);
  deepStrictEqual(after.compactors.map((e) => e.name), ["keep"]);
  await runtime.setState("drop", true);
  deepStrictEqual(runtime.environment().compactors.map((e) => e.name).sort(), ["drop", "keep"]);
});

Deno.test("BeforeCompaction is a phase hook point a bound can admit or leave out", async () => {
  const hook = {
    kind: "hook" as const,
    name: "veto",
    point: "BeforeCompaction" as const,
    run: () => ({ compaction: { veto: "not now" } }),
  };
  const { runtime, registries } = makeRuntime();
  runtime.register(makePlugin("allowed", [hook], { bound: { phaseHooks: ["BeforeCompaction"] } }));
  runtime.register(
    makePlugin("refused", [{ ...hook, name: "veto2" }], { bound: { phaseHooks: ["StepEnd"] } }),
  );
  await runtime.start();
  strictEqual(runtime.state("allowed").status, "active");
  deepStrictEqual(runtime.environment().hooks.BeforeCompaction.map((e) => e.name), ["veto"]);
  match(
    failureOf(runtime, "refused"),
    /plugin 'refused' contributes hook 'veto2' at BeforeCompaction, outside its bound \(phaseHooks: \[StepEnd\]\)/,
  );
  deepStrictEqual(registries.hook.entries(), [{ id: "veto", owner: "allowed" }]);
});
