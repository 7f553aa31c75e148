/**
 * The run kernel: a model in a loop with tools, over the resolved execution environment. Each
 * step runs the phase hooks at their points, builds the prompt copy, streams the model through
 * the dialect, passes every tool call through the ToolRequested event, the host gate, the plugin
 * gates and the approval policy, executes it, and commits the step to the transcript before the
 * next one starts. A text-only natural end consults the run-end guards; max steps is the
 * backstop. Nothing is done per token but forwarding the delta.
 *
 * @module
 */

import type { ApprovalPolicy } from "../config.ts";
import type { ChatRequest, FinishReason, StreamEvent, StreamSink } from "../dialect.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import { describeError } from "../errors.ts";
import type {
  GateInput,
  GateOutcome,
  HookInput,
  PhaseHookPoint,
  RunEndDecision,
  StateCommand,
} from "../hooks.ts";
import type { Message, ToolCall } from "../message.ts";
import { CapabilityBoundError } from "../resolution_error.ts";
import type { PluginRuntime } from "../runtime.ts";
import { resolveSelection, type SelectionRequest } from "./selection.ts";
import type { ToolResult } from "../tool.ts";
import type { SessionFile } from "./transcript.ts";

/** What the kernel needs of a model client; `ProviderClient` of @amber/providers is one. */
export interface ModelPort {
  /** Streams one response into `sink`; never throws for provider or network failures. */
  stream(
    request: ChatRequest,
    sink: StreamSink,
    signal?: AbortSignal,
  ): Promise<{ readonly status: number; readonly headers: Headers; readonly cancelled: boolean }>;
}

/** Why a run failed. */
export type RunFailure =
  | { readonly kind: "capabilityBound"; readonly error: CapabilityBoundError }
  | {
    readonly kind: "provider";
    readonly message: string;
    readonly status?: number;
    readonly retryable: boolean;
  }
  | { readonly kind: "interrupted"; readonly message: string };

/** How a run ended. */
export type EndCause =
  | { readonly kind: "completed"; readonly detail?: string }
  | { readonly kind: "cancelled" }
  | { readonly kind: "maxSteps"; readonly steps: number }
  | { readonly kind: "error"; readonly failure: RunFailure };

/** What the kernel reports as it goes, for a host to show; deltas are forwarded as they come. */
export type RunEvent =
  | StreamEvent
  | { readonly type: "stepStart"; readonly step: number }
  | {
    readonly type: "toolStart";
    readonly call: ToolCall;
    readonly verb: string;
    readonly summary: string;
  }
  | {
    readonly type: "toolEnd";
    readonly call: ToolCall;
    readonly result: ToolResult;
    readonly durationMs: number;
  }
  | { readonly type: "steer"; readonly guard: string; readonly feedback: string }
  | {
    readonly type: "stepEnd";
    readonly step: number;
    readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
  }
  | { readonly type: "end"; readonly cause: EndCause };

/** The user's answer to an approval prompt. */
export type ApprovalAnswer = "once" | "always" | "deny";

/** What an approval prompt shows. */
export interface ApprovalRequest {
  /** The call. */
  readonly call: ToolCall;
  /** The parsed arguments. */
  readonly args: unknown;
  /** The tool's one-line summary of the call. */
  readonly summary: string;
  /** Set when a gate asked for the confirmation. */
  readonly correlationId?: string;
}

