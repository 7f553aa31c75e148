/**
 * The way of one tool call from the model's request to its result: the arguments parsed, the
 * ToolRequested event, the host gate, the plugin gates, the approval policy (and the user's
 * "always" answers, remembered for the run), then the tool or a gate's scheduled action. Every
 * call ends in exactly one `toolEnd` event and one ToolCompleted event, whatever stopped it.
 *
 * @module
 */

import { describeError } from "../errors.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { GateInput, GateOutcome } from "../hooks.ts";
import type { ToolCall } from "../message.ts";
import type { ToolResult } from "../tool.ts";
import type { RunEvent, RunOptions } from "./run_types.ts";

/** What of the run's options the tool calls use. */
export type ToolCallOptions = Pick<
  RunOptions,
  "runtime" | "approval" | "ask" | "hostGate" | "onEvent"
>;

/**
 * Runs the tool calls of one run, one at a time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { ToolCalls } from "./_tool_call.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * await runtime.start();
 * const ended: string[] = [];
 * const calls = new ToolCalls(
 *   { runtime, approval: "auto", onEvent: (event) => ended.push(event.type) },
 *   new Map(),
 *   new AbortController().signal,
 * );
 * const result = await calls.call(runtime.environment(), { id: "1", name: "x", arguments: "{" });
 * assert.equal(result.ok, false);
 * assert.match(result.error ?? "", /not valid JSON/);
 * assert.deepEqual(ended, ["toolEnd"]);
 * ```
 */
export class ToolCalls {
  readonly #o: ToolCallOptions;
  readonly #state: ReadonlyMap<string, unknown>;
  readonly #signal: AbortSignal;
  readonly #alwaysAllowed = new Set<string>();

  /**
   * Creates the pipeline of a run; `state` is the run's state store, which gates read as it is
   * at the call.
   */
  constructor(options: ToolCallOptions, state: ReadonlyMap<string, unknown>, signal: AbortSignal) {
    this.#o = options;
    this.#state = state;
    this.#signal = signal;
  }

