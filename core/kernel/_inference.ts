/**
 * One model call's two ends: the request a step sends, assembled from the environment and the
 * conversation, and the reply gathered from the stream it gets back.
 *
 * @module
 */

import type { SummaryRequest } from "../compaction.ts";
import type { ChatRequest, FinishReason, StreamEvent, StreamSink } from "../dialect.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { Message, ToolCall } from "../message.ts";
import type { TokenUsage } from "../usage.ts";
import type { ModelPort, RunEvent, RunOptions } from "./run_types.ts";

/** One step's request, with what the kernel reports and estimates of it. */
export interface StepRequest {
  /** The request. */
  readonly request: ChatRequest;
  /** The prompt blocks the assembly put in, as the system messages they became. */
  readonly blocks: readonly Message[];
  /** The first block whose text changed since the previous assembly, if one did. */
  readonly firstChanged?: string;
}

/**
 * The request of one step: the environment's prompt over the committed conversation and the
 * step's own messages so far, its tools, and the run's model settings. Assembling is stateful
 * (it compares the blocks with the previous assembly), so a step assembles once per model call.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { chatRequest } from "./_inference.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * await runtime.start();
 * const { request, blocks } = chatRequest(
 *   { modelName: "m", maxTokens: 10 },
 *   runtime.environment(),
 *   [],
 *   [{ role: "user", content: "Hi" }],
 * );
 * assert.equal(request.model, "m");
 * assert.equal(request.maxTokens, 10);
 * assert.deepEqual(request.messages.at(-1), { role: "user", content: "Hi" });
 * assert.deepEqual(blocks, []);
 * ```
 */
export function chatRequest(
  options: Pick<RunOptions, "modelName" | "maxTokens" | "temperature" | "reasoningEffort">,
  env: Pick<ResolvedExecutionEnv, "assemblePrompt" | "toolDefinitions">,
  conversation: readonly Message[],
  stepMessages: readonly Message[],
): StepRequest {
  const sealed = stepMessages.length === 0 ? conversation : [...conversation, ...stepMessages];
  const prompt = env.assemblePrompt(sealed);
  // The assembly puts the blocks right after the context's leading system messages.
  let lead = 0;
  while (lead < sealed.length && sealed[lead].role === "system") lead++;
  const count = prompt.messages.length - sealed.length;
  const request: ChatRequest = {
    model: options.modelName,
    messages: prompt.messages,
    tools: env.toolDefinitions,
    maxTokens: options.maxTokens,
    temperature: options.temperature,
    reasoningEffort: options.reasoningEffort,
  };
  const blocks = count > 0 ? prompt.messages.slice(lead, lead + count) : [];
  return prompt.firstChanged === undefined
    ? { request, blocks }
    : { request, blocks, firstChanged: prompt.firstChanged };
}

/**
 * A summarizer over a model port: one request with the summary's instructions as its system
 * message and no tools, its text the summary. It rejects when the call fails, is cancelled or
 * answers nothing; the usage it reports goes to `onUsage`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summarizer } from "./_inference.ts";
 * const summarize = summarizer({
 *   stream(request, sink) {
 *     assert.deepEqual(request.tools, []);
 *     sink({ type: "text", delta: `${request.model}: ${request.messages.length} messages` });
 *     sink({ type: "finish", reason: "stop" });
 *     return Promise.resolve({ status: 200, headers: new Headers(), cancelled: false });
 *   },
 * }, "m", new AbortController().signal, () => {});
 * assert.equal(await summarize({ system: "Summarize.", messages: [{ role: "user", content: "x" }] }), "m: 2 messages");
 * ```
 */
export function summarizer(
  model: ModelPort,
  modelName: string,
  signal: AbortSignal,
  onUsage: (usage: TokenUsage) => void,
): (request: SummaryRequest) => Promise<string> {
  return async (summary) => {
    const reply = new Reply(undefined);
    const outcome = await model.stream(
      {
        model: summary.model ?? modelName,
        messages: [{ role: "system", content: summary.system }, ...summary.messages],
        tools: [],
        ...(summary.maxTokens === undefined ? {} : { maxTokens: summary.maxTokens }),
      },
      reply.sink,
      signal,
    );
    if (reply.usage !== undefined) onUsage(reply.usage);
    if (outcome.cancelled || signal.aborted) throw new Error("the summary was cancelled");
    if (reply.error !== undefined) throw new Error(reply.error.message);
    return reply.text.join("");
  };
}

