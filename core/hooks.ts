/**
 * The kernel's extension points (seed 004): phase hooks, tool gates, run-end guards, action
 * kinds and state keys. Plugins contribute them as capabilities; the resolved execution
 * environment holds them in dependency order, and the run kernel calls them at fixed seams.
 *
 * @module
 */

import type { CompactionAdjustment, CompactionPlan } from "./compaction.ts";
import type { Message, ToolCall } from "./message.ts";
import type { ToolResult } from "./tool.ts";

/**
 * The points of a step where phase hooks run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PHASE_HOOK_POINTS } from "@amber/core";
 * assert.equal(PHASE_HOOK_POINTS[0], "StepStart");
 * ```
 */
export const PHASE_HOOK_POINTS: readonly PhaseHookPoint[] = Object.freeze([
  "StepStart",
  "BeforeInference",
  "AfterInference",
  "AfterTool",
  "StepEnd",
  "BeforeCompaction",
]);

/** A point of a step where phase hooks run. */
export type PhaseHookPoint =
  | "StepStart"
  | "BeforeInference"
  | "AfterInference"
  | "AfterTool"
  | "StepEnd"
  /** Before a compaction: the hook may veto or adjust it (its reaction's `compaction`). */
  | "BeforeCompaction";

/** A change a hook stages for the commit path: set or delete the value of a state key. */
export type StateCommand =
  | { readonly op: "set"; readonly key: string; readonly value: unknown }
  | { readonly op: "delete"; readonly key: string };

/**
 * What a phase hook returns: state commands the kernel applies on the commit path, and reminder
 * messages it commits to the transcript. Hooks never write either directly.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { HookReaction } from "@amber/core";
 * const reaction: HookReaction = {
 *   state: [{ op: "set", key: "todo.count", value: 3 }],
 *   messages: [{ role: "user", content: "Reminder: 3 todos are open." }],
 * };
 * assert.equal(reaction.state?.length, 1);
 * ```
 */
export interface HookReaction {
  /** State changes, applied in order. */
  readonly state?: readonly StateCommand[];
  /** Reminder messages, committed to the transcript. */
  readonly messages?: readonly Message[];
  /** At `BeforeCompaction`: a veto, or other instructions or turns to keep. */
  readonly compaction?: CompactionAdjustment;
}

/** What a phase hook sees: the step, the committed transcript and the state store, read-only. */
export interface HookInput {
  /** The point it runs at. */
  readonly point: PhaseHookPoint;
  /** The 0-based step number. */
  readonly step: number;
  /** The transcript so far. */
  readonly transcript: readonly Message[];
  /** The state store as of the last commit. */
  readonly state: ReadonlyMap<string, unknown>;
  /** At `AfterTool`: the call and its result. */
  readonly tool?: { readonly call: ToolCall; readonly result: ToolResult };
  /** At `BeforeCompaction`: the compaction about to run. */
  readonly compaction?: CompactionPlan;
}

/**
 * A phase hook capability.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { HookCapability } from "@amber/core";
 * const hook: HookCapability = { kind: "hook", name: "count", point: "StepEnd", run: () => ({}) };
 * const input = { point: "StepEnd" as const, step: 0, transcript: [], state: new Map() };
 * assert.deepEqual(await hook.run(input), {});
 * ```
 */
export interface HookCapability {
  /** The dispatch key. */
  readonly kind: "hook";
  /** Unique across the harness. */
  readonly name: string;
  /** Where it runs. */
  readonly point: PhaseHookPoint;
  /** Runs the hook. */
  run(input: HookInput): HookReaction | Promise<HookReaction>;
}

/**
 * What a tool gate decides for one call. A gate can only restrict: it never grants approval.
 */
export type GateOutcome =
  | { readonly kind: "allow" }
  | { readonly kind: "block"; readonly reason: string }
  | { readonly kind: "setResult"; readonly result: ToolResult }
  | {
    readonly kind: "requireConfirmation";
    readonly correlationId: string;
    /** Why it asks, shown to the user with the question. */
    readonly reason?: string;
  }
  | { readonly kind: "schedule"; readonly correlationId: string; readonly actionKind?: string };

