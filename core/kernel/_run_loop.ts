/**
 * The step loop of one run. Each step re-resolves the environment (live refresh) and uses that
 * one environment throughout: its hooks, its model request, its tools, its guards. It runs the
 * phase hooks at their points, calls the model, passes every tool call it asks for through the
 * tool-call pipeline, and commits the step (messages, staged state, usage) before the next one
 * starts. A text-only natural end consults the run-end guards; max steps is the backstop. The
 * user's prompt is written to the session before the first model call, so no failure loses it.
 *
 * @module
 */

import { describeError } from "../errors.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { StateCommand } from "../hooks.ts";
import type { Message, ToolCall } from "../message.ts";
import type { ToolImage } from "../tool.ts";
import { addUsage, type TokenUsage } from "../usage.ts";
import { ContextWindow } from "./_context.ts";
import { consultGuards } from "./_guards.ts";
import { applyCommand, PhaseHooks, seedState } from "./_hooks.ts";
import { freezeMessage, StateSnapshot } from "./_snapshot.ts";
import { type AbandonedTool, ToolCalls } from "./_tool_call.ts";
import type { EndCause, RunEvent, RunOptions, RunResult } from "./run_types.ts";

const DEFAULT_MAX_STEPS = 50;
const NEVER = new AbortController().signal;

type StepOutcome =
  | { kind: "continue" }
  | { kind: "natural"; detail?: string; env: ResolvedExecutionEnv }
  | { kind: "ended"; cause: EndCause };

/**
 * One run from its prompt to its end; {@linkcode Run.execute} once per instance.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { Run } from "./_run_loop.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * await runtime.start();
 * const run = new Run({
 *   runtime,
 *   model: { stream: () => Promise.reject(new Error("never called")) },
 *   modelName: "m",
 *   prompt: "Hi",
 *   approval: "auto",
 *   maxSteps: 0,
 * });
 * const result = await run.execute();
 * assert.deepEqual(result.cause, { kind: "maxSteps", steps: 0 });
 * assert.deepEqual(result.messages, [{ role: "user", content: "Hi" }]);
 * ```
 */
export class Run {
  readonly #o: RunOptions;
  readonly #signal: AbortSignal;
  readonly #conversation: Message[];
  readonly #state = new Map<string, unknown>();
  readonly #hooks: PhaseHooks;
  readonly #tools: ToolCalls;
  readonly #context: ContextWindow;
  #step: number;
  #stepsTaken = 0;
  #usage: TokenUsage = { promptTokens: 0, completionTokens: 0 };
  // Dollars so far; undefined once a step's usage could not be priced.
  #cost: number | undefined = 0;
  #stateSeeded = false;
  #snapshot: StateSnapshot | undefined;
  // How many of the current step's first messages are on disk already (the prompt, written
  // before the first model call).
  #written = 0;

  /** Prepares a run; nothing happens until {@linkcode Run.execute}. */
  constructor(options: RunOptions) {
    this.#o = options;
    this.#signal = options.signal ?? NEVER;
    this.#conversation = (options.history ?? []).map(freezeMessage);
    this.#step = options.firstStep ?? 0;
    const state = (): ReadonlyMap<string, unknown> => this.#stateSnapshot();
    this.#hooks = new PhaseHooks(options.runtime, this.#conversation, state);
    this.#tools = new ToolCalls(options, state, this.#signal);
    this.#context = new ContextWindow(options, this.#conversation, state, this.#signal);
  }

