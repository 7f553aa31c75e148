/**
 * The run kernel's entry points: a model in a loop with tools, over the resolved execution
 * environment ({@linkcode runAgent}), or over an exact plugin selection resolved first
 * ({@linkcode runSelection}). Each step runs the phase hooks at their points, builds the prompt
 * copy, streams the model through the dialect, passes every tool call through the ToolRequested
 * event, the host gate, the plugin gates and the approval policy, executes it, and commits the
 * step to the transcript before the next one starts. A text-only natural end consults the
 * run-end guards; max steps is the backstop. Nothing is done per token but forwarding the delta.
 *
 * The step loop is in `_run_loop.ts`, the tool-call pipeline in `_tool_call.ts` (its gate chain
 * in `_gates.ts`, a tool's deadline and grace in `_tool_deadline.ts`), phase hooks and state
 * commands in `_hooks.ts`, run-end guards in `_guards.ts`, the frozen views plugin code gets in
 * `_snapshot.ts`, the request and the reply of a model call in `_inference.ts`, the context
 * window (the request's estimate in `_estimate.ts`, compaction before a request that would not
 * fit and after a provider's overflow) in `_context.ts`, one compaction's pipeline in
 * `_compaction.ts` over the default strategy of `_compaction_default.ts`, and the types of a
 * run in `run_types.ts`. Plugin code runs under the deadlines of `timeouts` in the runtime's
 * config, and whatever it does wrong is reported as a diagnostic of its plugin.
 *
 * @module
 */

import type { Message } from "../message.ts";
import { CapabilityBoundError } from "../resolution_error.ts";
import { Run } from "./_run_loop.ts";
import type { EndCause, RunOptions, RunResult } from "./run_types.ts";
import { resolveSelection, type SelectionRequest } from "./selection.ts";

export type {
  ApprovalAnswer,
  ApprovalRequest,
  EndCause,
  ModelPort,
  RunEvent,
  RunFailure,
  RunOptions,
  RunResult,
} from "./run_types.ts";

/**
 * Runs one turn of an agent: from the user's prompt to a natural end (or a guard's completion),
 * a cancellation, max steps or an error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { type ModelPort, runAgent } from "@amber/core/kernel";
 * import { createRegistries } from "@amber/registries";
 * // A model that answers every request with one text delta.
 * const model: ModelPort = {
 *   stream(_request, sink) {
 *     sink({ type: "text", delta: "Hello!" });
 *     sink({ type: "finish", reason: "stop" });
 *     return Promise.resolve({ status: 200, headers: new Headers(), cancelled: false });
 *   },
 * };
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * await runtime.start();
 * const result = await runAgent({ runtime, model, modelName: "m", prompt: "Hi", approval: "auto" });
 * assert.equal(result.cause.kind, "completed");
 * assert.equal(result.messages.at(-1)?.content, "Hello!");
 * ```
 */
export async function runAgent(options: RunOptions): Promise<RunResult> {
  const run = new Run(options);
  return await run.execute();
}

/**
 * A programmatic run over an exact plugin selection: it resolves `pluginIds` with
 * `pluginConfig` first and, when that fails, ends with a `capabilityBound` error before the
 * first model call, committing the prompt and the end to the session; it never runs with a
 * partial environment. The runtime is stopped when the run ends.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ModelPort, runSelection } from "@amber/core/kernel";
 * import { createRegistries } from "@amber/registries";
 * const model: ModelPort = {
 *   stream: () => Promise.reject(new Error("never called")),
 * };
 * const result = await runSelection({
 *   available: [],
 *   pluginIds: ["missing"],
 *   registries: createRegistries(),
 *   model,
 *   modelName: "m",
 *   prompt: "Hi",
 *   approval: "auto",
 * });
 * assert.equal(result.cause.kind === "error" && result.cause.failure.kind, "capabilityBound");
 * ```
 */
export async function runSelection(
  options: SelectionRequest & Omit<RunOptions, "runtime">,
): Promise<RunResult> {
  let resolved;
  try {
    resolved = await resolveSelection(options);
  } catch (error) {
    if (!(error instanceof CapabilityBoundError)) throw error;
    const cause: EndCause = { kind: "error", failure: { kind: "capabilityBound", error } };
    const messages: Message[] = [{ role: "user", content: options.prompt }];
    await options.session?.append({ step: options.firstStep ?? 0, messages, end: cause.kind });
    options.onEvent?.({ type: "end", cause });
    return {
      cause,
      steps: 0,
      messages: [...(options.history ?? []), ...messages],
      usage: { promptTokens: 0, completionTokens: 0 },
      state: new Map(),
      compactions: 0,
    };
  }
  try {
    return await runAgent({ ...options, runtime: resolved.runtime });
  } finally {
    await resolved.runtime.stop();
  }
}
