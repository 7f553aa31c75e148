/**
 * The way of one tool call from the model's request to its result: the arguments parsed, the
 * ToolRequested event, the permission rules (`_permission_check.ts`), the gate chain
 * (`_gates.ts`), the approval policy (and the user's "always" answers, remembered for the run),
 * then the tool under its deadline (`_tool_deadline.ts`) or a gate's scheduled action under its
 * own. Every call ends in exactly one `toolEnd` event and one
 * ToolCompleted event, whatever stopped it, with its output and error passed through the run's
 * `redact` first.
 *
 * @module
 */

import { describeError } from "../errors.ts";
import { OutputBudget } from "../_output_budget.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { GateInput, GateOutcome } from "../hooks.ts";
import { timeoutFor, withDeadline } from "../limits.ts";
import type { ToolCall } from "../message.ts";
import { deepFreeze } from "../read_only.ts";
import type { PermissionVerdict } from "../permissions.ts";
import type { FileChange, ToolResult } from "../tool.ts";
import { faultText } from "./_fault_text.ts";
import { decideGates } from "./_gates.ts";
import { checkPermissions } from "./_permission_check.ts";
import { isToolResult } from "../tool.ts";
import { runTool } from "./_tool_deadline.ts";
import { previewChange, redactChange } from "./_tool_preview.ts";
import type { RunEvent, RunOptions } from "./run_types.ts";

/** What of the run's options the tool calls use. */
export type ToolCallOptions = Pick<
  RunOptions,
  "runtime" | "approval" | "ask" | "hostGate" | "onEvent" | "redact" | "permissions"
>;

/** A tool the kernel stopped waiting for: it ignored its cancel past the grace. */
export interface AbandonedTool {
  /** The tool's name. */
  readonly tool: string;
  /** The plugin that contributed it. */
  readonly pluginId: string;
  /** The call. */
  readonly callId: string;
  /** What its result says. */
  readonly message: string;
  /** What stopped it: its deadline, or the user's cancel. */
  readonly after: "deadline" | "cancel";
}

