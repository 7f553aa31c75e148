// The todo panel: what `composeTodoPanel` draws (marks, count, a window around the item in
// progress when the list is long, truncation), how `TodoPanel` follows the host's list (opens
// by itself once, Ctrl-T toggles, a write asks for a frame), the CLI todo service's subscribe,
// where the frame puts the panel (over the rule, rows taken from the transcript), the plan a
// conversation left (`todosFromMessages`), and all of it in the app, `/clear` and `/resume` too.

import assert from "node:assert/strict";
import type { Message, TodoItem, TodoService } from "@amber/core";
import { createTodoService, todosFromMessages } from "../../cli/todos.ts";
import type { FrameParts } from "../../cli/tui/frame.ts";
import type { StyledLine } from "../../cli/tui/lines.ts";
import { Screen } from "../../cli/tui/screen.ts";
import { Styles } from "../../cli/tui/style.ts";
import { composeTodoPanel, TodoPanel } from "../../cli/tui/todo_panel.ts";
import { TranscriptView } from "../../cli/tui/transcript_view.ts";
import { composeFrame } from "./_frame.ts";
import { startTui } from "./_harness.ts";

const text = (lines: readonly StyledLine[]): string[] =>
  lines.map((line) => line.map((span) => span.text).join(""));

function plan(statuses: readonly TodoItem["status"][]): TodoItem[] {
  return statuses.map((status, i) => ({ content: `step ${i + 1}`, status }));
}

Deno.test("composeTodoPanel: a header with the count, then each item with its mark", () => {
  const lines = composeTodoPanel(plan(["completed", "completed", "in_progress", "pending"]), 40, 8);
  assert.deepEqual(text(lines).slice(1), [
    " [x] step 1",
    " [x] step 2",
    " [~] step 3",
    " [ ] step 4",
  ]);
  // The header fills the width exactly; the item in progress is drawn in the accent colour.
  assert.equal([...text(lines)[0]].length, 40);
  assert.ok(text(lines)[0].startsWith("─ Todos 2/4 done ─"));
  assert.ok(text(lines)[0].endsWith(" Ctrl-T hides ─"));
  // A narrow screen keeps the count and drops the key's hint.
  assert.equal(text(composeTodoPanel(plan(["pending"]), 24, 3))[0], "─ Todos 0/1 done ───────");
  assert.equal(text(composeTodoPanel(plan(["pending"]), 12, 3))[0], "─ Todos 0/1…");
  assert.equal(lines[3][1].style, Styles.accent);
  assert.equal(lines[1][1].style, Styles.dim, "done items are dimmed");
});

Deno.test("composeTodoPanel: an empty list says so; too few rows or columns draw nothing", () => {
  assert.match(text(composeTodoPanel([], 40, 5))[0], /^─ Todos: none yet ─+ Ctrl-T hides ─$/);
  assert.deepEqual(composeTodoPanel(plan(["pending"]), 40, 1), []);
  assert.deepEqual(composeTodoPanel(plan(["pending"]), 40, -3), []);
  assert.deepEqual(composeTodoPanel(plan(["pending"]), 5, 5), []);
});

Deno.test("composeTodoPanel: a long list shows a window around the item in progress", () => {
  const items = plan([
    "completed",
    "completed",
    "completed",
    "completed",
    "in_progress",
    "pending",
    "pending",
    "pending",
    "pending",
  ]);
  const lines = text(composeTodoPanel(items, 40, 5));
  assert.equal(lines.length, 5);
  assert.deepEqual(lines.slice(1), [
    " [x] step 4",
    " [~] step 5",
    " [ ] step 6",
    "     … 3 above, 3 more",
  ]);
  // All done: the end of the list shows.
  const finished = text(composeTodoPanel(plan(Array(6).fill("completed")), 40, 4));
  assert.deepEqual(finished.slice(1), [" [x] step 5", " [x] step 6", "     … 4 above"]);
  // Nothing done yet: the start shows.
  const fresh = text(composeTodoPanel(plan(Array(6).fill("pending")), 40, 4));
  assert.deepEqual(fresh.slice(1), [" [ ] step 1", " [ ] step 2", "     … 4 more"]);
});

