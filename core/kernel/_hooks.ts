/**
 * Phase hooks and the state store they propose changes to. A hook never writes the store: it
 * returns a proposal (state commands, reminder messages) that is checked here and staged, and the
 * kernel applies it on the commit path. A command is kept only for a state key that the hook's
 * own plugin declared; every hook of a step sees the same frozen snapshot of the state as of the
 * last commit, and a frozen transcript.
 *
 * @module
 */

import type { CompactionPlan } from "../compaction.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { HookCapability, HookInput, PhaseHookPoint, StateCommand } from "../hooks.ts";
import { timeoutFor, withDeadline } from "../limits.ts";
import type { Message } from "../message.ts";
import type { NamedEntry } from "../registry.ts";
import { deepFreeze } from "../read_only.ts";
import type { PluginRuntime } from "../runtime.ts";
import { faultText } from "./_fault_text.ts";
import { freezeMessage, transcriptSnapshot } from "./_snapshot.ts";

/** What the hooks need of the runtime: its config (deadlines) and its diagnostics. */
export type HookRuntime = Pick<PluginRuntime, "config" | "report">;

/**
 * Runs the phase hooks of one run at their points.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { HookCapability, Message, StateCommand } from "@amber/core";
 * import { PhaseHooks } from "./_hooks.ts";
 * const reported: string[] = [];
 * const runtime = {
 *   config: () => ({ plugins: {} }),
 *   report: (d: { message: string }) => reported.push(d.message),
 * };
 * const state = new Map<string, unknown>([["count", 0]]);
 * const hooks = new PhaseHooks(runtime, [], () => state);
 * const count: HookCapability = {
 *   kind: "hook",
 *   name: "count",
 *   point: "StepEnd",
 *   run: () => ({
 *     state: [{ op: "set", key: "count", value: 1 }, { op: "delete", key: "theirs" }],
 *     messages: [{ role: "user", content: "reminder" }],
 *   }),
 * };
 * const key = (name: string, owner: string) => ({
 *   name,
 *   owner,
 *   capability: { kind: "state" as const, name, initial: 0 },
 * });
 * const env = {
 *   hooks: {
 *     StepStart: [],
 *     BeforeInference: [],
 *     AfterInference: [],
 *     AfterTool: [],
 *     StepEnd: [{ name: "count", owner: "p", capability: count }],
 *     BeforeCompaction: [],
 *   },
 *   stateKeys: new Map([["count", key("count", "p")], ["theirs", key("theirs", "q")]]),
 * };
 * const stepMessages: Message[] = [];
 * const staged: StateCommand[] = [];
 * await hooks.run(env, "StepEnd", 0, stepMessages, staged);
 * // Staged, not applied: the store changes on the commit path.
 * assert.deepEqual(staged, [{ op: "set", key: "count", value: 1 }]);
 * assert.equal(state.get("count"), 0);
 * assert.deepEqual(stepMessages, [{ role: "user", content: "reminder" }]);
 * assert.deepEqual(reported, [
 *   "state key 'theirs' belongs to plugin 'q', not to 'p'; the command is ignored",
 * ]);
 * ```
 */
export class PhaseHooks {
  readonly #runtime: HookRuntime;
  readonly #conversation: readonly Message[];
  readonly #state: () => ReadonlyMap<string, unknown>;

  /**
   * Creates the hooks of a run over its committed conversation, which the run extends in place
   * as it commits, and `state`, which gives the frozen snapshot of the store as of the last
   * commit; hook faults go to `runtime.report`.
   */
  constructor(
    runtime: HookRuntime,
    conversation: readonly Message[],
    state: () => ReadonlyMap<string, unknown>,
  ) {
    this.#runtime = runtime;
    this.#conversation = conversation;
    this.#state = state;
  }

