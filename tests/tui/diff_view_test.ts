// The diff view: a FileChange as coloured unified-diff lines (hunks with context, styles by
// role, line numbers when they fit), safe against a hostile file, fitted to a width and a number
// of lines; and the change of a call rebuilt from its arguments for --resume.

import assert from "node:assert/strict";
import type { FileChange } from "@amber/core";
import { changeOfCall, formatChange, renderChange } from "../../cli/tui/diff_view.ts";
import { lineWidth, plainText, type StyledLine } from "../../cli/tui/lines.ts";
import { Styles } from "../../cli/tui/style.ts";

const numbered = (from: number, to: number): string =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`).join("\n") + "\n";

// The style of the span holding `text` on the first line that has it.
function styleOf(lines: readonly StyledLine[], text: string): number | undefined {
  for (const line of lines) {
    for (const span of line) if (span.text.includes(text)) return span.style;
  }
  return undefined;
}

Deno.test("renderChange: a hunk per change, three lines of context, numbers, styles by role", () => {
  const before = numbered(1, 30);
  const after = before.replace("line 5\n", "line five\n").replace("line 25\n", "");
  const lines = renderChange({ path: "src/a.txt", before, after }, 60);
  assert.deepEqual(lines.map(plainText), [
    "src/a.txt +1 -2",
    "@@ -2,7 +2,7 @@",
    " 2   line 2",
    " 3   line 3",
    " 4   line 4",
    " 5 - line 5",
    " 5 + line five",
    " 6   line 6",
    " 7   line 7",
    " 8   line 8",
    "@@ -22,7 +22,6 @@",
    "22   line 22",
    "23   line 23",
    "24   line 24",
    "25 - line 25",
    "25   line 26",
    "26   line 27",
    "27   line 28",
  ]);
  assert.equal(styleOf(lines, "line five"), Styles.diffAdd);
  assert.equal(styleOf(lines, "line 5"), Styles.diffRemove);
  assert.equal(styleOf(lines, "@@ -2,7"), Styles.diffHunk);
  assert.equal(styleOf(lines, "line 3"), Styles.plain);
  assert.equal(styleOf(lines, "+1"), Styles.diffAdd);
  assert.equal(styleOf(lines, "-2"), Styles.diffRemove);
});

Deno.test("renderChange: no escape sequence of a hostile file reaches the screen", () => {
  const hostile = "ok\n\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[31mred\r\n\x9b1;1H\u0007bell\n";
  const change: FileChange = { path: "evil\x1b[2J.txt", before: "", after: hostile };
  const lines = renderChange(change, 80);
  for (const line of lines) {
    for (const span of line) {
      // deno-lint-ignore no-control-regex -- finding control characters is the point
      assert.doesNotMatch(span.text, /[\u0000-\u001f\u007f-\u009f]/, JSON.stringify(span.text));
    }
  }
  assert.deepEqual(lines.map(plainText).slice(1), [
    "1 + ok",
    "2 + ]52;c;ZXZpbA==[2J[31mred",
    "3 + 1;1Hbell",
  ]);
  // The terminal form sets only its own styles: the one ESC per span is amber's.
  const text = formatChange(change, 80, true);
  assert.equal(text.includes("\x1b]"), false);
  assert.equal(text.includes("\x1b[2J"), false);
  assert.equal(text.includes("\x07"), false);
});

Deno.test("renderChange: long lines wrap under the text, within the width", () => {
  const after = `short\n${"word ".repeat(30)}end\n`;
  const lines = renderChange({ path: "a.md", before: "short\n", after }, 40);
  for (const line of lines) assert.ok(lineWidth(line) <= 40, plainText(line));
  const body = lines.map(plainText).slice(2);
  assert.equal(body[0], "1   short");
  assert.ok(body[1].startsWith("2 + word word"));
  // Continuation lines hang under the text, past the number and the sign.
  assert.ok(body[2].startsWith("    word"), body[2]);
  assert.equal(body.join("").replaceAll(" ", "").includes("end"), true);
  // Too narrow for numbers: the lines go without them.
  const narrow = renderChange({ path: "a.md", before: "a\n", after: "b\n" }, 16);
  assert.deepEqual(narrow.map(plainText).slice(1), ["@@ -1,1 +1,1 @@", "- a", "+ b"]);
});

Deno.test("renderChange: maxLines cuts the diff and says how many lines are left", () => {
  const change: FileChange = { path: "big.txt", before: "", after: numbered(1, 100) };
  const all = renderChange(change, 60);
  assert.equal(all.length, 101);
  const cut = renderChange(change, 60, 10);
  assert.equal(cut.length, 10);
  assert.deepEqual(cut.slice(0, 9).map(plainText), all.slice(0, 9).map(plainText));
  assert.equal(plainText(cut[9]), "… 92 more lines");
  assert.equal(cut[9][0].style, Styles.dim);
  assert.equal(renderChange(change, 60, 101).length, 101);
});

Deno.test("renderChange: a new file is all added lines; outside the workspace says so", () => {
  const created = renderChange({ path: "notes.md", before: "", after: "# Notes\n\nhi" }, 50);
  assert.deepEqual(created.map(plainText), [
    "notes.md +3 -0 (new file)",
    "1 + # Notes",
    "2 + ",
    "3 + hi",
    "\\ No newline at end of file",
  ]);
  const outside = renderChange(
    { path: "/etc/motd", before: "", after: "welcome\n", outside: true },
    50,
  );
  assert.equal(plainText(outside[0]), "/etc/motd +1 -0 (outside the workspace)");
  assert.equal(styleOf(outside, "outside the workspace"), Styles.warn);
  assert.equal(plainText(outside[1]), "1 + welcome");
  // A file emptied: every line removed, numbered as it was.
  assert.deepEqual(
    renderChange({ path: "gone.txt", before: "x\ny", after: "" }, 50).map(plainText),
    [
      "gone.txt +0 -2",
      "@@ -1,2 +1,0 @@",
      "1 - x",
      "2 - y",
      "\\ No newline at end of file",
    ],
  );
  // No change at all: just the header.
  assert.deepEqual(renderChange({ path: "same", before: "x", after: "x" }, 50).map(plainText), [
    "same +0 -0",
  ]);
});

Deno.test("renderChange: CRLF files show their lines without the carriage return", () => {
  const lines = renderChange({ path: "w.txt", before: "a\r\nb\r\n", after: "a\r\nB\r\n" }, 40);
  assert.deepEqual(lines.map(plainText).slice(1), ["@@ -1,2 +1,2 @@", "1   a", "2 - b", "2 + B"]);
});

Deno.test("changeOfCall: an edit's or a write's change from its arguments, for --resume", () => {
  const edit = changeOfCall({
    id: "call_0",
    name: "edit",
    arguments: JSON.stringify({
      path: "a.ts",
      old_string: "let x = 1;",
      new_string: "const x = 1;",
    }),
  });
  assert.deepEqual(edit, {
    path: "a.ts",
    before: "let x = 1;",
    after: "const x = 1;",
    excerpt: true,
  });
  const write = changeOfCall({
    id: "call_0",
    name: "write",
    arguments: JSON.stringify({ path: "b.md", content: "hello\n" }),
  });
  assert.deepEqual(write, { path: "b.md", before: "", after: "hello\n", excerpt: true });
  // An excerpt's numbers would be the region's, not the file's: none are shown, nor "new file".
  assert.deepEqual(renderChange(edit!, 60).map(plainText), [
    "a.ts +1 -1",
    "@@ -1,1 +1,1 @@",
    "- let x = 1;",
    "+ const x = 1;",
  ]);
  assert.equal(plainText(renderChange(write!, 60)[0]), "b.md +1 -0");
  for (
    const [name, args] of [
      ["read", '{"path":"a"}'],
      ["edit", "{not json"],
      ["edit", '{"path":"a","old_string":1,"new_string":"b"}'],
      ["write", '{"path":"a"}'],
      ["write", "null"],
    ]
  ) {
    assert.equal(changeOfCall({ id: "c", name, arguments: args }), undefined, `${name} ${args}`);
  }
});