Deno.test("composeTodoPanel: long items are cut to the width, control characters removed", () => {
  const lines = text(composeTodoPanel(
    [{
      content: `fix\x1b[2J the ${"very ".repeat(20)}long thing\nsecond line`,
      status: "pending",
    }],
    30,
    3,
  ));
  assert.equal([...lines[1]].length, 30);
  assert.ok(lines[1].startsWith(" [ ] fix[2J the very"));
  assert.ok(lines[1].endsWith("…"));
  assert.ok(!lines[1].includes("\x1b"));
});

Deno.test("TodoPanel opens by itself the first time the list has items, once", () => {
  const todos = createTodoService();
  let frames = 0;
  const panel = new TodoPanel(todos, () => frames++);
  assert.equal(panel.open, false);
  assert.deepEqual(panel.lines(40, 6), []);
  todos.write(plan(["in_progress", "pending"]));
  assert.equal(frames, 1, "a write asks for a frame");
  assert.equal(panel.open, true);
  assert.deepEqual(text(panel.lines(40, 6)).slice(1), [" [~] step 1", " [ ] step 2"]);
  panel.toggle();
  assert.equal(panel.open, false, "Ctrl-T hides it");
  todos.write(plan(["completed", "in_progress"]));
  assert.equal(frames, 2);
  assert.equal(panel.open, false, "it stays hidden once the user hid it");
  panel.toggle();
  assert.deepEqual(text(panel.lines(40, 6)).slice(1), [" [x] step 1", " [~] step 2"]);
  panel.close();
  todos.write([]);
  assert.equal(frames, 2, "a closed panel no longer follows the list");
});

Deno.test("TodoPanel follows a todo service without subscribe when drawn, or none at all", () => {
  let items: readonly TodoItem[] = [];
  const plain: TodoService = { list: () => items, write: (next) => (items = next) };
  const panel = new TodoPanel(plain, () => {});
  assert.deepEqual(panel.lines(40, 5), []);
  plain.write(plan(["pending"]));
  assert.deepEqual(text(panel.lines(40, 5)).slice(1), [" [ ] step 1"]);
  const none = new TodoPanel(undefined, () => {});
  none.toggle();
  assert.match(text(none.lines(40, 5))[0], /none yet/);
});

Deno.test("the CLI todo service tells every subscriber, and a failing one stops nobody", () => {
  const todos = createTodoService();
  const seen: string[] = [];
  todos.subscribe(() => {
    throw new Error("a broken view");
  });
  const stop = todos.subscribe((items) => seen.push(items.map((i) => i.status).join(",")));
  todos.write(plan(["pending"]));
  assert.deepEqual(todos.list(), plan(["pending"]));
  stop();
  todos.write(plan(["completed"]));
  assert.deepEqual(seen, ["pending"]);
});

function frame(screen: Screen, todos: FrameParts["todos"]): void {
  const transcript = new TranscriptView();
  for (let i = 1; i <= 20; i++) transcript.notice(`note ${i}`);
  composeFrame(screen, { transcript, ...(todos === undefined ? {} : { todos }) });
}

Deno.test("the frame puts the todo panel over the rule, in rows the transcript gives up", () => {
  const screen = new Screen(40, 12);
  const todos = createTodoService();
  const panel = new TodoPanel(todos, () => {});
  todos.write(plan(["completed", "in_progress"]));
  frame(screen, (width, rows) => panel.lines(width, rows));
  const rows = Array.from({ length: 12 }, (_, i) => screen.rowText(i).trimEnd());
  assert.equal(rows[11], "model-x");
  assert.equal(rows[10], "›");
  assert.match(rows[9], /^─+$/, "the rule");
  assert.deepEqual(rows.slice(6, 9), [
    "─ Todos 1/2 done ──────── Ctrl-T hides ─",
    " [x] step 1",
    " [~] step 2",
  ]);
  assert.equal(rows[5], "note 20", "the transcript ends right over the panel");
  assert.ok(rows.slice(0, 5).includes("note 19"));

  // Hidden, the transcript has those rows back.
  panel.toggle();
  const again = new Screen(40, 12);
  frame(again, (width, rows) => panel.lines(width, rows));
  assert.equal(again.rowText(8).trimEnd(), "note 20");
  // The panel never takes more than a third of the screen.
  const tall = createTodoService();
  tall.write(plan(Array(20).fill("pending")));
  const small = new Screen(40, 12);
  frame(small, (width, rows) => new TodoPanel(tall, () => {}).lines(width, rows));
  const panelRows = Array.from({ length: 12 }, (_, i) => small.rowText(i))
    .filter((row) => /\[ \]|Todos|… \d+ more/.test(row));
  assert.equal(panelRows.length, 4);
});

