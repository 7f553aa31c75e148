/**
 * Sampling for MCP servers: a server's `sampling/createMessage` request answered by one model
 * call through the session's provider. The server's messages become the neutral conversation
 * (text as it is; an image, audio or tool block as a line saying what was left out, since the
 * request is answered with text only), its `systemPrompt` the system message, its `maxTokens`
 * and `temperature` the request's. No tools are offered: a sampled answer cannot act.
 *
 * The front end asks the user before each request reaches this (see `AgentSession.sample`).
 *
 * @module
 */

import type { FinishReason, Message, StreamEvent } from "@amber/core";
import type { ProviderClient } from "@amber/providers/client";
// @ts-types="@modelcontextprotocol/sdk/types"
import type {
  CreateMessageRequest,
  CreateMessageResult,
  SamplingMessage,
} from "@modelcontextprotocol/sdk/types.js";

/** The parameters of a server's sampling request. */
export type SamplingParams = CreateMessageRequest["params"];

/** Why a sampling request got no answer: the model call failed, or was cancelled. */
export class SamplingError extends Error {
  /** A sampling request that failed with `message`. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SamplingError";
  }
}

/**
 * The conversation a sampling request asks about: the system prompt first, then each message,
 * its blocks' text joined by line breaks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { samplingMessages } from "./sampling.ts";
 * const messages = samplingMessages({
 *   systemPrompt: "Be brief.",
 *   maxTokens: 50,
 *   messages: [
 *     { role: "user", content: { type: "text", text: "Name a colour." } },
 *     { role: "user", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] },
 *   ],
 * });
 * assert.deepEqual(messages, [
 *   { role: "system", content: "Be brief." },
 *   { role: "user", content: "Name a colour." },
 *   { role: "user", content: "[an image/png image was left out: amber samples text only]" },
 * ]);
 * ```
 */
export function samplingMessages(params: SamplingParams): Message[] {
  const messages: Message[] = [];
  if (params.systemPrompt !== undefined && params.systemPrompt !== "") {
    messages.push({ role: "system", content: params.systemPrompt });
  }
  for (const message of params.messages) {
    messages.push({ role: message.role, content: samplingMessageText(message) });
  }
  return messages;
}

/**
 * The MCP stop reason for a finish reason: `endTurn`, `maxTokens`, or the reason as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stopReason } from "./sampling.ts";
 * assert.equal(stopReason("stop"), "endTurn");
 * assert.equal(stopReason("length"), "maxTokens");
 * assert.equal(stopReason("content_filter"), "content_filter");
 * ```
 */
export function stopReason(finish: FinishReason | undefined): string | undefined {
  if (finish === "stop") return "endTurn";
  if (finish === "length") return "maxTokens";
  return finish;
}

/** What one sampling call streamed, gathered into a result. */
export interface SampledAnswer {
  /** The result for the server. */
  readonly result: CreateMessageResult;
  /** The tokens the call used. */
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number };
}

/**
 * Gathers a streamed answer: its text, finish reason and usage. `collect` is handed the sink the
 * model call streams into and resolves once the call is over; an `error` event, or a call that
 * was cancelled, rejects with a {@linkcode SamplingError}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gatherSample } from "./sampling.ts";
 * const answer = await gatherSample("model-x", async (sink) => {
 *   sink({ type: "text", delta: "Blue" });
 *   sink({ type: "text", delta: "." });
 *   sink({ type: "usage", promptTokens: 7, completionTokens: 2 });
 *   sink({ type: "finish", reason: "stop" });
 *   return { cancelled: false };
 * });
 * assert.deepEqual(answer.result, {
 *   role: "assistant",
 *   content: { type: "text", text: "Blue." },
 *   model: "model-x",
 *   stopReason: "endTurn",
 * });
 * assert.deepEqual(answer.usage, { promptTokens: 7, completionTokens: 2 });
 * ```
 */
export async function gatherSample(
  model: string,
  collect: (sink: (event: StreamEvent) => void) => Promise<{ readonly cancelled: boolean }>,
): Promise<SampledAnswer> {
  let text = "";
  let finish: FinishReason | undefined;
  let error: string | undefined;
  const usage = { promptTokens: 0, completionTokens: 0 };
  const outcome = await collect((event) => {
    if (event.type === "text") text += event.delta;
    else if (event.type === "finish") finish = event.reason;
    else if (event.type === "error") error ??= event.message;
    else if (event.type === "usage") {
      usage.promptTokens += event.promptTokens;
      usage.completionTokens += event.completionTokens;
    }
  });
  if (outcome.cancelled) throw new SamplingError("the sampling request was cancelled");
  if (error !== undefined) throw new SamplingError(`the model call failed: ${error}`);
  const reason = stopReason(finish);
  const result: CreateMessageResult = {
    role: "assistant",
    content: { type: "text", text },
    model,
    ...(reason === undefined ? {} : { stopReason: reason }),
  };
  return { result, usage };
}

/**
 * A sampling message's text: its blocks' text joined by line breaks, a line saying what was left
 * out for each block that is not text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { samplingMessageText } from "./sampling.ts";
 * assert.equal(
 *   samplingMessageText({ role: "user", content: [{ type: "text", text: "Look:" }, { type: "audio", data: "", mimeType: "audio/wav" }] }),
 *   "Look:\n[an audio/wav audio was left out: amber samples text only]",
 * );
 * ```
 */
export function samplingMessageText(message: SamplingMessage): string {
  type Block = Extract<SamplingMessage["content"], { type: string }>;
  const blocks: readonly Block[] = Array.isArray(message.content)
    ? message.content
    : [message.content];
  return blocks.map((block) => {
    switch (block.type) {
      case "text":
        return block.text;
      case "image":
      case "audio":
        return `[an ${block.mimeType} ${block.type} was left out: amber samples text only]`;
      default:
        return `[a ${block.type} block was left out: amber samples without tools]`;
    }
  }).join("\n");
}

/**
 * Answers the sampling request `params` with one call of `model` through `client`: the request's
 * messages and system prompt, its `maxTokens` and temperature, no tools. Rejects as
 * {@linkcode gatherSample} does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ProviderClient } from "@amber/providers/client";
 * import { sampleThrough } from "./sampling.ts";
 * let sent: unknown;
 * const client: Pick<ProviderClient, "stream"> = {
 *   stream: async (request, sink) => {
 *     sent = request;
 *     sink({ type: "text", delta: "Blue." });
 *     sink({ type: "finish", reason: "stop" });
 *     return { cancelled: false, attempts: 1 } as Awaited<ReturnType<ProviderClient["stream"]>>;
 *   },
 * };
 * const params = {
 *   messages: [{ role: "user" as const, content: { type: "text" as const, text: "Sky?" } }],
 *   maxTokens: 10,
 * };
 * const answer = await sampleThrough(client, "model-x", params, new AbortController().signal);
 * assert.equal(answer.result.content.type === "text" && answer.result.content.text, "Blue.");
 * assert.deepEqual(sent, {
 *   model: "model-x",
 *   messages: [{ role: "user", content: "Sky?" }],
 *   tools: [],
 *   maxTokens: 10,
 * });
 * ```
 */
export function sampleThrough(
  client: Pick<ProviderClient, "stream">,
  model: string,
  params: SamplingParams,
  signal: AbortSignal,
): Promise<SampledAnswer> {
  return gatherSample(model, (sink) =>
    client.stream(
      {
        model,
        messages: samplingMessages(params),
        tools: [],
        maxTokens: params.maxTokens,
        ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
      },
      sink,
      signal,
    ));
}
