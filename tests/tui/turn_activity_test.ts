// The rule above the input while a turn runs: the turn's elapsed time, the tool running (with
// its summary, its progress, and for how long), and a streaming response's live tokens and rate;
// composed into the frame with the figures at the right end while there is room.

import assert from "node:assert/strict";
import { EMPTY_METER, meterDelta, meterEnd, meterStart } from "../../cli/tui/meter.ts";
import { Screen } from "../../cli/tui/screen.ts";
import { TurnActivity } from "../../cli/tui/turn_activity.ts";
import { composeFrame } from "./_frame.ts";

const call = (id: string, name = "bash") => ({ id, name, arguments: "{}" });

Deno.test("the label says the turn's time, and a streaming response's tokens and rate", () => {
  const activity = new TurnActivity();
  assert.deepEqual(activity.label(EMPTY_METER, 0), { doing: "", figures: "" });
  activity.start(10_000);
  let meter = meterStart(EMPTY_METER, 10_000);
  assert.deepEqual(activity.label(meter, 13_500), { doing: "", figures: "3s" });
  meter = meterDelta(meter, 40, 14_000);
  meter = meterDelta(meter, 400, 15_000);
  assert.deepEqual(activity.label(meter, 15_200), {
    doing: "",
    figures: "5s · ↓110 tok · 110 tok/s",
  });
  // Once the response ended its figures are the bar's, not the rule's.
  meter = meterEnd(meter, undefined, 15_000);
  assert.deepEqual(activity.label(meter, 75_000), { doing: "", figures: "1m 05s" });
  activity.end();
  assert.equal(activity.running, false);
  assert.deepEqual(activity.label(meter, 80_000), { doing: "", figures: "" });
});

Deno.test("the running tool: summary, progress, duration; calls told apart by step and id", () => {
  const activity = new TurnActivity();
  activity.start(0);
  activity.event({
    type: "toolStart",
    step: 0,
    call: call("call_0"),
    verb: "running",
    summary: "$ make",
  }, 1000);
  activity.event(
    { type: "toolProgress", step: 0, call: call("call_0"), message: "linking\nmore" },
    2000,
  );
  assert.equal(activity.label(EMPTY_METER, 4000).doing, "bash $ make (linking) 3s");
  activity.event({
    type: "toolEnd",
    step: 0,
    call: call("call_0"),
    result: { ok: true, output: "ok" },
    durationMs: 3000,
  }, 4000);
  assert.equal(activity.label(EMPTY_METER, 4000).doing, "");
  // The next reply reuses the id: its call is its own, and the end of an older one leaves it.
  activity.event({
    type: "toolStart",
    step: 1,
    call: call("call_0", "read"),
    verb: "reading",
    summary: "a.md",
  }, 5000);
  activity.event({
    type: "toolEnd",
    step: 0,
    call: call("call_0"),
    result: { ok: true, output: "ok" },
    durationMs: 1,
  }, 5500);
  assert.equal(activity.label(EMPTY_METER, 6000).doing, "read a.md 1s");
  activity.event({
    type: "toolStart",
    step: 1,
    call: call("call_1"),
    verb: "running",
    summary: "$ ls\x1b[2J",
  }, 6000);
  assert.equal(activity.label(EMPTY_METER, 6000).doing, "bash $ ls[2J 0s +1 more");
});

function frame(columns: number, turn: { doing: string; figures: string }): string {
  const screen = new Screen(columns, 6);
  composeFrame(screen, { turn: { ...turn, spinner: 0 } });
  return screen.rowText(3);
}

Deno.test("the rule carries the activity on the left and the figures at the right end", () => {
  const wide = frame(72, { doing: "bash $ make 3s", figures: "12s · ↓340 tok · 45 tok/s" });
  assert.match(wide, /^── ⠋ bash \$ make 3s · Ctrl-C cancels ─+ 12s · ↓340 tok · 45 tok\/s ──$/);
  assert.equal([...wide].length, 72);
  assert.match(frame(60, { doing: "", figures: "4s" }), /^── ⠋ working · Ctrl-C cancels ─+ 4s ──$/);
  // No room for both: the way to cancel stays, the figures go.
  const narrow = frame(40, { doing: "bash $ make 3s", figures: "12s · ↓340 tok · 45 tok/s" });
  assert.match(narrow, /Ctrl-C cancels/);
  assert.doesNotMatch(narrow, /tok/);
});