/** Options of {@linkcode runAgent}. */
export interface RunOptions {
  /** The plugin runtime: the environment, live refresh and events. */
  readonly runtime: PluginRuntime;
  /** The model client, its dialect resolved once for the run. */
  readonly model: ModelPort;
  /** The model name. */
  readonly modelName: string;
  /** The user's prompt that starts this run. */
  readonly prompt: string;
  /** The conversation before it (a resumed session). */
  readonly history?: readonly Message[];
  /** State commands committed before (a resumed session), replayed in order. */
  readonly historyState?: readonly StateCommand[];
  /** Where committed steps go. */
  readonly session?: SessionFile;
  /** The step number to start from (a resumed session continues its numbering). */
  readonly firstStep?: number;
  /** The approval policy for tools that need approval. */
  readonly approval: ApprovalPolicy;
  /** Asks the user; without it, `ask` denies with a message saying how to allow. */
  readonly ask?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
  /** The host's gate, consulted before every plugin gate. */
  readonly hostGate?: (input: GateInput) => GateOutcome | Promise<GateOutcome>;
  /** The most steps (model calls); the backstop for guards that always steer. */
  readonly maxSteps?: number;
  /** Cancels the run. */
  readonly signal?: AbortSignal;
  /** Receives run events. */
  readonly onEvent?: (event: RunEvent) => void;
  /** Passed on to the model. */
  readonly maxTokens?: number;
  /** Passed on to the model. */
  readonly temperature?: number;
  /** Passed on to the model. */
  readonly reasoningEffort?: string;
  /** Called with each response's headers (for passive allowance readouts). */
  readonly onResponse?: (status: number, headers: Headers) => void;
}

/** What a run did. */
export interface RunResult {
  /** How it ended. */
  readonly cause: EndCause;
  /** How many steps it took. */
  readonly steps: number;
  /** The whole conversation afterwards. */
  readonly messages: readonly Message[];
  /** Tokens over all steps. */
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number };
  /** The state store afterwards. */
  readonly state: ReadonlyMap<string, unknown>;
}

const DEFAULT_MAX_STEPS = 50;
const NEVER = new AbortController().signal;

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
    };
  }
  try {
    return await runAgent({ ...options, runtime: resolved.runtime });
  } finally {
    await resolved.runtime.stop();
  }
}

class Run {
  readonly #o: RunOptions;
  readonly #signal: AbortSignal;
  readonly #conversation: Message[];
  readonly #state = new Map<string, unknown>();
  readonly #alwaysAllowed = new Set<string>();
  #step: number;
  #stepsTaken = 0;
  #promptTokens = 0;
  #completionTokens = 0;
  #stateSeeded = false;

  constructor(options: RunOptions) {
    this.#o = options;
    this.#signal = options.signal ?? NEVER;
    this.#conversation = [...(options.history ?? [])];
    this.#step = options.firstStep ?? 0;
  }

