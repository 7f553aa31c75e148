// The input line: editing by cluster, word and line, multi-line input, history browsing and its
// file, and layout in cells.

import assert from "node:assert/strict";
import type { Key } from "../../cli/tui/input.ts";
import { History, layoutInput, LineEditor } from "../../cli/tui/line_editor.ts";
import { plainText } from "../../cli/tui/lines.ts";
import { tempDir } from "../_helpers.ts";

const key = (name: string, mods: Partial<Key> = {}): Key => ({
  name,
  ctrl: false,
  alt: false,
  shift: false,
  ...mods,
});
const text = (t: string): Key => key("text", { text: t });
const ctrl = (name: string): Key => key(name, { ctrl: true });

function typed(...keys: Key[]): LineEditor {
  const editor = new LineEditor();
  for (const k of keys) editor.handle(k);
  return editor;
}

Deno.test("typing, moving and deleting by character cluster", () => {
  const editor = typed(text("ab👍🏽e\u0301"), key("left"), key("backspace"));
  assert.equal(editor.text, "abe\u0301", "Backspace took the whole emoji with its skin tone");
  editor.handle(key("right"));
  editor.handle(key("backspace"));
  assert.equal(editor.text, "ab", "e with its combining accent is one cluster");
  editor.handle(key("home"));
  editor.handle(key("delete"));
  assert.equal(editor.text, "b");
  editor.handle(ctrl("e"));
  editor.handle(text("c"));
  assert.equal(editor.text, "bc");
});

Deno.test("words and lines: Ctrl-W, Alt-B, Alt-F, Ctrl-K, Ctrl-U", () => {
  const editor = typed(text("git commit -m fix"), ctrl("w"));
  assert.equal(editor.text, "git commit -m ");
  editor.handle(key("b", { alt: true }));
  editor.handle(key("b", { alt: true }));
  assert.equal(editor.cursor, 4);
  editor.handle(ctrl("k"));
  assert.equal(editor.text, "git ");
  editor.handle(ctrl("u"));
  assert.equal(editor.text, "");
  const moved = typed(text("one two"), ctrl("a"), key("f", { alt: true }));
  assert.equal(moved.cursor, 3);
});

Deno.test("multi-line input: Ctrl-J, Alt-Enter, a trailing backslash, a paste", () => {
  const editor = typed(text("a"), ctrl("j"), text("b"), key("enter", { alt: true }), text("c\\"));
  assert.equal(editor.handle(key("enter")), "edited", "a trailing backslash continues the line");
  editor.handle(key("paste", { text: "d\r\ne\tf" }));
  assert.equal(editor.text, "a\nb\nc\nd\ne    f");
  assert.equal(editor.handle(key("enter")), "submit");
  assert.equal(editor.take(), "a\nb\nc\nd\ne    f");
  assert.equal(editor.text, "");
});

Deno.test("Up and Down move between lines, keeping the column in cells", () => {
  const editor = typed(text("中文abc"), ctrl("j"), text("xy"));
  editor.handle(key("up"));
  assert.equal(editor.cursor, 1, "column 2 of 'xy' is after the first wide character");
  editor.handle(key("end"));
  editor.handle(key("down"));
  assert.equal(editor.cursor, editor.text.length);
});

Deno.test("history: Up browses back from a draft, Down returns to it", () => {
  const history = new History(["first", "second"]);
  const editor = new LineEditor(history);
  editor.handle(text("draft"));
  editor.handle(key("up"));
  assert.equal(editor.text, "second");
  editor.handle(key("up"));
  assert.equal(editor.text, "first");
  assert.equal(editor.handle(key("up")), "ignored");
  editor.handle(key("down"));
  editor.handle(key("down"));
  assert.equal(editor.text, "draft");
});

Deno.test("history is kept in the config dir, one JSON string per line", async () => {
  await using tmp = await tempDir();
  const path = `${tmp.dir}/sub/history.jsonl`;
  const history = await History.load(path);
  await history.add("one");
  await history.add("two\nlines");
  await history.add("two\nlines");
  await history.add("   ");
  assert.equal(await Deno.readTextFile(path), '"one"\n"two\\nlines"\n');
  await Deno.writeTextFile(path, "not json\n", { append: true });
  const again = await History.load(path);
  assert.deepEqual(again.entries, ["one", "two\nlines"]);
});

Deno.test("history over its limit is compacted when loaded", async () => {
  await using tmp = await tempDir();
  const path = `${tmp.dir}/history.jsonl`;
  await Deno.writeTextFile(path, Array.from({ length: 25 }, (_, i) => `"e${i}"\n`).join(""));
  const history = await History.load(path, 10);
  assert.equal(history.entries.length, 10);
  assert.equal(history.entries[0], "e15");
  assert.equal((await Deno.readTextFile(path)).split("\n").filter(Boolean).length, 10);
});

Deno.test("layout wraps by cells, never inside a wide character, and places the cursor", () => {
  const prompt = [{ text: "› ", style: 0 }];
  const layout = layoutInput("ab中文cd", 4, 6, prompt);
  assert.deepEqual(layout.lines.map(plainText), ["› ab中", "  文cd"]);
  assert.deepEqual([layout.row, layout.col], [1, 4], "before 'c', after the wrapped 文");
  const end = layoutInput("abcd", 4, 6, prompt);
  assert.deepEqual([end.row, end.col], [0, 6], "after the last cell of a full row");
  const masked = layoutInput("secret", 6, 20, prompt, true);
  assert.equal(plainText(masked.lines[0]), "› ••••••");
});
