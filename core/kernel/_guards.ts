/**
 * The run-end guards: consulted when a step ends with text and no tool call, they decide
 * whether the run may end there or must go on with feedback for the model.
 *
 * @module
 */

import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { GuardInput } from "../hooks.ts";
import { timeoutFor, withDeadline } from "../limits.ts";
import type { Message } from "../message.ts";
import type { PluginRuntime } from "../runtime.ts";
import { faultText } from "./_fault_text.ts";
import { transcriptSnapshot } from "./_snapshot.ts";
import type { RunEvent } from "./run_types.ts";

/**
 * Asks every guard of `env` in dependency order whether the run may end after step `step`, and
 * gives the feedback to steer with, or undefined when the run may end. Any steer wins over a
 * completion, and a later guard's steer over an earlier one's; each steer is emitted as it comes.
 * Each runs under its deadline (`timeouts.guard`) and sees a frozen transcript and state. A
 * guard that throws, overruns or decides something malformed is reported and passed over.
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
 *   { config: () => ({ plugins: {} }), report: () => {} },
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
  runtime: Pick<PluginRuntime, "config" | "report">,
  env: Pick<ResolvedExecutionEnv, "guards">,
  step: number,
  transcript: readonly Message[],
  state: ReadonlyMap<string, unknown>,
  onEvent: ((event: RunEvent) => void) | undefined,
): Promise<string | undefined> {
  if (env.guards.length === 0) return undefined;
  const input: GuardInput = Object.freeze({
    step,
    transcript: transcriptSnapshot(transcript, []),
    state,
  });
  let steer: string | undefined;
  for (const entry of env.guards) {
    const what = `run-end guard '${entry.name}' of plugin '${entry.owner}'`;
    let decision: unknown;
    try {
      const ms = timeoutFor(runtime.config(), "guard", entry.owner);
      decision = await withDeadline(() => entry.capability.decide(input), ms, what);
    } catch (error) {
      runtime.report({ pluginId: entry.owner, where: what, message: faultText(error), error });
      continue;
    }
    const kind = (decision as { kind?: unknown } | null)?.kind;
    const feedback = (decision as { feedback?: unknown } | null)?.feedback;
    if (kind === "steer" && typeof feedback === "string" && feedback !== "") {
      // A later guard's steer overrides an earlier guard's completion (and an earlier steer).
      steer = feedback;
      onEvent?.({ type: "steer", guard: entry.name, feedback });
    } else if (kind !== "complete") {
      runtime.report({
        pluginId: entry.owner,
        where: what,
        message: "decided neither 'complete' nor 'steer' with feedback; passed over",
      });
    }
  }
  return steer;
}
