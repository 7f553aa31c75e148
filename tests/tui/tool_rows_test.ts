// Tool rows in the transcript: each belongs to its turn and step (call ids repeat across
// replies), reads naturally (`⚙ read notes.txt`), shows the output a running call streams and
// keeps it after a cancel, expands and collapses, and shows the diff of the file a call changed.

import assert from "node:assert/strict";
import type { ToolCall } from "@amber/core";
import {
  applyChanges,
  INITIAL_VIEW,
  reduce,
  type ViewState,
  withLabel,
} from "../../cli/tui/reducer.ts";
import type { SessionEvent } from "../../cli/session/mod.ts";
import { plainText } from "../../cli/tui/lines.ts";
import { PanelView } from "../../cli/tui/panel_view.ts";
import { Screen } from "../../cli/tui/screen.ts";
import { ToolRow } from "../../cli/tui/tool_row.ts";
import { toolTitle } from "../../cli/tui/tool_title.ts";
import { toolLabel, TranscriptView } from "../../cli/tui/transcript_view.ts";
import { openFakeSession } from "../cli/_fake_session.ts";

const bash = (id: string, command: string): ToolCall => ({
  id,
  name: "bash",
  arguments: JSON.stringify({ command }),
});
const label = (call: ToolCall) => ({
  verb: "running",
  summary: `$ ${JSON.parse(call.arguments).command}`,
});

// The TUI's path from session events to the transcript: the reducer, then its changes.
function feed(view: TranscriptView, events: readonly SessionEvent[], start = INITIAL_VIEW) {
  let state: ViewState = start;
  for (const event of events) {
    const next = reduce(state, event, 0);
    state = next.state;
    applyChanges(view, next.changes, label);
  }
  return state;
}

function screen(view: TranscriptView, width = 60): string[] {
  return view.view(width, 200, 0).map(plainText);
}

function turnOf(step: number, call: ToolCall, output: string): SessionEvent[] {
  return [
    { type: "stepStart", step },
    { type: "toolStart", step, call, verb: "running", summary: label(call).summary },
    { type: "toolEnd", step, call, result: { ok: true, output }, durationMs: 12 },
    { type: "stepEnd", step },
    { type: "stepStart", step: step + 1 },
    { type: "text", delta: `ran ${output}` },
    { type: "stepEnd", step: step + 1 },
    { type: "end", cause: { kind: "completed" } },
  ];
}

Deno.test("two turns whose calls share an id each keep their own row, under their own prompt", () => {
  const view = new TranscriptView();
  view.addUser("first");
  feed(view, turnOf(0, bash("call_0", "echo one"), "one"));
  view.addUser("second");
  feed(view, turnOf(2, bash("call_0", "rm notes.txt"), "removed"));
  assert.deepEqual(screen(view), [
    "› first",
    "",
    "⚙ bash $ echo one",
    "  ✓ one  (12 ms)",
    "",
    "ran one",
    "",
    "› second",
    "",
    "⚙ bash $ rm notes.txt",
    "  ✓ removed  (12 ms)",
    "",
    "ran removed",
  ]);
});

Deno.test("within a turn, the same id in two steps is two calls", () => {
  const view = new TranscriptView();
  view.addUser("go");
  const first = bash("call_0", "ls");
  const second = bash("call_0", "pwd");
  feed(view, [
    { type: "toolStart", step: 0, call: first, verb: "running", summary: "$ ls" },
    { type: "toolEnd", step: 0, call: first, result: { ok: true, output: "a" }, durationMs: 2 },
    { type: "toolStart", step: 1, call: second, verb: "running", summary: "$ pwd" },
    { type: "toolEnd", step: 1, call: second, result: { ok: true, output: "/w" }, durationMs: 3 },
  ]);
  assert.deepEqual(screen(view).slice(2), [
    "⚙ bash $ ls",
    "  ✓ a  (2 ms)",
    "⚙ bash $ pwd",
    "  ✓ /w  (3 ms)",
  ]);
});

