/**
 * A turn a command started (a markdown command's prompt), run with what the command asks for, for
 * that turn only: its `model` in place of the session's, and its `allowed-tools` as a host gate
 * that refuses every other tool. The session's own model and tools are untouched, so the next
 * turn runs as before. The tool entries match as a skill's `allowed-tools` do
 * (`cli/files/tool_patterns.ts`); the gate only narrows, as every gate can only refuse.
 *
 * @module
 */

import type { CommandTurn, GateInput, GateOutcome } from "@amber/core";
import type { RunResult } from "@amber/core/kernel";
import { toolsMatcher } from "../files/tool_patterns.ts";
import { agentModel } from "./agent_runs.ts";

/** What a command's turn adds to the session's run: its model name and its tool gate. */
export interface CommandRunExtras {
  /** The model that answers, when the command names one of its own. */
  readonly modelName?: string;
  /** Refuses the tools outside the command's `allowed-tools`, when it has them. */
  readonly hostGate?: (input: GateInput) => GateOutcome;
}

/**
 * The gate of the `allowed-tools` of the command `from`: a tool none of the entries stands for
 * is refused, with a result naming the command.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandGate } from "./command_turns.ts";
 * const gate = commandGate("/look (look.md)", ["Read", "Grep"]);
 * const input = (name: string) => ({ call: { id: "1", name, arguments: "{}" }, args: {}, state: new Map() });
 * assert.equal(gate(input("read")).kind, "allow");
 * assert.equal(gate(input("search")).kind, "allow");
 * const outcome = gate(input("bash"));
 * assert.equal(
 *   outcome.kind === "block" && outcome.reason,
 *   "the allowed-tools of /look (look.md) refused bash: this turn may call only Read, Grep",
 * );
 * ```
 */
export function commandGate(
  from: string,
  allowedTools: readonly string[],
): (input: GateInput) => GateOutcome {
  const allows = toolsMatcher(allowedTools);
  const only = allowedTools.length === 0 ? "no tool" : `only ${allowedTools.join(", ")}`;
  return ({ call }) =>
    allows(call.name) ? { kind: "allow" } : {
      kind: "block",
      reason: `the allowed-tools of ${from} refused ${call.name}: this turn may call ${only}`,
    };
}

/**
 * What a run on `sessionModel` takes for `turn`: nothing without one. `model: inherit` and
 * Claude Code's aliases (`sonnet`, `opus`, `haiku`) keep the session's model, as for an agent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandRunExtras } from "./command_turns.ts";
 * assert.deepEqual(commandRunExtras(undefined, "big"), {});
 * assert.equal(commandRunExtras({ from: "/x", model: "small" }, "big").modelName, "small");
 * assert.equal(commandRunExtras({ from: "/x", model: "sonnet" }, "big").modelName, undefined);
 * assert.equal(typeof commandRunExtras({ from: "/x", allowedTools: ["Read"] }, "big").hostGate, "function");
 * ```
 */
export function commandRunExtras(
  turn: CommandTurn | undefined,
  sessionModel: string,
): CommandRunExtras {
  if (turn === undefined) return {};
  const model = agentModel(turn, sessionModel);
  return {
    ...(model === sessionModel ? {} : { modelName: model }),
    ...(turn.allowedTools === undefined
      ? {}
      : { hostGate: commandGate(turn.from, turn.allowedTools) }),
  };
}

/**
 * `result` of a command's turn, with a provider's refusal naming the command's model and file:
 * a model the provider does not know fails the turn with an error that says where it was named.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandTurnResult } from "./command_turns.ts";
 * const failed = {
 *   cause: {
 *     kind: "error" as const,
 *     failure: { kind: "provider" as const, message: "model not found", status: 404, retryable: false },
 *   },
 *   steps: 0,
 *   messages: [],
 *   usage: { promptTokens: 0, completionTokens: 0 },
 *   compactions: 0,
 *   state: new Map(),
 * };
 * const turn = { from: "/review (.amber/commands/review.md)", model: "nope" };
 * const result = commandTurnResult(failed, turn, "big");
 * assert.equal(
 *   result.cause.kind === "error" && result.cause.failure.kind === "provider" &&
 *     result.cause.failure.message,
 *   "model not found (the model 'nope' named by /review (.amber/commands/review.md))",
 * );
 * assert.equal(commandTurnResult(failed, { from: "/x" }, "big"), failed);
 * ```
 */
export function commandTurnResult(
  result: RunResult,
  turn: CommandTurn | undefined,
  sessionModel: string,
): RunResult {
  const modelName = commandRunExtras(turn, sessionModel).modelName;
  const { cause } = result;
  if (modelName === undefined || cause.kind !== "error" || cause.failure.kind !== "provider") {
    return result;
  }
  const message = `${cause.failure.message} (the model '${modelName}' named by ${turn!.from})`;
  return { ...result, cause: { ...cause, failure: { ...cause.failure, message } } };
}
