/**
 * The server side of OpenAI Chat Completions, byte for byte as OpenAI streams it.
 *
 * @module
 */

import { sseFrame, type WireEncoder } from "./encoder.ts";
import { argumentsText, chunkText, finishOf, type ScriptedTurn } from "./script.ts";

// Ids only need to be unique within a process; a counter keeps runs reproducible.
let sequence = 0;

/** A fresh id with OpenAI's prefix for that kind of object. */
function fakeId(prefix: string): string {
  sequence++;
  return `${prefix}${sequence.toString(36).padStart(8, "0")}`;
}

/** `{"error":{message,type,param,code}}`, with the type and code OpenAI uses for `status`. */
function openaiErrorBody(status: number, message: string): string {
  let type = "invalid_request_error";
  let code: string | null = null;
  if (status === 401) code = "invalid_api_key";
  else if (status === 404) code = "model_not_found";
  else if (status === 429) {
    type = "requests";
    code = "rate_limit_exceeded";
  } else if (status >= 500) type = "server_error";
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/** `{"object":"list","data":[{id, object:"model", created, owned_by}]}`. */
function openaiModelsBody(models: readonly string[]): string {
  return JSON.stringify({
    object: "list",
    data: models.map((id) => ({ id, object: "model", created: 1_700_000_000, owned_by: "system" })),
  });
}

/**
 * OpenAI Chat Completions as the fake provider's wire protocol: a first chunk with the
 * assistant role, reasoning deltas (as `reasoning_content`, the field compatible reasoning
 * servers use), text deltas of `chunkSize` characters, each tool call as a first fragment with
 * its id and name followed by its argument fragments, the finish-reason chunk, the usage chunk
 * (`choices: []`) when the turn has usage, and `data: [DONE]`. Every chunk carries `"usage":null`
 * until the last, as OpenAI does under `stream_options.include_usage`.
 *
 * @example
 * ```ts
 * import { openaiEncoder } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * const turn = { text: "Hi", usage: { promptTokens: 3, completionTokens: 1 } };
 * const frames = openaiEncoder.frames(turn, "gpt-4.1");
 * assert.equal(frames.length, 5);
 * assert.equal(frames.at(-1), "data: [DONE]\n\n");
 * ```
 */
export const openaiEncoder: WireEncoder = {
  flavor: "openai",

  frames(turn: ScriptedTurn, model: string): string[] {
    const id = fakeId("chatcmpl-");
    const created = Math.floor(Date.now() / 1000);
    const size = turn.chunkSize ?? 8;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
      sseFrame({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
        usage: null,
      });

    const frames = [chunk({ role: "assistant", content: "" })];
    for (const piece of chunkText(turn.reasoning ?? "", size)) {
      frames.push(chunk({ reasoning_content: piece }));
    }
    for (const piece of chunkText(turn.text ?? "", size)) frames.push(chunk({ content: piece }));
    const calls = turn.toolCalls ?? [];
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index];
      frames.push(chunk({
        tool_calls: [{
          index,
          id: call.id ?? fakeId("call_"),
          type: "function",
          function: { name: call.name, arguments: "" },
        }],
      }));
      for (const piece of chunkText(argumentsText(call), size)) {
        frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
    }
    // The neutral names are OpenAI's, except "error" and "other", which only routers send.
    frames.push(chunk({}, finishOf(turn)));
    const usage = turn.usage;
    if (usage !== undefined) {
      frames.push(sseFrame({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [],
        usage: {
          prompt_tokens: usage.promptTokens,
          completion_tokens: usage.completionTokens,
          total_tokens: usage.promptTokens + usage.completionTokens,
          prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
          completion_tokens_details: {
            reasoning_tokens: 0,
            audio_tokens: 0,
            accepted_prediction_tokens: 0,
            rejected_prediction_tokens: 0,
          },
        },
      }));
    }
    frames.push(sseFrame("[DONE]"));
    return frames;
  },

  errorBody(status: number, message: string): string {
    return openaiErrorBody(status, message);
  },

  streamErrorFrame(message: string): string {
    return sseFrame({ error: { message, type: "server_error", param: null, code: null } });
  },

  completionBody(turn: ScriptedTurn, model: string): string {
    const calls = turn.toolCalls ?? [];
    const usage = turn.usage;
    return JSON.stringify({
      id: fakeId("chatcmpl-"),
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: turn.text ?? null,
          ...(calls.length === 0 ? {} : {
            tool_calls: calls.map((call) => ({
              id: call.id ?? fakeId("call_"),
              type: "function",
              function: { name: call.name, arguments: argumentsText(call) },
            })),
          }),
        },
        finish_reason: finishOf(turn),
      }],
      ...(usage === undefined ? {} : {
        usage: {
          prompt_tokens: usage.promptTokens,
          completion_tokens: usage.completionTokens,
          total_tokens: usage.promptTokens + usage.completionTokens,
        },
      }),
    });
  },

  modelsBody(models: readonly string[]): string {
    return openaiModelsBody(models);
  },
};
