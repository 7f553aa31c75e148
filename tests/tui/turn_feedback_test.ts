// The bar and the rule across turns, in-process: while the next answer has not begun, the bar
// shows none of the last answer's figures (its tokens, latency, rate), the rule says the turn's
// time; after /clear none of the old figures come back.

import assert from "node:assert/strict";
import { startTui } from "./_harness.ts";

const CTRL_C = "\x03";
const bar = (screen: string) => screen.trimEnd().split("\n").at(-1) ?? "";

Deno.test("a new answer's bar starts empty; the rule says the turn's time meanwhile", async () => {
  await using t = await startTui({
    turns: [
      { text: "first answer", usage: { promptTokens: 1200, completionTokens: 34 } },
      { text: "never seen", fault: { kind: "slowFirstByte", delayMs: 30_000 } },
    ],
  });
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("one\r");
  await t.waitFor((s) => /↑1\.2k ↓34/.test(bar(s)), "the first answer's figures");
  await t.idle();
  // The frame after the turn's end, so that the rule matched below is the next turn's.
  await t.waitFor((s) => !s.includes("Ctrl-C cancels"), "the first turn's rule to go");
  t.terminal.type("two\r");
  const waiting = await t.waitFor(/working · Ctrl-C cancels ─+ \d+s ──/, "the turn's time");
  assert.doesNotMatch(bar(waiting), /↓34|tok\/s|\d ms/, bar(waiting));
  // The rule may show before the request reaches the server on a loaded machine; once it has,
  // the bar must still be empty, as the answer's first byte is 30 s away.
  while (t.server.chats.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.doesNotMatch(bar(t.terminal.text()), /↓34|tok\/s|\d ms/);
  t.terminal.type(CTRL_C);
  await t.waitFor(/cancelled \(every committed step is kept\)/);
  await t.idle();
});

Deno.test("after /clear the bar shows none of the last conversation's figures", async () => {
  await using t = await startTui({
    turns: [{ text: "an answer", usage: { promptTokens: 1500, completionTokens: 40 } }],
  });
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("hi\r");
  const before = await t.waitFor((s) => /↑1\.5k ↓40/.test(bar(s)), "the answer's figures");
  assert.match(bar(before), /ctx|\d+ ms|tok\/s|↓40/);
  await t.idle();
  t.terminal.type("/clear\r");
  const after = await t.waitFor((s) => !s.includes("an answer"), "the cleared screen");
  assert.doesNotMatch(bar(after), /↑|↓|tok\/s|\d ms|ctx/, bar(after));
});

Deno.test("from the moment a prompt is sent, the bar shows none of the last answer's figures", async () => {
  await using t = await startTui({
    turns: [
      { text: "first answer", usage: { promptTokens: 1200, completionTokens: 34 } },
      { text: "second answer" },
    ],
  });
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("one\r");
  await t.waitFor((s) => /↑1\.2k ↓34/.test(bar(s)), "the first answer's figures");
  await t.idle();
  assert.equal(t.tui.app.snapshot().completionTokens, 34);
  // Synchronously, before the turn's first event (or its attachments) can arrive.
  t.terminal.type("two\r");
  const sent = t.tui.app.snapshot();
  assert.deepEqual([sent.completionTokens, sent.promptTokens, sent.tps, sent.latencyMs], [
    0,
    0,
    0,
    0,
  ]);
  await t.waitFor(/second answer/);
  await t.idle();
});