  /** Runs steps until the run ends, and says how it ended. */
  async execute(): Promise<RunResult> {
    const { runtime } = this.#o;
    const events = runtime.events;
    if (events.has("turnStarted") && !events.publish("turnStarted", { prompt: this.#o.prompt })) {
      return this.#finish({ kind: "cancelled" });
    }
    const maxSteps = this.#o.maxSteps ?? DEFAULT_MAX_STEPS;
    let pending: Message[] = [freezeMessage({ role: "user", content: this.#o.prompt })];
    if (this.#o.session !== undefined) {
      // The first part of the step's record; the commit writes the rest under the same number.
      await this.#o.session.append({ step: this.#step, messages: pending });
      this.#written = pending.length;
    }
    let cause: EndCause | undefined;
    while (cause === undefined) {
      if (this.#signal.aborted) cause = { kind: "cancelled" };
      else if (this.#stepsTaken >= maxSteps) cause = { kind: "maxSteps", steps: this.#stepsTaken };
      if (cause !== undefined) {
        await this.#commit(pending, [], undefined, cause);
        break;
      }
      const outcome = await this.#runStep(pending);
      pending = [];
      if (outcome.kind === "continue") continue;
      if (outcome.kind === "ended") {
        cause = outcome.cause;
        break;
      }
      // A text-only natural end: the guards of the step that ended decide, in dependency order;
      // any steer wins.
      const steer = await consultGuards(
        runtime,
        outcome.env,
        this.#step - 1,
        this.#conversation,
        this.#stateSnapshot(),
        this.#o.onEvent,
      );
      if (steer === undefined) cause = { kind: "completed", detail: outcome.detail };
      else pending = [freezeMessage({ role: "user", content: steer })];
    }
    return this.#finish(cause);
  }

  #finish(cause: EndCause): RunResult {
    const events = this.#o.runtime.events;
    this.#emit({ type: "end", cause });
    if (events.has("turnEnded")) {
      events.publish("turnEnded", { cancelled: cause.kind === "cancelled" });
    }
    const context = this.#context;
    const cost = this.#o.price === undefined || this.#cost === undefined ||
        context.cost === undefined
      ? undefined
      : this.#cost + context.cost;
    return {
      cause,
      steps: this.#stepsTaken,
      messages: this.#conversation,
      usage: context.usage === undefined ? this.#usage : addUsage(this.#usage, context.usage),
      ...(cost === undefined ? {} : { cost }),
      state: this.#state,
      compactions: context.compactions,
    };
  }

  async #runStep(pending: Message[]): Promise<StepOutcome> {
    const { runtime } = this.#o;
    runtime.refresh();
    const env = runtime.environment();
    this.#seedState(env);
    const step = this.#step;
    this.#emit({ type: "stepStart", step });
    const stepMessages: Message[] = pending;
    const staged: StateCommand[] = [];

    await this.#hooks.run(env, "StepStart", step, stepMessages, staged);
    await this.#hooks.run(env, "BeforeInference", step, stepMessages, staged);

    // The model call, compacting first or after an overflow when it must; a compaction took
    // the step's messages so far (the prompt written already among them) into the conversation.
    const { reply, response, compacted } = await this.#context.call(env, step, stepMessages);
    if (compacted) this.#written = 0;
    this.#stepsTaken++;
    this.#response(response.status, response.headers);
    const events = runtime.events;
    if (events.has("llmResponse")) {
      events.publish("llmResponse", {
        status: response.status,
        promptTokens: reply.usage?.promptTokens ?? 0,
        completionTokens: reply.usage?.completionTokens ?? 0,
      });
    }
    const said = reply.message();
    const assistant = said === undefined ? undefined : freezeMessage(said);
    if (response.cancelled || this.#signal.aborted) {
      if (assistant !== undefined) stepMessages.push(assistant);
      const cause: EndCause = { kind: "cancelled" };
      await this.#commit(stepMessages, staged, reply.usage, cause);
      return { kind: "ended", cause };
    }
    if (reply.error !== undefined) {
      if (assistant !== undefined) stepMessages.push(assistant);
      const error = reply.error;
      if (events.has("errorRaised")) {
        events.publish("errorRaised", {
          kind: "provider",
          message: error.message,
          retryable: error.retryable,
        });
      }
      const cause: EndCause = {
        kind: "error",
        failure: {
          kind: "provider",
          message: error.message,
          status: error.status,
          retryable: error.retryable,
        },
      };
      await this.#commit(stepMessages, staged, reply.usage, cause);
      return { kind: "ended", cause };
    }
    if (assistant !== undefined) stepMessages.push(assistant);
    await this.#hooks.run(env, "AfterInference", step, stepMessages, staged);

    const calls = reply.calls;
    let abandoned: AbandonedTool | undefined;
    for (let i = 0; i < calls.length && !this.#signal.aborted && abandoned === undefined; i++) {
      const call = calls[i];
      const outcome = await this.#tools.call(env, call, step);
      const result = outcome.result;
      abandoned = outcome.abandoned;
      stepMessages.push(freezeMessage({
        role: "tool",
        toolCallId: call.id,
        name: call.name,
        content: result.ok ? result.output : `error: ${result.error ?? "the tool failed"}`,
        ...(result.ok ? {} : { isError: true }),
        ...(result.images !== undefined && result.images.length > 0
          ? { images: imagesOf(result.images) }
          : {}),
      }));
      await this.#hooks.run(env, "AfterTool", step, stepMessages, staged, { call, result });
    }
    // The turn ends early on a cancel or an abandoned tool. Calls left unanswered still get a
    // result: a transcript whose assistant message asks for tools must answer each, or no
    // provider accepts it on resume.
    if (this.#signal.aborted || abandoned !== undefined) {
      const cause: EndCause = this.#signal.aborted ? { kind: "cancelled" } : {
        kind: "error",
        failure: {
          kind: "toolAbandoned",
          message: abandoned!.message,
          tool: abandoned!.tool,
          pluginId: abandoned!.pluginId,
          callId: abandoned!.callId,
        },
      };
      const why = this.#signal.aborted
        ? "cancelled by the user"
        : `not run: the turn ended when '${abandoned!.tool}' was abandoned`;
      answerRest(stepMessages, calls, why);
      await this.#commit(stepMessages, staged, reply.usage, cause);
      return { kind: "ended", cause };
    }
    await this.#hooks.run(env, "StepEnd", step, stepMessages, staged);
    await this.#commit(stepMessages, staged, reply.usage, undefined);
    if (calls.length > 0) return { kind: "continue" };
    return { kind: "natural", detail: reply.finish, env };
  }

  // The response's headers go to the host (passive allowance readouts); what the host's reader
  // throws is reported, never a reason to lose the step.
  #response(status: number, headers: Headers): void {
    try {
      this.#o.onResponse?.(status, headers);
    } catch (error) {
      this.#o.runtime.report({
        pluginId: "core",
        where: "reading the response headers",
        message: describeError(error),
        error,
      });
    }
  }

  // The store as plugin code sees it: frozen, as of the last commit that changed it.
  #stateSnapshot(): ReadonlyMap<string, unknown> {
    return this.#snapshot ??= new StateSnapshot(this.#state);
  }

