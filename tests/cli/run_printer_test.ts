// `amber run`'s text output: each step's text on lines of its own, and the model's reasoning shown
// (dimmed) only where the printer is told stdout is a terminal.

import assert from "node:assert/strict";
import { runPrinter } from "../../cli/commands/run_printer.ts";

function capture(options?: Parameters<typeof runPrinter>[2]) {
  const out: string[] = [];
  const err: string[] = [];
  const print = runPrinter({ out: (t) => out.push(t), err: (t) => err.push(t) }, false, options);
  return { print, out, err, stdout: () => out.join("") };
}

Deno.test("each step's text starts on a line of its own, also after a step that printed no tool line", () => {
  const { print, stdout } = capture();
  print({ type: "stepStart", step: 0 });
  print({ type: "text", delta: "Reading outside." });
  print({ type: "stepEnd", step: 0 });
  print({ type: "stepStart", step: 1 });
  print({ type: "text", delta: "Running bash." });
  print({ type: "stepStart", step: 2 });
  print({ type: "text", delta: "Done." });
  print({ type: "end", cause: { kind: "completed" } });
  assert.equal(stdout(), "Reading outside.\nRunning bash.\nDone.\n");
});

Deno.test("reasoning is left out unless asked for, then dimmed on lines of its own", () => {
  const plain = capture();
  plain.print({ type: "reasoning", delta: "thinking about it" });
  plain.print({ type: "text", delta: "The answer." });
  plain.print({ type: "end", cause: { kind: "completed" } });
  assert.equal(plain.stdout(), "The answer.\n");

  const dim = capture({ reasoning: "dim" });
  dim.print({ type: "reasoning", delta: "thinking " });
  dim.print({ type: "reasoning", delta: "about it" });
  dim.print({ type: "text", delta: "The answer." });
  dim.print({ type: "end", cause: { kind: "completed" } });
  assert.equal(dim.stdout(), "\x1b[2mthinking about it\x1b[22m\nThe answer.\n");

  const noColor = capture({ reasoning: "plain" });
  noColor.print({ type: "reasoning", delta: "thinking\x1b]52;c;Zm9v\x07" });
  noColor.print({ type: "text", delta: "Answer." });
  noColor.print({ type: "end", cause: { kind: "completed" } });
  // Reasoning as plain text, its control characters removed (no escape reaches the terminal).
  assert.equal(noColor.stdout(), "thinking]52;c;Zm9v\nAnswer.\n");
});

Deno.test("a compaction is said on stderr, stdout keeping the answer alone; --json writes its events", () => {
  const text = capture();
  text.print({ type: "text", delta: "Part one." });
  text.print({
    type: "compactionStarted",
    reason: "auto",
    tokens: 9000,
    budget: 10_000,
    threshold: 8500,
  });
  text.print({
    type: "compactionFinished",
    reason: "auto",
    success: false,
    tokensBefore: 9000,
    tokensAfter: 9000,
    message: "vetoed by a hook",
  });
  text.print({ type: "request", step: 1, tokens: 9000, contextWindow: 10_000 });
  text.print({ type: "usage", promptTokens: 9000, completionTokens: 3, cost: 0.02 });
  text.print({ type: "text", delta: "Part two." });
  text.print({ type: "end", cause: { kind: "completed" } });
  assert.equal(text.stdout(), "Part one.\nPart two.\n");
  assert.deepEqual(text.err, [
    "amber: compacting the conversation: 9.0k tokens, past 85% of the 10.0k-token window",
    "amber: the conversation was not compacted: vetoed by a hook",
  ]);

  const out: string[] = [];
  const json = runPrinter({ out: (t) => out.push(t), err: () => {} }, true);
  json({ type: "compactionStarted", reason: "manual", tokens: 900, budget: 0, threshold: 0 });
  json({ type: "usage", promptTokens: 10, completionTokens: 1, cost: 0.5 });
  assert.deepEqual(out.map((line) => JSON.parse(line)), [
    { type: "compactionStarted", reason: "manual", tokens: 900, budget: 0, threshold: 0 },
    { type: "usage", promptTokens: 10, completionTokens: 1, cost: 0.5 },
  ]);
});
