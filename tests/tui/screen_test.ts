// The cell buffer and its diff renderer: only changed cells are written, wide characters take
// two cells and are never split, a resize repaints, and whatever sequence of frames is drawn, a
// terminal that applies the bytes shows exactly the last composed frame.

import assert from "node:assert/strict";
import fc from "fast-check";
import { Screen } from "../../cli/tui/screen.ts";
import { sgr, style, Styles } from "../../cli/tui/style.ts";
import { VirtualTerminal } from "./_vt.ts";

// deno-lint-ignore no-control-regex -- escape sequences are what the screen writes
const MODES = /\x1b\[\?(2026|25)[hl]/g;

function strip(out: string): string {
  return out.replace(MODES, "");
}

Deno.test("the first frame clears and paints only what is not blank", () => {
  const screen = new Screen(20, 3);
  screen.write(1, 2, "hi", 0);
  const out = screen.render();
  assert.ok(out.includes("\x1b[2J"));
  assert.ok(strip(out).includes("\x1b[2;3Hhi"), JSON.stringify(out));
  assert.equal(screen.render(), "", "nothing changed: nothing written");
});

Deno.test("a frame that changes one cell writes one move and one character", () => {
  const screen = new Screen(40, 10);
  screen.write(0, 0, "The answer streams in", 0);
  screen.render();
  screen.clear();
  screen.write(0, 0, "The answer streams in.", 0);
  assert.equal(screen.render(), "\x1b[1;22H.", "one run: no synchronized-update framing");
  screen.write(0, 0, "The answer streams in..", 0);
  screen.write(5, 0, "status", 0);
  const two = screen.render();
  assert.ok(two.startsWith("\x1b[?2026h") && two.endsWith("\x1b[?2026l"), "two runs: framed");
});

Deno.test("a style change is sent once for a run of cells in that style", () => {
  const screen = new Screen(20, 1);
  screen.render();
  const red = style({ fg: "red" });
  screen.write(0, 0, "abc", red);
  const out = strip(screen.render());
  assert.equal(out, `\x1b[1;1H${sgr(red)}abc\x1b[0m`);
});

Deno.test("NO_COLOR keeps attributes and drops colours", () => {
  const screen = new Screen(10, 1, false);
  screen.render();
  screen.write(0, 0, "x", style({ fg: "red", bold: true }));
  assert.equal(strip(screen.render()), "\x1b[1;1H\x1b[0;1mx\x1b[0m");
});

Deno.test("wide characters take two cells and are measured in cells", () => {
  const screen = new Screen(8, 1);
  const end = screen.write(0, 0, "中文ok", 0);
  assert.equal(end, 6);
  assert.equal(screen.rowText(0), "中文ok  ");
  // A wide character that would straddle the edge is left out, its cell blanked.
  const clipped = new Screen(5, 1);
  assert.equal(clipped.write(0, 0, "ab中文", 0), 5);
  assert.equal(clipped.rowText(0), "ab中 ");
  // Emoji sequences stay whole.
  const emoji = new Screen(6, 1);
  emoji.write(0, 0, "👍🏽e\u0301", 0);
  assert.equal(emoji.rowText(0), "👍🏽e\u0301   ");
});

Deno.test("writing over half of a wide character blanks its other half", () => {
  const screen = new Screen(6, 1);
  screen.write(0, 0, "中文", 0);
  screen.write(0, 1, "x", 0);
  assert.equal(screen.rowText(0), " x文  ");
});

Deno.test("control characters and escape sequences in text are never written", () => {
  const screen = new Screen(20, 1);
  screen.write(0, 0, "a\x1b[2Jb\u0007c\td", 0);
  assert.equal(screen.rowText(0).trimEnd(), "a[2Jbc    d");
});

Deno.test("a terminal that measures an emoji sequence otherwise still gets the rest right", () => {
  const screen = new Screen(16, 1);
  const terminal = new VirtualTerminal(16, 1);
  terminal.splitSequences = true; // draws 👍🏽 as 👍 then 🏽: four cells, not two
  screen.write(0, 0, "a👍🏽b and words", 0);
  terminal.write(screen.render());
  assert.ok(terminal.rowText(0).endsWith("b and words  "), "text after it is where it belongs");
  screen.clear();
  screen.write(0, 0, "x", 0);
  terminal.write(screen.render());
  assert.equal(terminal.rowText(0), `x${" ".repeat(15)}`, "and nothing is left behind");
});

Deno.test("a resize repaints every cell at the new size", () => {
  const screen = new Screen(10, 2);
  screen.write(0, 0, "hello", 0);
  screen.render();
  screen.resize(6, 2);
  screen.write(0, 0, "hello", 0);
  const out = screen.render();
  assert.ok(out.includes("\x1b[2J"));
  assert.ok(out.includes("hello"));
});

Deno.test("a scrolled region is scrolled by the terminal; only the new rows are written", () => {
  const screen = new Screen(12, 5);
  const terminal = new VirtualTerminal(12, 5);
  const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`);
  const draw = (first: number) => {
    screen.clear();
    for (let row = 0; row < 4; row++) screen.write(row, 0, lines[first + row], 0);
    screen.write(4, 0, "status", Styles.dim);
  };
  draw(0);
  terminal.write(screen.render());
  draw(2);
  screen.scrollUp(0, 4, 2);
  const out = screen.render();
  terminal.write(out);
  assert.ok(out.includes("\x1b[1;4r\x1b[2S\x1b[r"), JSON.stringify(out));
  assert.ok(!out.includes("line 2"), "rows that only moved are not written again");
  assert.ok(out.includes("line 4") && out.includes("line 5"));
  assert.equal(terminal.text(), "line 2\nline 3\nline 4\nline 5\nstatus");
});

Deno.test("the cursor is placed after the frame and shown only when asked", () => {
  const screen = new Screen(10, 3);
  screen.write(2, 0, "› ab", Styles.accent);
  screen.setCursor(2, 4, true);
  const out = screen.render();
  assert.ok(out.endsWith("\x1b[3;5H\x1b[?25h\x1b[?2026l"), JSON.stringify(out));
  // Moving the cursor alone (an arrow key) moves it, and nothing else.
  screen.write(2, 0, "› ab", Styles.accent);
  screen.setCursor(2, 3, true);
  assert.equal(screen.render(), "\x1b[3;4H");
  screen.write(2, 0, "› ab", Styles.accent);
  screen.setCursor(0, 0, false);
  assert.equal(screen.render(), "\x1b[?25l");
  screen.write(2, 0, "› ab", Styles.accent);
  assert.equal(screen.render(), "", "nothing changed");
});

Deno.test("whatever frames are drawn, the terminal ends up showing the last one", () => {
  const pieces = ["a", "b", " ", "中", "文", "👍", "👍🏽", "❤️", "é", "x y", "ok"];
  fc.assert(
    fc.property(
      fc.array(
        fc.array(
          fc.record({
            row: fc.integer({ min: 0, max: 3 }),
            col: fc.integer({ min: 0, max: 9 }),
            text: fc.array(fc.constantFrom(...pieces), { maxLength: 6 }).map((p) => p.join("")),
            bold: fc.boolean(),
          }),
          { maxLength: 6 },
        ),
        { minLength: 1, maxLength: 6 },
      ),
      fc.array(fc.record({ top: fc.nat(3), size: fc.nat(4), lines: fc.nat(3) }), {
        maxLength: 6,
      }),
      (frames, hints) => {
        const screen = new Screen(10, 4);
        const terminal = new VirtualTerminal(10, 4);
        for (const [f, writes] of frames.entries()) {
          screen.clear();
          // Scroll hints, right or wrong, may only change how many bytes are written.
          const hint = hints[f];
          if (hint) screen.scrollUp(hint.top, hint.top + hint.size, hint.lines);
          for (const w of writes) {
            screen.write(w.row, w.col, w.text, w.bold ? Styles.bold : 0);
          }
          terminal.write(screen.render());
          for (let row = 0; row < 4; row++) {
            assert.equal(terminal.rowText(row), screen.rowText(row), `row ${row}`);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});