Deno.test("an approval's label does not outlive its turn", () => {
  const view = new TranscriptView();
  view.addUser("first");
  // Asked about, then the turn ended without the call's end (its end never came).
  let state = withLabel(INITIAL_VIEW, "call_0", { verb: "running", summary: "$ rm -rf build" });
  state = feed(view, [{ type: "end", cause: { kind: "cancelled" } }], state);
  assert.equal(state.labels.size, 0);
  view.addUser("second");
  const denied = bash("call_0", "ls");
  feed(view, [{
    type: "toolEnd",
    step: 3,
    call: denied,
    result: { ok: false, output: "", error: "the user denied 'bash'" },
    durationMs: 0,
  }], state);
  assert.deepEqual(screen(view).slice(-2), ["⚙ bash $ ls", "  ✗ the user denied 'bash'"]);
});

Deno.test("a resumed conversation puts each row under its own prompt, even with repeated ids", () => {
  const view = new TranscriptView();
  view.replay([
    { role: "user", content: "first" },
    { role: "assistant", content: "", toolCalls: [bash("call_0", "echo one")] },
    { role: "tool", toolCallId: "call_0", name: "bash", content: "one" },
    { role: "assistant", content: "ran one" },
    { role: "user", content: "second" },
    { role: "assistant", content: "", toolCalls: [bash("call_0", "echo two")] },
    { role: "tool", toolCallId: "call_0", name: "bash", content: "two" },
    { role: "assistant", content: "", toolCalls: [bash("call_0", "echo three")] },
    {
      role: "tool",
      toolCallId: "call_0",
      name: "bash",
      content: "error: the user denied 'bash'",
      isError: true,
    },
    { role: "assistant", content: "done" },
  ], label);
  assert.deepEqual(screen(view), [
    "› first",
    "",
    "⚙ bash $ echo one",
    "  ✓ one",
    "",
    "ran one",
    "",
    "› second",
    "",
    "⚙ bash $ echo two",
    "  ✓ two",
    "⚙ bash $ echo three",
    "  ✗ the user denied 'bash'",
    "",
    "done",
  ]);
});

Deno.test("rows read as the tool's name and what the call is about, for every bundled tool", async () => {
  await using fake = await openFakeSession([]);
  const tools = fake.session.host.runtime.environment().tools;
  const title = (name: string, args: Record<string, unknown>) => {
    const call = { id: "c", name, arguments: JSON.stringify(args) };
    return toolTitle(name, toolLabel(tools.get(name)?.tool, call).summary);
  };
  const expected: [string, Record<string, unknown>, string][] = [
    ["read", { path: "notes.txt" }, "read notes.txt"],
    ["read", { path: "a.ts", offset: 10, limit: 5 }, "read a.ts (lines 10-14)"],
    ["write", { path: "out.md", content: "x" }, "write out.md"],
    ["edit", { path: "a.ts", old_string: "a", new_string: "b" }, "edit a.ts"],
    ["search", { pattern: "TODO" }, "search /TODO/ in ."],
    ["bash", { command: "npm test" }, "bash $ npm test"],
    [
      "todowrite",
      { todos: [{ content: "x", status: "completed" }] },
      "todowrite update todos (1/1 done)",
    ],
    ["task", { prompt: "look", description: "find the bug" }, "task: find the bug"],
    ["process_start", { command: "deno task dev" }, "process_start $ deno task dev"],
    ["process_read", { id: "3" }, "process_read job 3"],
    ["process_stop", { id: "3" }, "process_stop job 3"],
  ];
  for (const [name, args, want] of expected) assert.equal(title(name, args), want, name);
  for (const name of tools.keys()) {
    assert.ok(expected.some(([listed]) => listed === name), `${name}: a bundled tool to check`);
  }
  // A tool with no summary, or a call that does not parse, is named by the tool alone.
  assert.equal(toolTitle("mcp__docs__lookup", "mcp__docs__lookup"), "mcp__docs__lookup");
});

