/**
 * Phase hooks and the state store they change. A hook never writes the store: what it returns
 * is staged (state commands for declared keys, reminder messages for the step) and applied on
 * the commit path, so every hook of a step sees the state as of the last commit.
 *
 * @module
 */

import { describeError } from "../errors.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { HookInput, PhaseHookPoint, StateCommand } from "../hooks.ts";
import type { Message } from "../message.ts";
import type { PluginRuntime } from "../runtime.ts";

/**
 * Runs the phase hooks of one run at their points.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { HookCapability, Message, StateCommand } from "@amber/core";
 * import { PhaseHooks } from "./_hooks.ts";
 * const reported: string[] = [];
 * const runtime = { report: (d: { message: string }) => reported.push(d.message) };
 * const state = new Map<string, unknown>([["count", 0]]);
 * const hooks = new PhaseHooks(runtime, [], state);
 * const count: HookCapability = {
 *   kind: "hook",
 *   name: "count",
 *   point: "StepEnd",
 *   run: () => ({
 *     state: [{ op: "set", key: "count", value: 1 }, { op: "delete", key: "x" }],
 *     messages: [{ role: "user", content: "reminder" }],
 *   }),
 * };
 * const declared = { kind: "state" as const, name: "count", initial: 0 };
 * const env = {
 *   hooks: {
 *     StepStart: [],
 *     BeforeInference: [],
 *     AfterInference: [],
 *     AfterTool: [],
 *     StepEnd: [{ name: "count", owner: "p", capability: count }],
 *   },
 *   stateKeys: new Map([["count", { name: "count", owner: "p", capability: declared }]]),
 * };
 * const stepMessages: Message[] = [];
 * const staged: StateCommand[] = [];
 * await hooks.run(env, "StepEnd", 0, stepMessages, staged);
 * // Staged, not applied: the store changes on the commit path.
 * assert.deepEqual(staged, [{ op: "set", key: "count", value: 1 }]);
 * assert.equal(state.get("count"), 0);
 * assert.deepEqual(stepMessages, [{ role: "user", content: "reminder" }]);
 * assert.deepEqual(reported, ["state key 'x' is not declared by any plugin; ignored"]);
 * ```
 */
export class PhaseHooks {
  readonly #runtime: Pick<PluginRuntime, "report">;
  readonly #conversation: readonly Message[];
  readonly #state: ReadonlyMap<string, unknown>;

  /**
   * Creates the hooks of a run over its committed conversation and its state store, both of
   * which the run changes in place as it commits; hook faults go to `runtime.report`.
   */
  constructor(
    runtime: Pick<PluginRuntime, "report">,
    conversation: readonly Message[],
    state: ReadonlyMap<string, unknown>,
  ) {
    this.#runtime = runtime;
    this.#conversation = conversation;
    this.#state = state;
  }

  /**
   * Runs the hooks at `point` of step `step` in dependency order, each seeing the committed
   * conversation and the step's messages so far. Their reminder messages go to the end of
   * `stepMessages`; their commands for declared keys to `staged`. A hook that throws, or a
   * command for an undeclared key, is reported and skipped.
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
    const input: HookInput = {
      point,
      step,
      transcript: [...this.#conversation, ...stepMessages],
      state: this.#state,
      ...(tool === undefined ? {} : { tool }),
    };
    for (const entry of hooks) {
      try {
        const reaction = await entry.capability.run(input);
        if (reaction?.state) {
          for (const command of reaction.state) {
            if (env.stateKeys.has(command.key)) staged.push(command);
            else {
              this.#runtime.report({
                pluginId: entry.owner,
                where: `hook '${entry.name}'`,
                message: `state key '${command.key}' is not declared by any plugin; ignored`,
              });
            }
          }
        }
        if (reaction?.messages) {
          for (const message of reaction.messages) stepMessages.push(message);
        }
      } catch (error) {
        this.#runtime.report({
          pluginId: entry.owner,
          where: `hook '${entry.name}' at ${point}`,
          message: describeError(error),
          error,
        });
      }
    }
  }
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
  for (const [key, entry] of env.stateKeys) state.set(key, entry.capability.initial);
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
  if (command.op === "set") state.set(command.key, command.value);
  else state.delete(command.key);
}
