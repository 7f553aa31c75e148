/**
 * The Anthropic Messages server side of the fake provider, shaped like recorded streams:
 * `message_start` with usage, a `ping`, content blocks (thinking with its signature, text,
 * tool_use with the input JSON in chunks), `message_delta` with the stop reason and cumulative
 * usage, `message_stop`.
 *
 * @module
 */

import type { FinishReason } from "@amber/core";
import { sseFrame, type WireEncoder } from "./encoder.ts";
import { argumentsText, chunkText, finishOf, type ScriptedTurn } from "./script.ts";

const STOP_REASONS: { readonly [reason in FinishReason]: string } = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  content_filter: "refusal",
  other: "pause_turn",
  error: "end_turn",
};

function errorType(status: number): string {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 402:
      return "billing_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 504:
      return "timeout_error";
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

function frame(data: { readonly type: string; readonly [key: string]: unknown }): string {
  return sseFrame(data, data.type);
}

function errorFrame(message: string): string {
  return frame({ type: "error", error: { type: "overloaded_error", message } });
}

/**
 * Anthropic's wire, byte for byte. A turn that finishes with `error` ends with an
 * `overloaded_error` event instead of `message_delta`/`message_stop`; `other` is sent as
 * `pause_turn`.
 *
 * @example
 * ```ts
 * import { anthropicEncoder } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * const frames = anthropicEncoder.frames({ text: "Hi" }, "claude-test");
 * assert.ok(frames[0].startsWith("event: message_start\ndata: "));
 * assert.equal(frames.at(-1), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
 * ```
 */
export const anthropicEncoder: WireEncoder = {
  flavor: "anthropic",

  frames(turn: ScriptedTurn, model: string): string[] {
    const size = turn.chunkSize ?? 8;
    const usage = turn.usage ?? { promptTokens: 0, completionTokens: 0 };
    const frames: string[] = [
      frame({
        type: "message_start",
        message: {
          id: "msg_fake_01",
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: usage.promptTokens,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: Math.min(1, usage.completionTokens),
          },
        },
      }),
    ];
    let index = 0;
    const start = (block: Record<string, unknown>): void => {
      frames.push(frame({ type: "content_block_start", index, content_block: block }));
      // Recorded streams carry a ping right after the first block starts.
      if (index === 0) frames.push(frame({ type: "ping" }));
    };
    const stop = (): void => {
      frames.push(frame({ type: "content_block_stop", index }));
      index++;
    };
    if (turn.reasoning) {
      start({ type: "thinking", thinking: "", signature: "" });
      for (const piece of chunkText(turn.reasoning, size)) {
        frames.push(frame({
          type: "content_block_delta",
          index,
          delta: { type: "thinking_delta", thinking: piece },
        }));
      }
      frames.push(frame({
        type: "content_block_delta",
        index,
        delta: { type: "signature_delta", signature: "RmFrZVNpZ25hdHVyZQ==" },
      }));
      stop();
    }
    if (turn.text) {
      start({ type: "text", text: "" });
      for (const piece of chunkText(turn.text, size)) {
        frames.push(frame({
          type: "content_block_delta",
          index,
          delta: { type: "text_delta", text: piece },
        }));
      }
      stop();
    }
    for (const call of turn.toolCalls ?? []) {
      const id = call.id ?? `toolu_fake_${String(index).padStart(2, "0")}`;
      start({ type: "tool_use", id, name: call.name, input: {} });
      // The API opens every tool block with an empty fragment.
      const pieces = ["", ...chunkText(argumentsText(call), size)];
      for (const piece of pieces) {
        frames.push(frame({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: piece },
        }));
      }
      stop();
    }
    const finish = finishOf(turn);
    if (finish === "error") {
      frames.push(errorFrame("Overloaded"));
      return frames;
    }
    frames.push(frame({
      type: "message_delta",
      delta: { stop_reason: STOP_REASONS[finish], stop_sequence: null },
      usage: { output_tokens: usage.completionTokens },
    }));
    frames.push(frame({ type: "message_stop" }));
    return frames;
  },

  errorBody(status: number, message: string): string {
    return JSON.stringify({
      type: "error",
      error: { type: errorType(status), message },
      request_id: "req_fake_01",
    });
  },

  streamErrorFrame(message: string): string {
    return errorFrame(message);
  },

  modelsBody(models: readonly string[]): string {
    const data = models.map((id) => ({
      type: "model",
      id,
      display_name: id,
      created_at: "2025-01-01T00:00:00Z",
    }));
    return JSON.stringify({
      data,
      has_more: false,
      first_id: models[0] ?? null,
      last_id: models.at(-1) ?? null,
    });
  },
};