Deno.test("a running row says so and shows the last lines it streamed; a cancel keeps them", () => {
  const view = new TranscriptView();
  view.addUser("build");
  const call = bash("call_0", "make");
  feed(view, [
    { type: "toolStart", step: 0, call, verb: "running", summary: "$ make" },
    { type: "toolOutput", step: 0, call, chunk: "cc a.c\ncc b.c\n" },
    { type: "toolOutput", step: 0, call, chunk: "cc c.c\x1b]0;owned\x07\ncc d" },
    { type: "toolOutput", step: 0, call, chunk: ".c\n\x1b[2Jdone 50%\rdone 90%\n" },
  ]);
  assert.deepEqual(screen(view).slice(2), [
    "⚙ bash $ make  running…",
    "  │ cc c.c]0;owned",
    "  │ cc d.c",
    "  │ done 90%",
  ]);
  // The kernel gave up on the tool: its result carries no output; the row keeps what came.
  feed(view, [{
    type: "toolEnd",
    step: 0,
    call,
    result: { ok: false, output: "", error: "cancelled" },
    durationMs: 2500,
  }, { type: "end", cause: { kind: "cancelled" } }]);
  assert.deepEqual(screen(view).slice(2), [
    "⚙ bash $ make",
    "  ✗ cancelled  (2.5 s)",
    "    … 2 lines above",
    "    cc c.c]0;owned",
    "    cc d.c",
    "    done 90%",
    "",
    "cancelled (every committed step is kept)",
  ]);
  assert.equal(view.lastToolOutput()?.text, "cc a.c\ncc b.c\ncc c.c]0;owned\ncc d.c\ndone 90%");
  // Output for a row that ended, or a call with no row, changes nothing.
  const stamp = view.stamp;
  view.toolOutput({ step: 0, call }, "late\n");
  view.toolOutput({ step: 7, call }, "stray\n");
  assert.equal(view.stamp, stamp);
});

Deno.test("the last tool row expands to all of its output and collapses again", () => {
  const view = new TranscriptView();
  assert.equal(view.toggleLastTool(), false, "no row yet");
  view.addUser("list");
  const call = bash("call_0", "ls");
  const output = Array.from({ length: 6 }, (_, i) => `file${i}.ts`).join("\n");
  feed(view, [
    { type: "toolStart", step: 0, call, verb: "running", summary: "$ ls" },
    { type: "toolEnd", step: 0, call, result: { ok: true, output }, durationMs: 4 },
    { type: "text", delta: "Six files." },
  ]);
  const collapsed = screen(view);
  assert.deepEqual(collapsed.slice(2, 4), ["⚙ bash $ ls", "  ✓ file0.ts  … +5 lines  (4 ms)"]);
  assert.equal(view.toggleLastTool(), true);
  assert.deepEqual(screen(view).slice(2, 9), [
    "⚙ bash $ ls",
    "  ✓ file0.ts  (4 ms)",
    "    file1.ts",
    "    file2.ts",
    "    file3.ts",
    "    file4.ts",
    "    file5.ts",
  ]);
  view.toggleLastTool();
  assert.deepEqual(screen(view), collapsed);
  assert.deepEqual(view.lastToolOutput(), { title: "bash $ ls", text: output, running: false });
});

Deno.test("a call that changed a file shows its diff: a few lines collapsed, all expanded", () => {
  const before = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n") + "\n";
  const after = before.replace("line 3\n", "line three\n").replace("line 25\n", "line 25!\n");
  const row = new ToolRow(
    { id: "c1", name: "edit", arguments: "{}" },
    { verb: "editing", summary: "edit a.txt" },
  );
  row.start();
  row.end({
    ok: true,
    output: "Edited a.txt: replaced 1.",
    change: { path: "a.txt", before, after },
  }, 3);
  const collapsed = row.render(60).map(plainText);
  assert.equal(collapsed[0], "⚙ edit a.txt");
  assert.equal(collapsed[1], "  ✓ Edited a.txt: replaced 1.  (3 ms)");
  assert.equal(collapsed[2].trim(), "a.txt +2 -2");
  assert.equal(collapsed.length, 2 + 8, "eight lines of the diff");
  assert.match(collapsed.at(-1)!, /… \d+ more lines/);
  row.expanded = true;
  const expanded = row.render(60).map(plainText);
  assert.ok(expanded.some((line) => /- line 25$/.test(line)), "the second hunk shows");
  assert.ok(expanded.some((line) => /\+ line 25!$/.test(line)));
  assert.ok(!expanded.some((line) => /more line/.test(line)));
});

