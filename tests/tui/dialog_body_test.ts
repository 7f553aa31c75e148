// A question's body (an approval's diff) shows between the question and the choices, cut to
// about two thirds of the screen with a line saying how much was left out, so the question and
// every choice stay in view; the answer works as without a body.

import assert from "node:assert/strict";
import { Dialogs } from "../../cli/tui/dialogs.ts";
import { renderChange } from "../../cli/tui/diff_view.ts";
import type { Key } from "../../cli/tui/input.ts";
import { plainText, type StyledLine } from "../../cli/tui/lines.ts";
import { Styles } from "../../cli/tui/style.ts";

const key = (name: string, text?: string): Key => ({
  name,
  ctrl: false,
  alt: false,
  shift: false,
  ...(text === undefined ? {} : { text }),
});

const choices = [{ label: "yes", hotkey: "y" }, { label: "no", hotkey: "n" }];

Deno.test("pick: a body shows between the question and the choices", async () => {
  const dialogs = new Dialogs();
  const widths: number[] = [];
  const body = (width: number): StyledLine[] => {
    widths.push(width);
    return renderChange({ path: "a.txt", before: "one\n", after: "two\n" }, width);
  };
  const answer = dialogs.pick("allow edit a.txt?", choices, undefined, body);
  const lines = dialogs.layout(50, 30)!.lines.map(plainText);
  assert.deepEqual(lines, [
    "? allow edit a.txt?",
    "a.txt +1 -1",
    "@@ -1,1 +1,1 @@",
    "1 - one",
    "1 + two",
    " ❯ y  yes",
    "   n  no",
    "   letter or ↑↓ Enter to choose · Esc to dismiss",
  ]);
  // Drawn again at the same width (every key), the body is not asked again.
  dialogs.layout(50, 30);
  dialogs.key(key("down"));
  dialogs.layout(50, 30);
  assert.deepEqual(widths, [50]);
  dialogs.layout(60, 30);
  assert.deepEqual(widths, [50, 60]);
  dialogs.key(key("text", "y"));
  assert.equal(await answer, 0);
  assert.equal(dialogs.layout(50, 30), undefined);
});

Deno.test("pick: a long body is cut to two thirds of the screen, saying how much", () => {
  const dialogs = new Dialogs();
  const after = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
  const body = (width: number) => renderChange({ path: "big.txt", before: "", after }, width);
  void dialogs.pick("allow write big.txt?", choices, undefined, body);
  const layout = dialogs.layout(60, 30)!;
  const lines = layout.lines.map(plainText);
  // 30 rows: a body of 20 (two thirds), the question, two choices and the key hint.
  assert.equal(lines.length, 1 + 20 + 3);
  assert.equal(lines[0], "? allow write big.txt?");
  assert.equal(lines[1], "big.txt +100 -0 (new file)");
  assert.equal(lines[19], " 18 + line 18");
  assert.equal(lines[20], "… 82 more lines · full diff in the transcript once it runs");
  assert.equal(layout.lines[20][0].style, Styles.dim);
  assert.deepEqual(lines.slice(-3, -1), [" ❯ y  yes", "   n  no"]);
  // A short screen leaves the question and the choices their rows first.
  const short = dialogs.layout(60, 12)!.lines.map(plainText);
  assert.equal(short.length, 12 - 3);
  assert.equal(short[0], "? allow write big.txt?");
  assert.match(short[5], /^… 97 more lines/);
  assert.deepEqual(short.slice(-3, -1), [" ❯ y  yes", "   n  no"]);
  // Without the screen's height, a body shows a few lines.
  assert.equal(dialogs.layout(60)!.lines.length, 1 + 16 + 3);
  dialogs.cancelAll();
});

Deno.test("pick: a body that throws leaves the question as it would be without one", async () => {
  const dialogs = new Dialogs();
  const answer = dialogs.pick("allow?", choices, undefined, () => {
    throw new Error("cannot draw");
  });
  assert.deepEqual(dialogs.layout(40, 20)!.lines.map(plainText).slice(0, 3), [
    "? allow?",
    " ❯ y  yes",
    "   n  no",
  ]);
  dialogs.key(key("escape"));
  assert.equal(await answer, undefined);
});
