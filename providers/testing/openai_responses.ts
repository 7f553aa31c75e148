/**
 * The server side of the OpenAI Responses API, byte for byte as OpenAI streams it.
 *
 * @module
 */

import { sseFrame, type WireEncoder } from "./encoder.ts";
import { openaiEncoder } from "./openai.ts";
import { argumentsText, chunkText, finishOf, type ScriptedTurn } from "./script.ts";

// Ids only need to be unique within a process; a counter keeps runs reproducible.
let sequence = 0;

function fakeId(prefix: string): string {
  sequence++;
  return `${prefix}fake${sequence.toString(36).padStart(8, "0")}`;
}

/**
 * The OpenAI Responses API as the fake provider's wire protocol. Each frame is
 * `event: <type>` plus `data:` with the same `type` and a running `sequence_number`:
 * `response.created`, `response.in_progress`; a reasoning item streaming its summary; a message
 * item (`output_item.added`, `content_part.added`, `output_text.delta`..., `output_text.done`,
 * `content_part.done`, `output_item.done`); one `function_call` item per tool call with its
 * `function_call_arguments.delta`... and `.done`; then `response.completed` with usage, or
 * `response.incomplete` (finish `length` or `content_filter`), or `response.failed` (finish
 * `error`). The in-stream error is an `error` event. Error bodies and the models listing are
 * OpenAI's.
 *
 * @example
 * ```ts
 * import { openaiResponsesEncoder } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * const frames = openaiResponsesEncoder.frames({ text: "Hi" }, "gpt-5");
 * assert.equal(frames[0].split("\n")[0], "event: response.created");
 * assert.equal(frames.at(-1)!.split("\n")[0], "event: response.completed");
 * ```
 */
export const openaiResponsesEncoder: WireEncoder = {
  flavor: "openai_responses",

  frames(turn: ScriptedTurn, model: string): string[] {
    const size = turn.chunkSize ?? 8;
    const frames: string[] = [];
    let seq = 0;
    const emit = (type: string, fields: Record<string, unknown>): void => {
      frames.push(sseFrame({ type, ...fields, sequence_number: seq++ }, type));
    };
    const responseId = fakeId("resp_");
    const createdAt = Math.floor(Date.now() / 1000);
    const response = (
      status: string,
      output: unknown[],
      extra: Record<string, unknown> = {},
    ): Record<string, unknown> => ({
      id: responseId,
      object: "response",
      created_at: createdAt,
      status,
      background: false,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model,
      output,
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: false,
      temperature: 1,
      text: { format: { type: "text" } },
      tool_choice: "auto",
      tools: [],
      top_p: 1,
      truncation: "disabled",
      usage: null,
      user: null,
      metadata: {},
      ...extra,
    });

    emit("response.created", { response: response("in_progress", []) });
    emit("response.in_progress", { response: response("in_progress", []) });

    const output: unknown[] = [];
    if (turn.reasoning) {
      const output_index = output.length;
      const item_id = fakeId("rs_");
      const text = turn.reasoning;
      emit("response.output_item.added", {
        item: { id: item_id, type: "reasoning", summary: [] },
        output_index,
      });
      const part = { type: "summary_text", text: "" };
      emit("response.reasoning_summary_part.added", {
        item_id,
        output_index,
        part,
        summary_index: 0,
      });
      for (const delta of chunkText(text, size)) {
        emit("response.reasoning_summary_text.delta", {
          delta,
          item_id,
          output_index,
          summary_index: 0,
        });
      }
      emit("response.reasoning_summary_text.done", {
        item_id,
        output_index,
        summary_index: 0,
        text,
      });
      emit("response.reasoning_summary_part.done", {
        item_id,
        output_index,
        part: { type: "summary_text", text },
        summary_index: 0,
      });
      const item = { id: item_id, type: "reasoning", summary: [{ type: "summary_text", text }] };
      emit("response.output_item.done", { item, output_index });
      output.push(item);
    }

    if (turn.text) {
      const output_index = output.length;
      const item_id = fakeId("msg_");
      const text = turn.text;
      emit("response.output_item.added", {
        item: {
          id: item_id,
          type: "message",
          status: "in_progress",
          content: [],
          role: "assistant",
        },
        output_index,
      });
      emit("response.content_part.added", {
        item_id,
        output_index,
        content_index: 0,
        part: { type: "output_text", annotations: [], logprobs: [], text: "" },
      });
      for (const delta of chunkText(text, size)) {
        emit("response.output_text.delta", {
          item_id,
          output_index,
          content_index: 0,
          delta,
          logprobs: [],
        });
      }
      emit("response.output_text.done", {
        item_id,
        output_index,
        content_index: 0,
        text,
        logprobs: [],
      });
      const part = { type: "output_text", annotations: [], logprobs: [], text };
      emit("response.content_part.done", { item_id, output_index, content_index: 0, part });
      const item = {
        id: item_id,
        type: "message",
        status: "completed",
        content: [part],
        role: "assistant",
      };
      emit("response.output_item.done", { item, output_index });
      output.push(item);
    }

    for (const call of turn.toolCalls ?? []) {
      const output_index = output.length;
      const item_id = fakeId("fc_");
      const call_id = call.id ?? fakeId("call_");
      const args = argumentsText(call);
      emit("response.output_item.added", {
        item: {
          id: item_id,
          type: "function_call",
          status: "in_progress",
          arguments: "",
          call_id,
          name: call.name,
        },
        output_index,
      });
      for (const delta of chunkText(args, size)) {
        emit("response.function_call_arguments.delta", { delta, item_id, output_index });
      }
      emit("response.function_call_arguments.done", { arguments: args, item_id, output_index });
      const item = {
        id: item_id,
        type: "function_call",
        status: "completed",
        arguments: args,
        call_id,
        name: call.name,
      };
      emit("response.output_item.done", { item, output_index });
      output.push(item);
    }

    const usage = turn.usage === undefined ? null : {
      input_tokens: turn.usage.promptTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: turn.usage.completionTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: turn.usage.promptTokens + turn.usage.completionTokens,
    };
    const finish = finishOf(turn);
    if (finish === "error") {
      emit("response.failed", {
        response: response("failed", output, {
          error: { code: "server_error", message: "The model failed to generate a response." },
          usage,
        }),
      });
    } else if (finish === "length" || finish === "content_filter" || finish === "other") {
      const reason = finish === "length" ? "max_output_tokens" : finish;
      emit("response.incomplete", {
        response: response("incomplete", output, { incomplete_details: { reason }, usage }),
      });
    } else {
      emit("response.completed", { response: response("completed", output, { usage }) });
    }
    return frames;
  },

  errorBody(status: number, message: string): string {
    return openaiEncoder.errorBody(status, message);
  },

  streamErrorFrame(message: string): string {
    // As recorded from OpenAI: the error nested under `error`. Its sequence number is left out:
    // the server splices this frame in, so the encoder does not know where it lands.
    return sseFrame(
      {
        type: "error",
        error: { type: "server_error", code: "server_error", message, param: null },
      },
      "error",
    );
  },

  modelsBody(models: readonly string[]): string {
    return openaiEncoder.modelsBody(models);
  },
};
