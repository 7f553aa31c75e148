// Token usage on the OpenAI protocols (issue 14, costs): cache reads and reasoning tokens as
// OpenAI, DeepSeek and Moonshot report them on Chat Completions, and as the Responses API does.

import assert from "node:assert/strict";
import type { StreamEvent } from "@amber/core";
import { openaiDialect } from "../../providers/openai.ts";
import { openaiResponsesDialect } from "../../providers/openai_responses.ts";
import { decodeWith } from "./_e2e.ts";

/** The usage event of a Chat Completions stream whose last chunk reports `usage`. */
function chatUsage(usage: Record<string, unknown>): StreamEvent | undefined {
  const head = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
  const events = decodeWith(openaiDialect(), [
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: "ok" } }] })}\n\n`,
    `data: ${
      JSON.stringify({ ...head, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })
    }\n\n`,
    `data: ${JSON.stringify({ ...head, choices: [], usage })}\n\n`,
    "data: [DONE]\n\n",
  ]);
  return events.find((event) => event.type === "usage");
}

Deno.test("openai usage: cache reads and reasoning tokens from OpenAI's details", () => {
  assert.deepEqual(
    chatUsage({
      prompt_tokens: 2006,
      completion_tokens: 300,
      total_tokens: 2306,
      prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 192, audio_tokens: 0 },
    }),
    {
      type: "usage",
      promptTokens: 2006,
      completionTokens: 300,
      cachedTokens: 1920,
      reasoningTokens: 192,
    },
  );
});

Deno.test("openai usage: DeepSeek's cache hits are the cache reads", () => {
  assert.deepEqual(
    chatUsage({
      prompt_tokens: 1310,
      completion_tokens: 58,
      total_tokens: 1368,
      prompt_cache_hit_tokens: 1152,
      prompt_cache_miss_tokens: 158,
      completion_tokens_details: { reasoning_tokens: 31 },
    }),
    {
      type: "usage",
      promptTokens: 1310,
      completionTokens: 58,
      cachedTokens: 1152,
      reasoningTokens: 31,
    },
  );
  // Without a prompt total, hits and misses add up to it.
  assert.deepEqual(
    chatUsage({ completion_tokens: 5, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 6 }),
    { type: "usage", promptTokens: 70, completionTokens: 5, cachedTokens: 64 },
  );
});

Deno.test("openai usage: Moonshot's cached_tokens beside the totals", () => {
  assert.deepEqual(
    chatUsage({ prompt_tokens: 900, completion_tokens: 12, total_tokens: 912, cached_tokens: 768 }),
    { type: "usage", promptTokens: 900, completionTokens: 12, cachedTokens: 768 },
  );
});

Deno.test("openai usage: a server that reports no details reports none", () => {
  assert.deepEqual(
    chatUsage({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }),
    { type: "usage", promptTokens: 9, completionTokens: 2 },
  );
});

Deno.test("responses usage: cache reads and reasoning tokens from the details", () => {
  const completed = {
    type: "response.completed",
    response: {
      id: "resp_1",
      status: "completed",
      output: [],
      usage: {
        input_tokens: 5120,
        input_tokens_details: { cached_tokens: 4864 },
        output_tokens: 410,
        output_tokens_details: { reasoning_tokens: 256 },
        total_tokens: 5530,
      },
    },
  };
  const events = decodeWith(openaiResponsesDialect(), [
    `event: response.completed\ndata: ${JSON.stringify(completed)}\n\n`,
  ]);
  assert.deepEqual(events, [
    {
      type: "usage",
      promptTokens: 5120,
      completionTokens: 410,
      cachedTokens: 4864,
      reasoningTokens: 256,
    },
    { type: "finish", reason: "stop", raw: "completed" },
  ]);
});
