// The response meter through the reducer: live figures while a response streams (estimated from
// its deltas, then the provider's usage), and none of the last response's passed off as current
// once a new response starts or the conversation is forgotten.

import assert from "node:assert/strict";
import { meterStreaming } from "../../cli/tui/meter.ts";
import { forgetConversation, INITIAL_VIEW, reduce, type ViewState } from "../../cli/tui/reducer.ts";
import type { SessionEvent } from "../../cli/session/mod.ts";

function feed(state: ViewState, events: readonly [SessionEvent, number][]): ViewState {
  for (const [event, now] of events) state = reduce(state, event, now).state;
  return state;
}

const USAGE = { promptTokens: 1200, completionTokens: 300 };

// A finished response: 300 tokens over 2 s of streaming.
function afterOneResponse(): ViewState {
  return feed(INITIAL_VIEW, [
    [{ type: "stepStart", step: 0 }, 0],
    [{ type: "request", step: 0, tokens: 1100 }, 10],
    [{ type: "text", delta: "x".repeat(40) }, 500],
    [{ type: "stepEnd", step: 0, usage: USAGE }, 2500],
  ]);
}

Deno.test("while a response streams, its tokens and rate are live, estimated from the deltas", () => {
  let state = feed(INITIAL_VIEW, [
    [{ type: "stepStart", step: 0 }, 1000],
    [{ type: "request", step: 0, tokens: 800 }, 1010],
    [{ type: "reasoning", delta: "a".repeat(40) }, 1300],
  ]);
  assert.equal(state.meter.latencyMs, 290, "from the request to the first delta");
  assert.equal(state.meter.completionTokens, 10);
  assert.equal(state.meter.promptTokens, 800, "the request's estimate until usage says");
  assert.equal(state.meter.tps, 0, "no rate from a single delta");
  state = feed(state, [
    [{ type: "text", delta: "b".repeat(160) }, 2300],
    [{ type: "toolCallStart", index: 0, id: "c1", name: "read" }, 2300],
    [{ type: "toolCallDelta", index: 0, delta: '{"path":"a.md"}' }, 2300],
  ]);
  // 40 + 160 text characters, 4 of the name and 15 of arguments: 219 characters, 55 tokens.
  assert.equal(state.meter.completionTokens, 55);
  assert.equal(state.meter.tps, 55);
});

Deno.test("usage reported mid-stream replaces the estimate, and later deltas add to it", () => {
  const state = feed(INITIAL_VIEW, [
    [{ type: "stepStart", step: 0 }, 0],
    [{ type: "text", delta: "x".repeat(400) }, 100],
    [{ type: "usage", promptTokens: 900, completionTokens: 70 }, 100],
    [{ type: "text", delta: "y".repeat(40) }, 1100],
  ]);
  assert.deepEqual(
    [state.meter.promptTokens, state.meter.completionTokens, state.meter.tps],
    [900, 80, 80],
  );
});

Deno.test("a new response shows none of the last one's figures until its own arrive", () => {
  const done = afterOneResponse();
  assert.deepEqual(
    [done.meter.latencyMs, done.meter.completionTokens, done.meter.tps],
    [490, 300, 150],
  );
  let state = reduce(done, { type: "stepStart", step: 1 }, 3000).state;
  assert.deepEqual(
    [
      state.meter.latencyMs,
      state.meter.promptTokens,
      state.meter.completionTokens,
      state.meter.tps,
    ],
    [0, 0, 0, 0],
  );
  state = reduce(state, { type: "text", delta: "abcd" }, 3400).state;
  assert.deepEqual([state.meter.latencyMs, state.meter.completionTokens], [400, 1]);
});

Deno.test("a response without usage keeps its own estimate, not the last response's counts", () => {
  const state = feed(afterOneResponse(), [
    [{ type: "stepStart", step: 1 }, 3000],
    [{ type: "text", delta: "z".repeat(80) }, 3200],
    [{ type: "stepEnd", step: 1 }, 4200],
  ]);
  assert.deepEqual([state.meter.completionTokens, state.meter.tps], [20, 20]);
  assert.equal(state.meter.started, undefined);
});

Deno.test("a forgotten conversation (/clear, /resume) leaves no figure, even mid-response", () => {
  const streaming = feed(afterOneResponse(), [
    [{ type: "stepStart", step: 1 }, 3000],
    [{ type: "text", delta: "z".repeat(80) }, 3200],
  ]);
  for (const state of [afterOneResponse(), streaming]) {
    const forgotten = forgetConversation(state);
    assert.deepEqual(forgotten.meter, INITIAL_VIEW.meter);
    assert.equal(forgotten.prompt, undefined);
    // A late delta of the old response does not bring figures back.
    const late = reduce(forgotten, { type: "text", delta: "more" }, 3300).state;
    assert.equal(late.meter.completionTokens, 0);
  }
});

Deno.test("once the stream finishes the figures stop being live; the rate leaves out tool time", () => {
  const finished = feed(INITIAL_VIEW, [
    [{ type: "stepStart", step: 0 }, 0],
    [{ type: "request", step: 0, tokens: 900 }, 0],
    [{ type: "text", delta: "x".repeat(400) }, 100],
    [{ type: "text", delta: "x".repeat(400) }, 1100],
    [{ type: "finish", reason: "tool_calls" }, 1100],
  ]);
  assert.equal(meterStreaming(finished.meter), false);
  // OpenAI reports usage after the finish reason; it still counts.
  const reported = feed(finished, [
    [{ type: "usage", promptTokens: 950, completionTokens: 180 }, 1110],
  ]);
  assert.deepEqual([reported.meter.completionTokens, reported.meter.tps], [180, 180]);
  // The step's tool runs nine seconds before the step ends.
  const ended = reduce(reported, {
    type: "stepEnd",
    step: 0,
    usage: { promptTokens: 950, completionTokens: 180 },
  }, 10_100).state;
  assert.deepEqual([ended.meter.completionTokens, ended.meter.tps], [180, 180]);
  // A retry's request starts the response over.
  const retried = feed(INITIAL_VIEW, [
    [{ type: "stepStart", step: 0 }, 0],
    [{ type: "request", step: 0, tokens: 900 }, 0],
    [{ type: "text", delta: "x".repeat(40) }, 100],
    [{ type: "error", message: "overloaded", retryable: true }, 200],
    [{ type: "request", step: 0, tokens: 900 }, 3000],
  ]);
  assert.deepEqual([retried.meter.completionTokens, retried.meter.latencyMs], [0, 0]);
  assert.equal(reduce(retried, { type: "text", delta: "y" }, 3250).state.meter.latencyMs, 250);
});