  async execute(): Promise<RunResult> {
    const { runtime } = this.#o;
    const events = runtime.events;
    if (events.has("turnStarted") && !events.publish("turnStarted", { prompt: this.#o.prompt })) {
      return this.#finish({ kind: "cancelled" });
    }
    const maxSteps = this.#o.maxSteps ?? DEFAULT_MAX_STEPS;
    let pending: Message[] = [{ role: "user", content: this.#o.prompt }];
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
      // A text-only natural end: the guards decide, in dependency order; any steer wins.
      const steer = await this.#consultGuards();
      if (steer === undefined) cause = { kind: "completed", detail: outcome.detail };
      else pending = [{ role: "user", content: steer }];
    }
    return this.#finish(cause);
  }

  #finish(cause: EndCause): RunResult {
    const events = this.#o.runtime.events;
    this.#emit({ type: "end", cause });
    if (events.has("turnEnded")) {
      events.publish("turnEnded", { cancelled: cause.kind === "cancelled" });
    }
    return {
      cause,
      steps: this.#stepsTaken,
      messages: this.#conversation,
      usage: { promptTokens: this.#promptTokens, completionTokens: this.#completionTokens },
      state: this.#state,
    };
  }

  async #runStep(
    pending: Message[],
  ): Promise<
    { kind: "continue" } | { kind: "natural"; detail?: string } | { kind: "ended"; cause: EndCause }
  > {
    const { runtime } = this.#o;
    runtime.refresh();
    const env = runtime.environment();
    this.#seedState(env);
    const step = this.#step;
    this.#emit({ type: "stepStart", step });
    const stepMessages: Message[] = pending;
    const staged: StateCommand[] = [];

    await this.#hooks(env, "StepStart", stepMessages, staged);
    await this.#hooks(env, "BeforeInference", stepMessages, staged);

    const prompt = env.assemblePrompt(
      stepMessages.length === 0 ? this.#conversation : [...this.#conversation, ...stepMessages],
    );
    const request: ChatRequest = {
      model: this.#o.modelName,
      messages: prompt.messages,
      tools: env.toolDefinitions,
      maxTokens: this.#o.maxTokens,
      temperature: this.#o.temperature,
      reasoningEffort: this.#o.reasoningEffort,
    };
    const reply = new Reply(this.#o.onEvent);
    const response = await this.#o.model.stream(request, reply.sink, this.#signal);
    this.#stepsTaken++;
    this.#o.onResponse?.(response.status, response.headers);
    if (reply.usage !== undefined) {
      this.#promptTokens += reply.usage.promptTokens;
      this.#completionTokens += reply.usage.completionTokens;
    }
    const events = runtime.events;
    if (events.has("llmResponse")) {
      events.publish("llmResponse", {
        status: response.status,
        promptTokens: reply.usage?.promptTokens ?? 0,
        completionTokens: reply.usage?.completionTokens ?? 0,
      });
    }
    const assistant = reply.message();
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
    await this.#hooks(env, "AfterInference", stepMessages, staged);

    const calls = reply.calls;
    for (let i = 0; i < calls.length; i++) {
      if (this.#signal.aborted) break;
      const call = calls[i];
      const result = await this.#callTool(env, call);
      stepMessages.push({
        role: "tool",
        toolCallId: call.id,
        name: call.name,
        content: result.ok ? result.output : `error: ${result.error ?? "the tool failed"}`,
        ...(result.ok ? {} : { isError: true }),
      });
      await this.#hooks(env, "AfterTool", stepMessages, staged, { call, result });
    }
    // Calls left unanswered by a cancellation still get a result: a transcript whose assistant
    // message asks for tools must answer each, or no provider accepts it on resume.
    if (this.#signal.aborted) {
      const answered = new Set(
        stepMessages.flatMap((m) => m.role === "tool" ? [m.toolCallId] : []),
      );
      for (const call of calls) {
        if (answered.has(call.id)) continue;
        stepMessages.push({
          role: "tool",
          toolCallId: call.id,
          name: call.name,
          content: "error: cancelled by the user",
          isError: true,
        });
      }
      const cause: EndCause = { kind: "cancelled" };
      await this.#commit(stepMessages, staged, reply.usage, cause);
      return { kind: "ended", cause };
    }
    await this.#hooks(env, "StepEnd", stepMessages, staged);
    await this.#commit(stepMessages, staged, reply.usage, undefined);
    if (calls.length > 0) return { kind: "continue" };
    return { kind: "natural", detail: reply.finish };
  }

  async #callTool(env: ResolvedExecutionEnv, call: ToolCall): Promise<ToolResult> {
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

  async #hooks(
    env: ResolvedExecutionEnv,
    point: PhaseHookPoint,
    stepMessages: Message[],
    staged: StateCommand[],
    tool?: HookInput["tool"],
  ): Promise<void> {
    const hooks = env.hooks[point];
    if (hooks.length === 0) return;
    const input: HookInput = {
      point,
      step: this.#step,
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
              this.#o.runtime.report({
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
        this.#o.runtime.report({
          pluginId: entry.owner,
          where: `hook '${entry.name}' at ${point}`,
          message: describeError(error),
          error,
        });
      }
    }
  }

