// The bar while a turn runs, composed as the TUI composes it (the session's status registry,
// the live figures through StatusFeed): a streaming response's own tokens and rate, and after a
// new response starts or the conversation is forgotten, none of the last one's.

import assert from "node:assert/strict";
import type { StatusSnapshot } from "@amber/core";
import type { SessionEvent } from "../../cli/session/mod.ts";
import { plainText } from "../../cli/tui/lines.ts";
import { forgetConversation, INITIAL_VIEW, reduce, type ViewState } from "../../cli/tui/reducer.ts";
import { composeStatus, StatusFeed, TUI_SEGMENTS } from "../../cli/tui/status_line.ts";
import { openFakeSession } from "../cli/_fake_session.ts";

function feed(state: ViewState, events: readonly [SessionEvent, number][]): ViewState {
  for (const [event, now] of events) state = reduce(state, event, now).state;
  return state;
}

function segment(name: string, snapshot: StatusSnapshot): string {
  const found = TUI_SEGMENTS.find((s) => s.name === name);
  assert.ok(found, name);
  return found.render(snapshot).text;
}

Deno.test("the bar shows the streaming response's live tokens and rate, never the last one's", async () => {
  await using fake = await openFakeSession([]);
  const status = new StatusFeed(fake.session, () => {});
  status.refresh();
  const registry = fake.session.host.registries.status;
  const bar = (state: ViewState) => {
    const snapshot = status.snapshot({
      scrollMode: false,
      meter: state.meter,
      runningTool: state.runningTool,
      ...(state.prompt === undefined ? {} : { prompt: state.prompt }),
    });
    return {
      text: plainText(composeStatus(registry, 160, snapshot)),
      latency: segment("latency", snapshot),
      tps: segment("tps", snapshot),
    };
  };

  const first = feed(INITIAL_VIEW, [
    [{ type: "stepStart", step: 0 }, 0],
    [{ type: "request", step: 0, tokens: 800 }, 5],
    [{ type: "text", delta: "x".repeat(200) }, 400],
    [{ type: "text", delta: "x".repeat(200) }, 1400],
  ]);
  const streaming = bar(first);
  assert.match(streaming.text, /↑800 ↓100/);
  assert.equal(streaming.latency, "395 ms");
  assert.equal(streaming.tps, "100 tok/s");

  const ended = feed(first, [[{
    type: "stepEnd",
    step: 0,
    usage: { promptTokens: 1500, completionTokens: 90 },
  }, 1400]]);
  assert.match(bar(ended).text, /↑1\.5k ↓90/);

  // The next response: nothing until its first delta, then its own figures.
  const next = reduce(ended, { type: "stepStart", step: 1 }, 2000).state;
  assert.doesNotMatch(bar(next).text, /↓/);
  assert.deepEqual([bar(next).latency, bar(next).tps], ["", ""]);
  const nextStreaming = feed(next, [
    [{ type: "request", step: 1, tokens: 1700 }, 2005],
    [{ type: "text", delta: "y".repeat(8) }, 2100],
  ]);
  assert.match(bar(nextStreaming).text, /↑1\.7k ↓2/);
  assert.equal(bar(nextStreaming).latency, "95 ms");

  // /clear: none of it.
  const cleared = bar(forgetConversation(ended));
  assert.doesNotMatch(cleared.text, /↑|↓/);
  assert.deepEqual([cleared.latency, cleared.tps], ["", ""]);
});
