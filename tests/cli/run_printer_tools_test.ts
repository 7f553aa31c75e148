// `amber run`'s tool lines: every call gets its `⚙` line (also a denied or unknown one, which
// only ends), reading as the interactive session's rows do; nothing on stderr lands inside the
// answer's line on stdout; streamed tool output is left to `--json`.

import assert from "node:assert/strict";
import type { ToolCall } from "@amber/core";
import { runPrinter } from "../../cli/commands/run_printer.ts";
import type { SessionEvent } from "../../cli/session/mod.ts";

// stdout and stderr in the order a terminal shows them.
function terminal() {
  const writes: string[] = [];
  const print = runPrinter({
    out: (text) => writes.push(text),
    err: (text) => writes.push(`${text}\n`),
  }, false);
  return { print, screen: () => writes.join("") };
}

const bash: ToolCall = { id: "call_0", name: "bash", arguments: '{"command":"cat ../x"}' };
const read: ToolCall = { id: "call_0", name: "read", arguments: '{"path":"notes.txt"}' };

Deno.test("a denied call gets its line, and the step's text stays on a line of its own", () => {
  const { print, screen } = terminal();
  const events: SessionEvent[] = [
    { type: "stepStart", step: 0 },
    { type: "text", delta: "Reading outside." },
    {
      type: "toolEnd",
      step: 0,
      call: bash,
      result: { ok: false, output: "", error: "the user denied 'bash'" },
      durationMs: 0,
    },
    { type: "stepEnd", step: 0 },
    { type: "stepStart", step: 1 },
    { type: "text", delta: "Running bash." },
    {
      type: "toolEnd",
      step: 1,
      call: { ...bash, name: "bsh" },
      result: { ok: false, output: "", error: "there is no tool 'bsh'" },
      durationMs: 0,
    },
    { type: "stepStart", step: 2 },
    { type: "text", delta: "Done." },
    { type: "end", cause: { kind: "completed" } },
  ];
  for (const event of events) print(event);
  assert.equal(
    screen(),
    [
      "Reading outside.",
      "⚙ bash",
      "  ✗ bash: the user denied 'bash'",
      "Running bash.",
      "⚙ bsh",
      "  ✗ bsh: there is no tool 'bsh'",
      "Done.",
      "",
    ].join("\n"),
  );
});

Deno.test("a call's line names the tool and what it is about; a repeated id is another call", () => {
  const { print, screen } = terminal();
  print({ type: "toolStart", step: 0, call: read, verb: "reading", summary: "read notes.txt" });
  print({ type: "toolOutput", step: 0, call: read, chunk: "streamed, not printed\n" });
  print({
    type: "toolEnd",
    step: 0,
    call: read,
    result: { ok: true, output: "x" },
    durationMs: 3.2,
  });
  // The next reply's call reuses the id: it never ran, and still gets its own line.
  print({
    type: "toolEnd",
    step: 1,
    call: bash,
    result: { ok: false, output: "", error: "the user denied 'bash'" },
    durationMs: 0,
  });
  print({ type: "toolStart", step: 2, call: bash, verb: "running", summary: "$ ls" });
  print({
    type: "toolEnd",
    step: 2,
    call: bash,
    result: { ok: true, output: "" },
    durationMs: 1500,
  });
  print({ type: "end", cause: { kind: "completed" } });
  assert.equal(
    screen(),
    [
      "⚙ read notes.txt",
      "  ✓ read (3 ms)",
      "⚙ bash",
      "  ✗ bash: the user denied 'bash'",
      "⚙ bash $ ls",
      "  ✓ bash (1.5 s)",
      "",
    ].join("\n"),
  );
});

Deno.test("--json carries a running tool's streamed output as events", () => {
  const lines: string[] = [];
  const print = runPrinter({ out: (t) => lines.push(t), err: () => {} }, true);
  print({ type: "toolOutput", step: 4, call: read, chunk: "line\x1b[2J\n" });
  assert.deepEqual(lines.map((line) => JSON.parse(line)), [
    { type: "toolOutput", step: 4, call: read, chunk: "line\x1b[2J\n" },
  ]);
  assert.equal(lines[0].includes("\x1b"), false, "escaped in the line");
});