  /**
   * Runs the hooks at `point` of step `step` in dependency order, each under its deadline
   * (`timeouts.hook`), each seeing the committed conversation and the step's messages so far.
   * Their reminder messages go to the end of `stepMessages`; their commands for keys their own
   * plugin declared go to `staged`. A hook that throws, overruns or returns something malformed
   * is reported and what it proposed is dropped; the others go on.
   */
  async run(
    env: Pick<ResolvedExecutionEnv, "hooks" | "stateKeys">,
    point: PhaseHookPoint,
    step: number,
    stepMessages: Message[],
    staged: StateCommand[],
    tool?: HookInput["tool"],
  ): Promise<void> {
    const hooks = env.hooks[point];
    if (hooks.length === 0) return;
    const input: HookInput = Object.freeze({
      point,
      step,
      transcript: transcriptSnapshot(this.#conversation, stepMessages),
      state: this.#state(),
      // The result is copied, not frozen in place: the tool's own object (and its `data`, which
      // may be the host's live record) stays the tool's.
      ...(tool === undefined
        ? {}
        : { tool: Object.freeze({ call: tool.call, result: Object.freeze({ ...tool.result }) }) }),
    });
    for (const entry of hooks) {
      const what = `hook '${entry.name}' of plugin '${entry.owner}' at ${point}`;
      let reaction: unknown;
      try {
        const ms = timeoutFor(this.#runtime.config(), "hook", entry.owner);
        reaction = await withDeadline(() => entry.capability.run(input), ms, what);
      } catch (error) {
        this.#fault(entry, what, faultText(error), error);
        continue;
      }
      const proposal = this.#check(env, entry, what, reaction);
      for (const command of proposal.state) staged.push(command);
      for (const message of proposal.messages) stepMessages.push(message);
    }
  }

  // The parts of a reaction that hold, each a fresh frozen copy; every part that does not is
  // reported. A hook that returns nothing proposes nothing.
  #check(
    env: Pick<ResolvedExecutionEnv, "stateKeys">,
    entry: NamedEntry<HookCapability>,
    what: string,
    reaction: unknown,
  ): { state: StateCommand[]; messages: Message[] } {
    const proposal: { state: StateCommand[]; messages: Message[] } = { state: [], messages: [] };
    if (reaction === undefined || reaction === null) return proposal;
    if (typeof reaction !== "object") {
      this.#fault(entry, what, `returned a ${typeof reaction} instead of a reaction`);
      return proposal;
    }
    const { state, messages } = reaction as { state?: unknown; messages?: unknown };
    if (state !== undefined && !Array.isArray(state)) {
      this.#fault(entry, what, "returned `state` that is not a list of commands; ignored");
    } else {
      for (const command of state ?? []) {
        const checked = checkCommand(env, entry.owner, command);
        if (typeof checked === "string") this.#fault(entry, what, checked);
        else proposal.state.push(checked);
      }
    }
    if (messages !== undefined && !Array.isArray(messages)) {
      this.#fault(entry, what, "returned `messages` that is not a list of messages; ignored");
    } else {
      for (const message of messages ?? []) {
        const role = (message as { role?: unknown } | null)?.role;
        const content = (message as { content?: unknown } | null)?.content;
        if ((role === "user" || role === "system") && typeof content === "string") {
          proposal.messages.push(freezeMessage({ role, content }));
        } else {
          this.#fault(
            entry,
            what,
            "returned a message that is not a user or system message with text; ignored",
          );
        }
      }
    }
    return proposal;
  }

  #fault(entry: NamedEntry<HookCapability>, where: string, message: string, error?: unknown): void {
    this.#runtime.report({
      pluginId: entry.owner,
      where,
      message,
      ...(error === undefined ? {} : { error }),
    });
  }
}

/**
 * Runs the `BeforeCompaction` hooks in dependency order, each under its deadline, each seeing
 * the plan as the hooks before it adjusted it. A reaction's `compaction` may veto (the first
 * veto ends the round; an overflow's compaction cannot be vetoed, so there it is ignored) or
 * replace the instructions or the turns kept (a whole number, at least 1). Anything else a
 * reaction proposes, or a malformed adjustment, is reported and ignored.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { HookCapability } from "@amber/core";
 * import { compactionHooks } from "./_hooks.ts";
 * const hook: HookCapability = {
 *   kind: "hook",
 *   name: "keep_more",
 *   point: "BeforeCompaction",
 *   run: ({ compaction }) => ({ compaction: { keepTurns: (compaction?.keepTurns ?? 0) + 1 } }),
 * };
 * const runtime = { config: () => ({ plugins: {} }), report: () => {} };
 * const plan = { reason: "auto" as const, tokens: 900, budget: 1000, threshold: 850, keepTurns: 2 };
 * const outcome = await compactionHooks(runtime, [{ name: "keep_more", owner: "p", capability: hook }], {
 *   step: 3, transcript: [], state: new Map(), plan,
 * });
 * assert.deepEqual(outcome, { plan: { ...plan, keepTurns: 3 } });
 * ```
 */
