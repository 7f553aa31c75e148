// Context overflow on the OpenAI protocols (issue 14): the kernel compacts and retries once
// when an error says the request does not fit the model's window, so both dialects must know
// the wordings of OpenAI and of the servers that speak its protocols, and say no to the rest.
//
// fixtures/openai/context_overflow.json holds error bodies in each server's documented shape;
// the two .sse fixtures are streams that fail with an overflow after they started.

import assert from "node:assert/strict";
import type { StreamEvent } from "@amber/core";
import { openaiDialect } from "../../providers/openai.ts";
import { openaiResponsesDialect } from "../../providers/openai_responses.ts";
import { decodeWith, errorOf } from "./_e2e.ts";

interface Case {
  readonly server: string;
  readonly status: number;
  readonly overflow: boolean;
  readonly body: string;
}

const fixture = (name: string): Promise<string> =>
  Deno.readTextFile(new URL(`./fixtures/openai/${name}`, import.meta.url));

const CASES: readonly Case[] = JSON.parse(await fixture("context_overflow.json"));

Deno.test("openai overflow: each server's wording is recognised, other errors are not", () => {
  assert.ok(CASES.filter((c) => c.overflow).length >= 10);
  for (const dialect of [openaiDialect(), openaiResponsesDialect()]) {
    for (const { server, status, overflow, body } of CASES) {
      assert.equal(
        dialect.isContextOverflow(status, body),
        overflow,
        `${dialect.flavor}: ${server}`,
      );
    }
  }
});

Deno.test("openai overflow: a 429 is a rate limit even when its words match", () => {
  const body = '{"error":{"message":"maximum context length reached for this minute","code":"x"}}';
  assert.equal(openaiDialect().isContextOverflow(429, body), false);
  assert.equal(openaiDialect().isContextOverflow(400, body), true);
});

Deno.test("openai overflow: a Responses stream that fails for the window says so", async () => {
  const events = decodeWith(openaiResponsesDialect(), [
    await fixture("responses_window_exceeded.sse"),
  ]);
  const error = errorOf(events);
  assert.equal(error.contextOverflow, true);
  assert.equal(error.retryable, false);
  assert.match(error.message, /context_length_exceeded: Your input exceeds the context window/);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "error" });
});

Deno.test("openai overflow: a Chat Completions stream that fails for the window says so", async () => {
  const events = decodeWith(openaiDialect(), [await fixture("chat_window_exceeded.sse")]);
  const error: Extract<StreamEvent, { type: "error" }> = errorOf(events);
  assert.equal(error.contextOverflow, true);
  assert.equal(error.status, 400);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "error" });
});

Deno.test("openai overflow: other in-stream errors carry no overflow flag", () => {
  const events = decodeWith(openaiDialect(), [
    'data: {"error":{"message":"The server had an error","type":"server_error"}}\n\n',
  ]);
  assert.equal("contextOverflow" in errorOf(events), false);
});