  #seedState(env: ResolvedExecutionEnv): void {
    if (this.#stateSeeded) return;
    this.#stateSeeded = true;
    seedState(this.#state, env, this.#o.historyState ?? []);
    this.#snapshot = undefined;
  }

  async #commit(
    messages: Message[],
    state: StateCommand[],
    usage: TokenUsage | undefined,
    end: EndCause | undefined,
  ): Promise<void> {
    let cost: number | undefined;
    if (usage !== undefined) {
      this.#usage = addUsage(this.#usage, usage);
      cost = this.#o.price?.(usage);
      this.#cost = cost === undefined || this.#cost === undefined ? undefined : this.#cost + cost;
    }
    for (const command of state) applyCommand(this.#state, command);
    if (state.length > 0) this.#snapshot = undefined;
    const events = this.#o.runtime.events;
    const base = this.#conversation.length;
    for (const message of messages) this.#conversation.push(message);
    const written = this.#written;
    this.#written = 0;
    const news = messages.length > written || state.length > 0 || usage !== undefined;
    if (this.#o.session !== undefined && (news || end !== undefined)) {
      await this.#o.session.append({
        step: this.#step,
        messages: written === 0 ? messages : messages.slice(written),
        ...(state.length > 0 ? { state } : {}),
        ...(usage ? { usage } : {}),
        ...(cost === undefined ? {} : { cost }),
        ...(end ? { end: end.kind } : {}),
      });
    }
    if (events.has("messageAdded")) {
      messages.forEach((message, i) =>
        events.publish("messageAdded", { message, index: base + i })
      );
    }
    this.#emit({
      type: "stepEnd",
      step: this.#step,
      usage,
      ...(cost === undefined ? {} : { cost }),
    });
    this.#step++;
  }

  #emit(event: RunEvent): void {
    this.#o.onEvent?.(event);
  }
}

// The message is frozen and written to the session file: a copy with only the two fields keeps
// the tool's own objects unfrozen and whatever else it put in them out of the file.
function imagesOf(images: readonly ToolImage[]): readonly ToolImage[] {
  return images.map(({ mimeType, data }) => ({ mimeType, data }));
}

// Answers every call of `calls` that `stepMessages` has no result for yet with `why`.
function answerRest(stepMessages: Message[], calls: readonly ToolCall[], why: string): void {
  const answered = new Set(stepMessages.flatMap((m) => m.role === "tool" ? [m.toolCallId] : []));
  for (const call of calls) {
    if (answered.has(call.id)) continue;
    stepMessages.push(freezeMessage({
      role: "tool",
      toolCallId: call.id,
      name: call.name,
      content: `error: ${why}`,
      isError: true,
    }));
  }
}