/**
 * Gathers one response. The sink forwards each event to the host and keeps only what the
 * transcript needs: text and reasoning are joined once at the end, not per token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Reply } from "./_inference.ts";
 * const forwarded: string[] = [];
 * const reply = new Reply((event) => forwarded.push(event.type));
 * reply.sink({ type: "text", delta: "Hel" });
 * reply.sink({ type: "text", delta: "lo" });
 * reply.sink({ type: "usage", promptTokens: 3, completionTokens: 2 });
 * reply.sink({ type: "finish", reason: "stop" });
 * assert.deepEqual(forwarded, ["text", "text", "usage", "finish"]);
 * assert.deepEqual(reply.usage, { promptTokens: 3, completionTokens: 2 });
 * assert.deepEqual(reply.message(), { role: "assistant", content: "Hello" });
 * ```
 */
export class Reply {
  /** The text deltas, in order. */
  readonly text: string[] = [];
  /** The reasoning deltas, in order. */
  readonly reasoning: string[] = [];
  /** The reasoning signatures, one per signed block. */
  readonly signatures: string[] = [];
  /** The wire field the reasoning came in, when the protocol named it. */
  reasoningField: string | undefined;
  /** The signature of the text (the last one the provider sent), when it sent one. */
  textSignature: string | undefined;
  /** The tool calls, each as it ended. */
  readonly calls: ToolCall[] = [];
  /** The response's token counts, when it gave them. */
  usage: TokenUsage | undefined;
  /** Why the response ended, when it said. */
  finish: FinishReason | undefined;
  /** The provider's error, when the response ended in one. */
  error:
    | { message: string; retryable: boolean; status?: number; contextOverflow?: boolean }
    | undefined;
  /** Receives the stream; give it to the model. */
  readonly sink: StreamSink;

  /** Creates a reply whose sink forwards every event to `onEvent`. */
  constructor(onEvent: ((event: RunEvent) => void) | undefined) {
    this.sink = (event: StreamEvent): void => {
      switch (event.type) {
        case "text":
          this.text.push(event.delta);
          break;
        case "reasoning":
          this.reasoning.push(event.delta);
          if (event.field !== undefined) this.reasoningField ??= event.field;
          break;
        case "textSignature":
          this.textSignature = event.signature;
          break;
        case "reasoningSignature":
          this.signatures.push(event.signature);
          break;
        case "toolCallEnd":
          this.calls.push(
            event.signature === undefined
              ? { id: event.id, name: event.name, arguments: event.arguments }
              : {
                id: event.id,
                name: event.name,
                arguments: event.arguments,
                signature: event.signature,
              },
          );
          break;
        case "usage":
          this.usage = usageOf(event);
          break;
        case "finish":
          this.finish = event.reason;
          break;
        case "error":
          this.error = {
            message: event.message,
            retryable: event.retryable,
            status: event.status,
            ...(event.contextOverflow === true ? { contextOverflow: true } : {}),
          };
          break;
      }
      onEvent?.(event);
    };
  }

  /** The assistant message the response makes, or undefined when it said nothing at all. */
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
      ...(this.reasoning.length > 0 && this.reasoningField !== undefined
        ? { reasoningField: this.reasoningField }
        : {}),
      ...(content !== "" && this.textSignature !== undefined
        ? { textSignature: this.textSignature }
        : {}),
      ...(this.calls.length > 0 ? { toolCalls: this.calls } : {}),
    };
  }
}

// The usage event's counts, the optional ones only when the provider gave them.
function usageOf(event: StreamEvent & { type: "usage" }): TokenUsage {
  const usage: {
    promptTokens: number;
    completionTokens: number;
    cachedTokens?: number;
    cacheWriteTokens?: number;
    reasoningTokens?: number;
  } = { promptTokens: event.promptTokens, completionTokens: event.completionTokens };
  if (event.cachedTokens !== undefined) usage.cachedTokens = event.cachedTokens;
  if (event.cacheWriteTokens !== undefined) usage.cacheWriteTokens = event.cacheWriteTokens;
  if (event.reasoningTokens !== undefined) usage.reasoningTokens = event.reasoningTokens;
  return usage;
}
