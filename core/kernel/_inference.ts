/**
 * One model call's two ends: the request a step sends, assembled from the environment and the
 * conversation, and the reply gathered from the stream it gets back.
 *
 * @module
 */

import type { ChatRequest, FinishReason, StreamEvent, StreamSink } from "../dialect.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { Message, ToolCall } from "../message.ts";
import type { RunEvent, RunOptions } from "./run_types.ts";

/**
 * The request of one step: the environment's prompt over the committed conversation and the
 * step's own messages so far, its tools, and the run's model settings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { chatRequest } from "./_inference.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * await runtime.start();
 * const request = chatRequest(
 *   { modelName: "m", maxTokens: 10 },
 *   runtime.environment(),
 *   [],
 *   [{ role: "user", content: "Hi" }],
 * );
 * assert.equal(request.model, "m");
 * assert.equal(request.maxTokens, 10);
 * assert.deepEqual(request.messages.at(-1), { role: "user", content: "Hi" });
 * ```
 */
export function chatRequest(
  options: Pick<RunOptions, "modelName" | "maxTokens" | "temperature" | "reasoningEffort">,
  env: ResolvedExecutionEnv,
  conversation: readonly Message[],
  stepMessages: readonly Message[],
): ChatRequest {
  const prompt = env.assemblePrompt(
    stepMessages.length === 0 ? conversation : [...conversation, ...stepMessages],
  );
  return {
    model: options.modelName,
    messages: prompt.messages,
    tools: env.toolDefinitions,
    maxTokens: options.maxTokens,
    temperature: options.temperature,
    reasoningEffort: options.reasoningEffort,
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
  /** The tool calls, each as it ended. */
  readonly calls: ToolCall[] = [];
  /** The response's token counts, when it gave them. */
  usage: { promptTokens: number; completionTokens: number } | undefined;
  /** Why the response ended, when it said. */
  finish: FinishReason | undefined;
  /** The provider's error, when the response ended in one. */
  error: { message: string; retryable: boolean; status?: number } | undefined;
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
      ...(this.calls.length > 0 ? { toolCalls: this.calls } : {}),
    };
  }
}