Deno.test("TodoPanel.restart: a new conversation's list, and it opens by itself again", () => {
  const todos = createTodoService();
  const panel = new TodoPanel(todos, () => {});
  todos.write(plan(["pending"]));
  panel.toggle();
  assert.equal(panel.open, false);
  panel.restart([]);
  assert.deepEqual(todos.list(), []);
  assert.equal(panel.open, false);
  todos.write(plan(["in_progress"]));
  assert.equal(panel.open, true, "the next plan opens it again");
  panel.toggle();
  panel.restart(plan(["completed", "pending"]));
  assert.equal(panel.open, true, "a resumed plan shows at once");
  assert.deepEqual(todos.list(), plan(["completed", "pending"]));
});

function call(id: string, todos: unknown): Message {
  return {
    role: "assistant",
    content: "",
    toolCalls: [{ id, name: "todowrite", arguments: JSON.stringify({ todos }) }],
  };
}

function answer(id: string, content: string): Message {
  return { role: "tool", toolCallId: id, name: "todowrite", content };
}

Deno.test("todosFromMessages: the last todowrite that worked, found by its own reply", () => {
  const first = plan(["in_progress", "pending"]);
  const second = plan(["completed", "in_progress"]);
  // The same id in two replies: the later result answers the later call.
  const messages: Message[] = [
    { role: "user", content: "go" },
    call("call_0", first),
    answer("call_0", "Todos (0 of 2 done)"),
    { role: "user", content: "more" },
    call("call_0", second),
    answer("call_0", "Todos (1 of 2 done)"),
    call("call_1", [{ content: "bad", status: "someday" }]),
    answer("call_1", "error: invalid arguments for tool 'todowrite'"),
  ];
  assert.deepEqual(todosFromMessages(messages), second);
  assert.deepEqual(todosFromMessages(messages.slice(0, 3)), first);
  assert.deepEqual(todosFromMessages([{ role: "user", content: "hi" }]), []);
  assert.deepEqual(todosFromMessages([call("x", "nonsense"), answer("x", "ok")]), []);
  const broken: Message = {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "x", name: "todowrite", arguments: "{" }],
  };
  assert.deepEqual(todosFromMessages([broken, answer("x", "ok")]), []);
});

Deno.test("in the app: the plan opens the panel, Ctrl-T toggles it, /clear and /resume follow", async () => {
  await using t = await startTui({
    columns: 80,
    rows: 24,
    turns: [
      {
        toolCalls: [{
          name: "todowrite",
          arguments: {
            todos: [
              { content: "Read the notes", status: "completed" },
              { content: "Write the summary", status: "in_progress" },
            ],
          },
        }],
      },
      { text: "Planned." },
    ],
  });
  await t.waitFor(/›/, "the prompt");
  assert.doesNotMatch(t.terminal.text(), /Todos/);
  t.terminal.type("plan it\r");
  await t.waitFor(/Planned\./, "the answer");
  await t.idle();
  let screen = await t.waitFor(/Todos 1\/2 done/, "the panel, opened by itself");
  assert.match(screen, /\[x\] Read the notes\n \[~\] Write the summary/);
  t.terminal.type("\x14");
  await t.waitFor((s) => !/Todos 1\/2/.test(s), "Ctrl-T hides it");
  t.terminal.type("\x14");
  await t.waitFor(/Todos 1\/2 done/, "Ctrl-T shows it again");
  const id = t.tui.session.id!;
  t.terminal.type("/clear\r");
  await t.waitFor((s) => !/Todos/.test(s), "/clear drops the old conversation's plan");
  assert.deepEqual(t.tui.host.services.todos?.list(), []);
  t.terminal.type(`/resume ${id}\r`);
  screen = await t.waitFor(/Todos 1\/2 done/, "the resumed conversation's plan");
  assert.match(screen, /\[~\] Write the summary/);
});