/** How one call ended: its result, and the tool when it had to be abandoned. */
export interface CallOutcome {
  /** The result, as it enters the conversation (redacted). */
  readonly result: ToolResult;
  /** Set when the tool did not stop within the grace after its cancel. */
  readonly abandoned?: AbandonedTool;
}

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
 *   () => new Map(),
 *   new AbortController().signal,
 * );
 * const { result } = await calls.call(runtime.environment(), { id: "1", name: "x", arguments: "{" });
 * assert.equal(result.ok, false);
 * assert.match(result.error ?? "", /not valid JSON/);
 * assert.deepEqual(ended, ["toolEnd"]);
 * ```
 */
export class ToolCalls {
  readonly #o: ToolCallOptions;
  readonly #state: () => ReadonlyMap<string, unknown>;
  readonly #signal: AbortSignal;
  readonly #alwaysAllowed = new Set<string>();

  /**
   * Creates the pipeline of a run; `state` gives the frozen snapshot of the run's state store as
   * of the last commit, which gates read.
   */
  constructor(
    options: ToolCallOptions,
    state: () => ReadonlyMap<string, unknown>,
    signal: AbortSignal,
  ) {
    this.#o = options;
    this.#state = state;
    this.#signal = signal;
  }

  /**
   * Runs one call of step `step` through the whole way over the environment the step resolved
   * at its start; never throws for a failing tool, gate or action.
   */
  async call(env: ResolvedExecutionEnv, call: ToolCall, step = 0): Promise<CallOutcome> {
    const { runtime } = this.#o;
    const events = runtime.events;
    let args: unknown;
    try {
      args = parseArguments(call.arguments);
    } catch (error) {
      return this.#report(call, step, {
        ok: false,
        output: "",
        error: `the arguments are not valid JSON: ${describeError(error)}`,
      }, 0);
    }
    if (
      events.has("toolRequested") &&
      !events.publish("toolRequested", { callId: call.id, name: call.name, args })
    ) {
      return this.#report(call, step, {
        ok: false,
        output: "",
        error: "the call was cancelled by a plugin before it ran",
      }, 0);
    }
    const entry = env.tools.get(call.name);
    if (entry === undefined) {
      return this.#report(call, step, {
        ok: false,
        output: "",
        error: `there is no tool '${call.name}'; tools: ${[...env.tools.keys()].join(", ")}`,
      }, 0);
    }
    const tool = entry.tool;
    let summary = call.name;
    try {
      summary = tool.summarize?.(args) ?? call.name;
    } catch {
      // A summary is cosmetic; a broken one does not stop the call.
    }
    const verdict = checkPermissions(this.#o.permissions, call, args, summary);
    if (typeof verdict === "string") {
      return this.#report(call, step, { ok: false, output: "", error: verdict }, 0);
    }
    const gate = await this.#gates(env, call);
    if (gate.kind === "block") {
      return this.#report(call, step, { ok: false, output: "", error: gate.reason }, 0);
    }
    if (gate.kind === "setResult") return this.#report(call, step, gate.result, 0);
    if (gate.kind === "schedule") {
      return this.#schedule(env, call, step, gate.correlationId, gate.actionKind);
    }
    // An allow rule answers the tool's own question, so the tool is not asked it.
    let needsApproval = gate.kind === "requireConfirmation" || verdict?.effect === "ask";
    if (!needsApproval && verdict?.effect !== "allow") {
      try {
        const asked = tool.requiresApproval?.(args) ?? false;
        // Only an answer that is not there yet (a sandboxed plugin's) costs an await.
        needsApproval = asked instanceof Promise ? await asked : asked;
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
        { call, args, summary },
        gate.kind === "requireConfirmation" ? gate : undefined,
        () =>
          previewChange(
            { runtime, redact: this.#o.redact, signal: this.#signal },
            entry.owner,
            tool,
            args,
          ),
        verdict,
      );
      if (denied !== undefined) {
        return this.#report(call, step, { ok: false, output: "", error: denied }, 0);
      }
    }
    this.#emit({ type: "toolStart", step, call, verb: tool.verb ?? "running", summary });
    const started = performance.now();
    const config = runtime.config();
    const what = `tool '${call.name}' of plugin '${entry.owner}'`;
    // Progress and output after the call ended (an abandoned tool still running) would belong
    // to nothing on screen.
    let running = true;
    const progress = (message: string): void => {
      if (running) this.#emit({ type: "toolProgress", step, call, message: String(message) });
    };
    const budget = new OutputBudget(
      (chunk) => this.#emit({ type: "toolOutput", step, call, chunk }),
      what,
    );
    const output = (chunk: string): void => {
      if (running) budget.take(this.#redactedText(String(chunk)));
    };
    const run = await runTool(
      (signal) => env.executeTool(call.name, args, { signal, callId: call.id, progress, output }),
      {
        deadlineMs: timeoutFor(config, "tool", entry.owner),
        graceMs: timeoutFor(config, "toolGrace", entry.owner),
        what,
      },
      this.#signal,
    );
    running = false;
    if (run.kind !== "settled") {
      runtime.report({ pluginId: entry.owner, where: what, message: run.result.error ?? "" });
    }
    const outcome = this.#report(call, step, run.result, performance.now() - started);
    if (run.kind !== "abandoned") return outcome;
    return {
      ...outcome,
      abandoned: {
        tool: call.name,
        pluginId: entry.owner,
        callId: call.id,
        message: outcome.result.error ?? "",
        after: run.after,
      },
    };
  }

  // The gates see the call's arguments parsed afresh and frozen: what one gate does to them can
  // reach neither a later gate nor the tool.
  #gates(env: ResolvedExecutionEnv, call: ToolCall): Promise<GateOutcome> {
    const hostGate = this.#o.hostGate;
    if (hostGate === undefined && env.gates.length === 0) return Promise.resolve({ kind: "allow" });
    const input: GateInput = Object.freeze({
      call,
      args: deepFreeze(parseArguments(call.arguments)),
      state: this.#state(),
    });
    return decideGates(this.#o.runtime, hostGate, env.gates, input);
  }

  // Undefined when the call may run, else why not. A confirmation a gate asked for (it carries a
  // correlation id), or an ask rule's question, is put to the user whatever the policy: `auto`
  // does not answer it, nor does an earlier "always"; with no one to ask, or under `deny`, the
  // answer is no. An allow rule answers every other question, under every policy: the user gave
  // that answer ahead of time.
  async #approve(
    asked: { readonly call: ToolCall; readonly args: unknown; readonly summary: string },
    confirmation: { readonly correlationId: string; readonly reason?: string } | undefined,
    preview: () => Promise<FileChange | undefined>,
    verdict: PermissionVerdict | undefined,
  ): Promise<string | undefined> {
    const { call, args, summary } = asked;
    const policy = this.#o.approval;
    const gateAsked = confirmation !== undefined;
    const rule = !gateAsked && verdict?.effect === "ask" ? verdict : undefined;
    const forced = gateAsked || rule !== undefined;
    if (!forced && verdict?.effect === "allow") return undefined;
    const who = gateAsked
      ? `a tool gate asked to confirm '${call.name}'`
      : rule !== undefined
      ? `the permission rule '${rule.rule}' (${rule.source}) asks to confirm '${call.name}'`
      : `'${call.name}' needs approval`;
    if (policy === "auto" && !forced) return undefined;
    if (policy === "deny") return `${who} and the approval policy is deny`;
    if (!forced && this.#alwaysAllowed.has(call.name)) return undefined;
    if (this.#o.ask === undefined) {
      return forced
        ? `${who} and there is no one to ask; run in a terminal to answer it`
        : `${who} and there is no one to ask; run in a terminal, or with --approve auto`;
    }
    const change = await preview();
    let answer;
    try {
      answer = await this.#o.ask({
        call,
        args,
        summary,
        ...(confirmation === undefined ? {} : { correlationId: confirmation.correlationId }),
        ...(confirmation?.reason === undefined ? {} : { reason: confirmation.reason }),
        ...(rule === undefined ? {} : { rule: rule.rule, reason: `the rule is in ${rule.source}` }),
        ...(change === undefined ? {} : { change }),
      });
    } catch (error) {
      return `the approval prompt for '${call.name}' failed: ${describeError(error)}`;
    }
    if (answer === "always" && !forced) this.#alwaysAllowed.add(call.name);
    return answer === "once" || answer === "always" ? undefined : `the user denied '${call.name}'`;
  }

  async #schedule(
    env: ResolvedExecutionEnv,
    call: ToolCall,
    step: number,
    correlationId: string,
    actionKind: string | undefined,
  ): Promise<CallOutcome> {
    if (actionKind === undefined) {
      return this.#report(call, step, { ok: true, output: `scheduled as ${correlationId}` }, 0);
    }
    const action = env.actions.get(actionKind);
    if (action === undefined) {
      return this.#report(call, step, {
        ok: false,
        output: "",
        error: `a gate scheduled action kind '${actionKind}', which no plugin provides`,
      }, 0);
    }
    const started = performance.now();
    const what = `action '${actionKind}' of plugin '${action.owner}'`;
    const controller = new AbortController();
    const onCancel = (): void => controller.abort(this.#signal.reason);
    this.#signal.addEventListener("abort", onCancel, { once: true });
    let result: ToolResult;
    try {
      const ms = timeoutFor(this.#o.runtime.config(), "action", action.owner);
      const value: unknown = await withDeadline(
        () => action.capability.run({ correlationId, call, signal: controller.signal }),
        ms,
        what,
      );
      result = isToolResult(value) ? value : {
        ok: false,
        output: "",
        error: `${what} returned something other than a tool result`,
      };
    } catch (error) {
      controller.abort(error);
      const message = faultText(error);
      this.#o.runtime.report({ pluginId: action.owner, where: what, message, error });
      result = { ok: false, output: "", error: `${what} ${message}` };
    } finally {
      this.#signal.removeEventListener("abort", onCancel);
    }
    return this.#report(call, step, result, performance.now() - started);
  }

  #report(call: ToolCall, step: number, raw: ToolResult, durationMs: number): CallOutcome {
    const result = this.#redacted(raw);
    const events = this.#o.runtime.events;
    this.#emit({ type: "toolEnd", step, call, result, durationMs });
    if (events.has("toolCompleted")) {
      events.publish("toolCompleted", { callId: call.id, name: call.name, result, durationMs });
    }
    return { result };
  }

  // The run's redaction over what the model, the host and the transcript will see. A redaction
  // that throws must not let the text through unredacted.
  #redacted(result: ToolResult): ToolResult {
    const redact = this.#o.redact;
    if (redact === undefined) return result;
    try {
      const output = redact(result.output);
      const error = result.error === undefined ? undefined : redact(result.error);
      const change = result.change === undefined ? undefined : redactChange(result.change, redact);
      if (output === result.output && error === result.error && change === result.change) {
        return result;
      }
      return {
        ...result,
        output,
        ...(error === undefined ? {} : { error }),
        ...(change === undefined ? {} : { change }),
      };
    } catch (error) {
      return {
        ok: false,
        output: "",
        error: `the tool's result was withheld: redacting it failed: ${describeError(error)}`,
      };
    }
  }

  // A chunk of streaming output, redacted; nothing when the redaction fails.
  #redactedText(text: string): string {
    const redact = this.#o.redact;
    if (redact === undefined) return text;
    try {
      return redact(text);
    } catch {
      return "";
    }
  }

  #emit(event: RunEvent): void {
    this.#o.onEvent?.(event);
  }
}

function parseArguments(text: string): unknown {
  return text.trim() === "" ? {} : JSON.parse(text);
}