export async function compactionHooks(
  runtime: HookRuntime,
  hooks: readonly NamedEntry<HookCapability>[],
  at: {
    readonly step: number;
    readonly transcript: readonly Message[];
    readonly state: ReadonlyMap<string, unknown>;
    readonly plan: CompactionPlan;
  },
): Promise<{ plan: CompactionPlan; veto?: string }> {
  let plan = at.plan;
  const fault = (entry: NamedEntry<HookCapability>, where: string, message: string, e?: unknown) =>
    runtime.report({
      pluginId: entry.owner,
      where,
      message,
      ...(e === undefined ? {} : { error: e }),
    });
  for (const entry of hooks) {
    const what = `hook '${entry.name}' of plugin '${entry.owner}' at BeforeCompaction`;
    const input: HookInput = Object.freeze({
      point: "BeforeCompaction" as const,
      step: at.step,
      transcript: at.transcript,
      state: at.state,
      compaction: Object.freeze({ ...plan }),
    });
    let reaction: unknown;
    try {
      const ms = timeoutFor(runtime.config(), "hook", entry.owner);
      reaction = await withDeadline(() => entry.capability.run(input), ms, what);
    } catch (error) {
      fault(entry, what, faultText(error), error);
      continue;
    }
    if (reaction === undefined || reaction === null) continue;
    const { state, messages, compaction } = reaction as Record<string, unknown>;
    if (state !== undefined || messages !== undefined) {
      fault(entry, what, "proposed state or messages, which this point takes none of; ignored");
    }
    if (compaction === undefined) continue;
    const { veto, instructions, keepTurns } = (compaction ?? {}) as Record<string, unknown>;
    if (typeof veto === "string" && veto !== "") {
      if (plan.reason !== "overflow") return { plan, veto: `${what} vetoed it: ${veto}` };
    }
    if (instructions !== undefined) {
      if (typeof instructions === "string") plan = { ...plan, instructions };
      else fault(entry, what, "proposed instructions that are not text; ignored");
    }
    if (keepTurns !== undefined) {
      if (Number.isInteger(keepTurns) && (keepTurns as number) >= 1) {
        plan = { ...plan, keepTurns: keepTurns as number };
      } else fault(entry, what, "proposed keepTurns that is not a whole number from 1; ignored");
    }
  }
  return { plan };
}

// One proposed command, as a fresh frozen copy, when it is well formed and its key belongs to
// the proposing plugin; else what is wrong with it.
function checkCommand(
  env: Pick<ResolvedExecutionEnv, "stateKeys">,
  owner: string,
  value: unknown,
): StateCommand | string {
  const command = value as { op?: unknown; key?: unknown; value?: unknown } | null;
  if (typeof command !== "object" || command === null || typeof command.key !== "string") {
    return "returned a state command without a key; ignored";
  }
  const key = command.key;
  const declared = env.stateKeys.get(key);
  if (declared === undefined) {
    return `state key '${key}' is not declared by any plugin; the command is ignored`;
  }
  if (declared.owner !== owner) {
    return `state key '${key}' belongs to plugin '${declared.owner}', not to '${owner}'; ` +
      "the command is ignored";
  }
  if (command.op === "delete") return Object.freeze({ op: "delete" as const, key });
  if (command.op === "set") {
    // A copy: the hook may go on using its own object; the store's must not change under it.
    const copy = deepFreeze(structuredCloneOr(command.value));
    return Object.freeze({ op: "set" as const, key, value: copy });
  }
  return `state command for '${key}' has an unknown op; ignored`;
}

/**
 * Fills an empty state store: every declared key at its initial value, then the commands a
 * resumed session committed before, in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { seedState } from "./_hooks.ts";
 * const state = new Map<string, unknown>();
 * const declared = { kind: "state" as const, name: "a", initial: 0 };
 * const stateKeys = new Map([["a", { name: "a", owner: "p", capability: declared }]]);
 * seedState(state, { stateKeys }, [{ op: "set", key: "a", value: 2 }]);
 * assert.deepEqual([...state], [["a", 2]]);
 * ```
 */
export function seedState(
  state: Map<string, unknown>,
  env: Pick<ResolvedExecutionEnv, "stateKeys">,
  history: readonly StateCommand[],
): void {
  for (const [key, entry] of env.stateKeys) {
    state.set(key, deepFreeze(structuredCloneOr(entry.capability.initial)));
  }
  for (const command of history) applyCommand(state, command);
}

/**
 * Applies one state command to the store.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyCommand } from "./_hooks.ts";
 * const state = new Map<string, unknown>([["a", 1]]);
 * applyCommand(state, { op: "set", key: "b", value: 2 });
 * applyCommand(state, { op: "delete", key: "a" });
 * assert.deepEqual([...state], [["b", 2]]);
 * ```
 */
export function applyCommand(state: Map<string, unknown>, command: StateCommand): void {
  if (command.op === "set") state.set(command.key, deepFreeze(command.value));
  else state.delete(command.key);
}

// A plugin's value (a declared initial value, a proposed one) is its own object: the store keeps
// a frozen copy, so freezing never reaches into the plugin. A value that cannot be copied (it
// holds a function, say) is frozen as it is.
function structuredCloneOr(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}