Deno.test("a resumed edit shows the change rebuilt from its arguments", () => {
  const view = new TranscriptView();
  const call = {
    id: "call_0",
    name: "edit",
    arguments: JSON.stringify({
      path: "a.ts",
      old_string: "let x = 1;",
      new_string: "const x = 1;",
    }),
  };
  view.replay([
    { role: "user", content: "fix" },
    { role: "assistant", content: "", toolCalls: [call] },
    { role: "tool", toolCallId: "call_0", name: "edit", content: "Edited a.ts: replaced 1." },
  ], () => ({ verb: "editing", summary: "edit a.ts" }));
  const lines = screen(view).map((line) => line.trimEnd());
  assert.deepEqual(lines.slice(2, 5), [
    "⚙ edit a.ts",
    "  ✓ Edited a.ts: replaced 1.",
    "    a.ts +1 -1",
  ]);
  assert.ok(
    lines.includes("    - let x = 1;") && lines.includes("    + const x = 1;"),
    lines.join("\n"),
  );
});

Deno.test("the viewer shows a row's whole output, finds what is typed after /, and follows a running call", () => {
  const view = new TranscriptView();
  assert.equal(view.lastToolViewer(), undefined, "no row, no viewer");
  view.addUser("test");
  const call = bash("call_0", "deno test");
  feed(view, [{ type: "toolStart", step: 0, call, verb: "running", summary: "$ deno test" }]);
  const lines = Array.from({ length: 60 }, (_, i) => i === 41 ? "FAILED: parse" : `ok ${i}`);
  feed(view, [{ type: "toolOutput", step: 0, call, chunk: lines.join("\n") + "\n" }]);
  const viewer = view.lastToolViewer()!;
  const panel = new PanelView(viewer.id, viewer);
  const screen = new Screen(40, 12);
  const draw = () => {
    screen.clear();
    panel.draw(screen);
  };
  const rows = () => Array.from({ length: 12 }, (_, row) => screen.rowText(row).trimEnd());
  draw();
  assert.equal(rows()[0].trim(), "⚙ bash $ deno test (running)");
  assert.match(rows()[1], /^ 60 lines, still coming · \/ search/);
  const press = (name: string, text?: string) =>
    panel.key({ name, text, ctrl: false, alt: false, shift: false });
  press("text", "/");
  for (const char of "failed") press("text", char);
  draw();
  assert.match(rows()[1], /\/failed▏ match 1 of 1/);
  assert.ok(rows().includes(" › FAILED: parse"), rows().join("\n"));
  press("enter");
  // A new row's output does not move the viewer: it stays on the row it opened.
  feed(view, [
    { type: "toolOutput", step: 0, call, chunk: "FAILED: lint\n" },
    {
      type: "toolEnd",
      step: 0,
      call,
      result: { ok: false, output: "", error: "exit 1" },
      durationMs: 9,
    },
    { type: "toolStart", step: 1, call: bash("call_1", "ls"), verb: "running", summary: "$ ls" },
  ]);
  press("text", "n");
  draw();
  assert.equal(rows()[0].trim(), "⚙ bash $ deno test");
  assert.match(rows()[1], /match 2 of 2/);
  assert.ok(rows().includes(" › FAILED: lint"), rows().join("\n"));
  assert.equal(press("text", "q"), "close");
});

Deno.test("a collapsed row shows the end of an endless line, not all of it wrapped", () => {
  const row = new ToolRow(bash("call_0", "cat blob"), { verb: "running", summary: "$ cat blob" });
  row.start();
  const blob = "x".repeat(100_000) + "THE END";
  for (let i = 0; i < blob.length; i += 10_000) row.append(blob.slice(i, i + 10_000));
  const running = row.render(60).map(plainText);
  assert.ok(running.length <= 1 + 3, running.join("\n"));
  assert.match(running[1], /^ {2}│ …x+$/);
  assert.match(running.at(-1)!, /THE END$/);
  row.end({ ok: false, output: "", error: "cancelled" }, 9);
  const cancelled = row.render(60).map(plainText);
  assert.ok(cancelled.length <= 2 + 3, cancelled.join("\n"));
  assert.match(cancelled.at(-1)!, /THE END$/);
  // Expanded, all of it; the viewer has all of it too.
  row.expanded = true;
  assert.ok(row.render(60).length > 1000);
  assert.equal(row.output().text, blob);
});
