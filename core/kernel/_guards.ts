/**
 * The run-end guards: consulted when a step ends with text and no tool call, they decide
 * whether the run may end there or must go on with feedback for the model.
 *
 * @module
 */

import { describeError } from "../errors.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { RunEndDecision } from "../hooks.ts";
import type { Message } from "../message.ts";
import type { PluginRuntime } from "../runtime.ts";
import type { RunEvent } from "./run_types.ts";

/**
 * Asks every guard of `env` in dependency order whether the run may end after step `step`, and
 * gives the feedback to steer with, or undefined when the run may end. Any steer wins over a
 * completion, and a later guard's steer over an earlier one's; each steer is emitted as it comes.
 * A guard that throws is reported and passed over.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { consultGuards } from "./_guards.ts";
 * const guard = (name: string, feedback?: string) => ({
 *   name,
 *   owner: "p",
 *   capability: {
 *     kind: "guard" as const,
 *     name,
 *     decide: () =>
 *       feedback === undefined
 *         ? { kind: "complete" as const }
 *         : { kind: "steer" as const, feedback },
 *   },
 * });
 * const steers: string[] = [];
 * const steer = await consultGuards(
 *   { report: () => {} },
 *   { guards: [guard("a", "run the tests"), guard("b"), guard("c", "fix the lint")] },
 *   0,
 *   [],
 *   new Map(),
 *   (event) => event.type === "steer" && steers.push(event.guard),
 * );
 * assert.equal(steer, "fix the lint");
 * assert.deepEqual(steers, ["a", "c"]);
 * ```
 */
export async function consultGuards(
  runtime: Pick<PluginRuntime, "report">,
  env: Pick<ResolvedExecutionEnv, "guards">,
  step: number,
  transcript: readonly Message[],
  state: ReadonlyMap<string, unknown>,
  onEvent: ((event: RunEvent) => void) | undefined,
): Promise<string | undefined> {
  let steer: string | undefined;
  for (const entry of env.guards) {
    let decision: RunEndDecision;
    try {
      decision = await entry.capability.decide({ step, transcript, state });
    } catch (error) {
      runtime.report({
        pluginId: entry.owner,
        where: `run-end guard '${entry.name}'`,
        message: describeError(error),
        error,
      });
      continue;
    }
    if (decision?.kind === "steer") {
      // A later guard's steer overrides an earlier guard's completion (and an earlier steer).
      steer = decision.feedback;
      onEvent?.({ type: "steer", guard: entry.name, feedback: decision.feedback });
    }
  }
  return steer;
}