/** What a tool gate sees. */
export interface GateInput {
  /** The call. */
  readonly call: ToolCall;
  /** The parsed arguments. */
  readonly args: unknown;
  /** The state store as of the last commit. */
  readonly state: ReadonlyMap<string, unknown>;
}

/**
 * A tool gate capability.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { GateCapability } from "@amber/core";
 * const gate: GateCapability = {
 *   kind: "gate",
 *   name: "no_rm",
 *   check: ({ call }) =>
 *     call.name === "bash" && call.arguments.includes("rm -rf")
 *       ? { kind: "block", reason: "rm -rf is not allowed here" }
 *       : { kind: "allow" },
 * };
 * const call = { id: "c1", name: "bash", arguments: '{"command":"rm -rf /"}' };
 * const outcome = await gate.check({ call, args: {}, state: new Map() });
 * assert.deepEqual(outcome, { kind: "block", reason: "rm -rf is not allowed here" });
 * ```
 */
export interface GateCapability {
  /** The dispatch key. */
  readonly kind: "gate";
  /** Unique across the harness. */
  readonly name: string;
  /** Decides for one call. */
  check(input: GateInput): GateOutcome | Promise<GateOutcome>;
}

/** What a run-end guard decides at a text-only natural end. */
export type RunEndDecision =
  | { readonly kind: "complete"; readonly detail?: string }
  | { readonly kind: "steer"; readonly feedback: string; readonly detail?: string };

/** What a run-end guard sees. */
export interface GuardInput {
  /** The 0-based step that ended naturally. */
  readonly step: number;
  /** The transcript so far. */
  readonly transcript: readonly Message[];
  /** The state store as of the last commit. */
  readonly state: ReadonlyMap<string, unknown>;
}

/**
 * A run-end guard capability: consulted only when a step ends with text and no tool call.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { GuardCapability } from "@amber/core";
 * const guard: GuardCapability = {
 *   kind: "guard",
 *   name: "tests_pass",
 *   decide: ({ state }) =>
 *     state.get("tests.green") === true
 *       ? { kind: "complete" }
 *       : { kind: "steer", feedback: "Run the tests before you finish." },
 * };
 * const input = { step: 3, transcript: [], state: new Map([["tests.green", false]]) };
 * assert.equal((await guard.decide(input)).kind, "steer");
 * ```
 */
export interface GuardCapability {
  /** The dispatch key. */
  readonly kind: "guard";
  /** Unique across the harness. */
  readonly name: string;
  /** Decides whether the run may end. */
  decide(input: GuardInput): RunEndDecision | Promise<RunEndDecision>;
}

/**
 * An action kind: deferred work a gate may schedule (`schedule` with this `actionKind`), run by
 * the kernel with the call's correlation id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ActionCapability } from "@amber/core";
 * const action: ActionCapability = {
 *   kind: "action",
 *   name: "deploy",
 *   run: ({ correlationId }) => Promise.resolve({ ok: true, output: `queued ${correlationId}` }),
 * };
 * const call = { id: "c7", name: "deploy", arguments: "{}" };
 * assert.deepEqual(await action.run({ correlationId: "c7", call }), { ok: true, output: "queued c7" });
 * ```
 */
export interface ActionCapability {
  /** The dispatch key. */
  readonly kind: "action";
  /** The action kind; unique across the harness. */
  readonly name: string;
  /**
   * Runs the action. `signal` aborts at the action's deadline (`timeouts.action`) or when the
   * user cancels the run; a result after that is dropped.
   */
  run(
    input: {
      readonly correlationId: string;
      readonly call: ToolCall;
      readonly signal?: AbortSignal;
    },
  ): Promise<ToolResult>;
}

/**
 * A state key a plugin owns in the run's store, with its value before any command.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { StateKeyCapability } from "@amber/core";
 * const key: StateKeyCapability = { kind: "state", name: "todo.count", initial: 0 };
 * assert.equal(key.initial, 0);
 * ```
 */
export interface StateKeyCapability {
  /** The dispatch key. */
  readonly kind: "state";
  /** The key; unique across the harness. */
  readonly name: string;
  /** The value the store starts with. */
  readonly initial: unknown;
}