  async #consultGuards(): Promise<string | undefined> {
    const env = this.#o.runtime.environment();
    let steer: string | undefined;
    for (const entry of env.guards) {
      let decision: RunEndDecision;
      try {
        decision = await entry.capability.decide({
          step: this.#step - 1,
          transcript: this.#conversation,
          state: this.#state,
        });
      } catch (error) {
        this.#o.runtime.report({
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
        this.#emit({ type: "steer", guard: entry.name, feedback: decision.feedback });
      }
    }
    return steer;
  }

  #seedState(env: ResolvedExecutionEnv): void {
    if (this.#stateSeeded) return;
    this.#stateSeeded = true;
    for (const [key, entry] of env.stateKeys) this.#state.set(key, entry.capability.initial);
    for (const command of this.#o.historyState ?? []) applyCommand(this.#state, command);
  }

  async #commit(
    messages: Message[],
    state: StateCommand[],
    usage: { promptTokens: number; completionTokens: number } | undefined,
    end: EndCause | undefined,
  ): Promise<void> {
    for (const command of state) applyCommand(this.#state, command);
    const events = this.#o.runtime.events;
    const base = this.#conversation.length;
    for (const message of messages) this.#conversation.push(message);
    if (this.#o.session !== undefined && (messages.length > 0 || end !== undefined)) {
      await this.#o.session.append({
        step: this.#step,
        messages,
        ...(state.length > 0 ? { state } : {}),
        ...(usage ? { usage } : {}),
        ...(end ? { end: end.kind } : {}),
      });
    }
    if (events.has("messageAdded")) {
      messages.forEach((message, i) =>
        events.publish("messageAdded", { message, index: base + i })
      );
    }
    this.#emit({ type: "stepEnd", step: this.#step, usage });
    this.#step++;
  }

  #emit(event: RunEvent): void {
    this.#o.onEvent?.(event);
  }
}

function applyCommand(state: Map<string, unknown>, command: StateCommand): void {
  if (command.op === "set") state.set(command.key, command.value);
  else state.delete(command.key);
}

// Gathers one response. The sink forwards each event to the host and keeps only what the
// transcript needs: text and reasoning are joined once at the end, not per token.
class Reply {
  readonly text: string[] = [];
  readonly reasoning: string[] = [];
  readonly signatures: string[] = [];
  readonly calls: ToolCall[] = [];
  usage: { promptTokens: number; completionTokens: number } | undefined;
  finish: FinishReason | undefined;
  error: { message: string; retryable: boolean; status?: number } | undefined;
  readonly sink: StreamSink;

  constructor(onEvent: ((event: RunEvent) => void) | undefined) {
    this.sink = (event: StreamEvent): void => {
      switch (event.type) {
        case "text":
          this.text.push(event.delta);
          break;
        case "reasoning":
          this.reasoning.push(event.delta);
          break;
        case "reasoningSignature":
          this.signatures.push(event.signature);
          break;
        case "toolCallEnd":
          this.calls.push({ id: event.id, name: event.name, arguments: event.arguments });
          break;
        case "usage":
          this.usage = {
            promptTokens: event.promptTokens,
            completionTokens: event.completionTokens,
          };
          break;
        case "finish":
          this.finish = event.reason;
          break;
        case "error":
          this.error = { message: event.message, retryable: event.retryable, status: event.status };
          break;
      }
      onEvent?.(event);
    };
  }

  message(): Message | undefined {
    const content = this.text.join("");
    if (content === "" && this.calls.length === 0 && this.reasoning.length === 0) return undefined;
    return {
      role: "assistant",
      content,
      ...(this.reasoning.length > 0 ? { reasoning: this.reasoning.join("") } : {}),
      // One signature proves one reasoning block; joined blocks under several signatures would
      // prove nothing, so then none is kept.
      ...(this.reasoning.length > 0 && this.signatures.length === 1
        ? { reasoningSignature: this.signatures[0] }
        : {}),
      ...(this.calls.length > 0 ? { toolCalls: this.calls } : {}),
    };
  }
}