  /** Runs one call through the whole way; never throws for a failing tool, gate or action. */
  async call(env: ResolvedExecutionEnv, call: ToolCall): Promise<ToolResult> {
    const { runtime } = this.#o;
    const events = runtime.events;
    let args: unknown;
    try {
      args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
    } catch (error) {
      return this.#report(call, {
        ok: false,
        output: "",
        error: `the arguments are not valid JSON: ${describeError(error)}`,
      }, 0);
    }
    if (
      events.has("toolRequested") &&
      !events.publish("toolRequested", { callId: call.id, name: call.name, args })
    ) {
      return this.#report(call, {
        ok: false,
        output: "",
        error: "the call was cancelled by a plugin before it ran",
      }, 0);
    }
    const entry = env.tools.get(call.name);
    if (entry === undefined) {
      return this.#report(call, {
        ok: false,
        output: "",
        error: `there is no tool '${call.name}'; tools: ${[...env.tools.keys()].join(", ")}`,
      }, 0);
    }
    const gate = await this.#gates(env, call, args);
    if (gate.kind === "block") {
      return this.#report(call, { ok: false, output: "", error: gate.reason }, 0);
    }
    if (gate.kind === "setResult") return this.#report(call, gate.result, 0);
    if (gate.kind === "schedule") {
      return this.#schedule(env, call, gate.correlationId, gate.actionKind);
    }
    const tool = entry.tool;
    let summary = call.name;
    try {
      summary = tool.summarize?.(args) ?? call.name;
    } catch {
      // A summary is cosmetic; a broken one does not stop the call.
    }
    let needsApproval = gate.kind === "requireConfirmation";
    if (!needsApproval) {
      try {
        needsApproval = tool.requiresApproval?.(args) ?? false;
      } catch (error) {
        // Fail closed: a tool that cannot say whether it needs approval needs it.
        needsApproval = true;
        runtime.report({
          pluginId: entry.owner,
          where: `requiresApproval of '${call.name}'`,
          message: describeError(error),
          error,
        });
      }
    }
    if (needsApproval) {
      const denied = await this.#approve(
        call,
        args,
        summary,
        gate.kind === "requireConfirmation" ? gate.correlationId : undefined,
      );
      if (denied !== undefined) {
        return this.#report(call, { ok: false, output: "", error: denied }, 0);
      }
    }
    this.#emit({ type: "toolStart", call, verb: tool.verb ?? "running", summary });
    const started = performance.now();
    const result = await env.executeTool(call.name, args, { signal: this.#signal });
    return this.#report(call, result, performance.now() - started);
  }

  // The host gate first; a host block short-circuits. Then the plugin gates in dependency order:
  // the first that is not `allow` wins. A gate that throws blocks (fail closed) and is reported.
  async #gates(env: ResolvedExecutionEnv, call: ToolCall, args: unknown): Promise<GateOutcome> {
    const input: GateInput = { call, args, state: this.#state };
    if (this.#o.hostGate !== undefined) {
      const outcome = await this.#o.hostGate(input);
      if (outcome.kind !== "allow") return outcome;
    }
    for (const entry of env.gates) {
      let outcome: GateOutcome;
      try {
        outcome = await entry.capability.check(input);
      } catch (error) {
        this.#o.runtime.report({
          pluginId: entry.owner,
          where: `tool gate '${entry.name}'`,
          message: describeError(error),
          error,
        });
        return { kind: "block", reason: `tool gate '${entry.name}' of '${entry.owner}' failed` };
      }
      if (outcome?.kind === "block") {
        return {
          kind: "block",
          reason:
            `blocked by tool gate '${entry.name}' of plugin '${entry.owner}': ${outcome.reason}`,
        };
      }
      if (outcome?.kind !== "allow") return outcome;
    }
    return { kind: "allow" };
  }

  // Undefined when the call may run, else why not.
  async #approve(
    call: ToolCall,
    args: unknown,
    summary: string,
    correlationId: string | undefined,
  ): Promise<string | undefined> {
    const policy = this.#o.approval;
    if (policy === "auto" && correlationId === undefined) return undefined;
    if (policy === "deny") {
      return `'${call.name}' needs approval and the approval policy is deny`;
    }
    if (this.#alwaysAllowed.has(call.name) && correlationId === undefined) return undefined;
    if (this.#o.ask === undefined) {
      return `'${call.name}' needs approval and there is no one to ask; ` +
        "run in a terminal, or with --approve auto";
    }
    const answer = await this.#o.ask({ call, args, summary, correlationId });
    if (answer === "always") this.#alwaysAllowed.add(call.name);
    return answer === "deny" ? `the user denied '${call.name}'` : undefined;
  }

  async #schedule(
    env: ResolvedExecutionEnv,
    call: ToolCall,
    correlationId: string,
    actionKind: string | undefined,
  ): Promise<ToolResult> {
    if (actionKind === undefined) {
      return this.#report(call, { ok: true, output: `scheduled as ${correlationId}` }, 0);
    }
    const action = env.actions.get(actionKind);
    if (action === undefined) {
      return this.#report(call, {
        ok: false,
        output: "",
        error: `a gate scheduled action kind '${actionKind}', which no plugin provides`,
      }, 0);
    }
    const started = performance.now();
    try {
      const result = await action.capability.run({ correlationId, call });
      return this.#report(call, result, performance.now() - started);
    } catch (error) {
      return this.#report(call, {
        ok: false,
        output: "",
        error: `action '${actionKind}' failed: ${describeError(error)}`,
      }, performance.now() - started);
    }
  }

  #report(call: ToolCall, result: ToolResult, durationMs: number): ToolResult {
    const events = this.#o.runtime.events;
    this.#emit({ type: "toolEnd", call, result, durationMs });
    if (events.has("toolCompleted")) {
      events.publish("toolCompleted", { callId: call.id, name: call.name, result, durationMs });
    }
    return result;
  }

  #emit(event: RunEvent): void {
    this.#o.onEvent?.(event);
  }
}
