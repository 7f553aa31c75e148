// Markdown for the terminal: code blocks, lists, emphasis, and a stream that renders the same
// lines as the whole text however the deltas are cut.

import assert from "node:assert/strict";
import fc from "fast-check";
import { plainText, type StyledLine } from "../../cli/tui/lines.ts";
import { MarkdownStream, renderInline, renderMarkdown } from "../../cli/tui/markdown.ts";
import { style, Styles } from "../../cli/tui/style.ts";

const plain = (lines: readonly StyledLine[]) => lines.map(plainText);

Deno.test("fenced code keeps its lines behind a gutter and is not reflowed", () => {
  const lines = renderMarkdown("Look:\n```ts\nconst x = **1**;\n  indented\n```\nafter", 40);
  assert.deepEqual(plain(lines), [
    "Look:",
    "┌ ts",
    "│ const x = **1**;",
    "│   indented",
    "└",
    "after",
  ]);
  assert.equal(lines[2][1].style, Styles.code, "code is styled as code, emphasis left alone");
  const narrow = renderMarkdown("```\nabcdefghij\n```", 6);
  assert.deepEqual(plain(narrow), ["┌ code", "│ abcd", "│ efgh", "│ ij", "└"]);
});

Deno.test("lists get bullets, numbers and hanging indents; nesting alternates bullets", () => {
  const lines = renderMarkdown("- first item here\n  - nested\n1. one\n10) ten", 14);
  assert.deepEqual(plain(lines), [
    "• first item",
    "  here",
    "  ◦ nested",
    "1. one",
    "10) ten",
  ]);
});

Deno.test("emphasis, code spans, strike and links are styled inline", () => {
  const spans = renderInline("a **bold** _it_ `code` ~~old~~ [site](https://x.y) snake_case_name");
  const text = spans.map((s) => s.text).join("");
  assert.equal(text, "a bold it code old site (https://x.y) snake_case_name");
  const find = (t: string) => spans.find((s) => s.text === t)!.style;
  assert.equal(find("bold"), style({ bold: true }));
  assert.equal(find("it"), style({ italic: true }));
  assert.equal(find("code"), Styles.code);
  assert.equal(find("old"), style({ strike: true }));
  assert.equal(find("site"), style({ underline: true, fg: "cyan" }));
  assert.equal(renderInline("2 * 3 * 4").map((s) => s.text).join(""), "2 * 3 * 4");
  assert.equal(renderInline("**unclosed").map((s) => s.text).join(""), "**unclosed");
});

Deno.test("headings are bold, quotes get a bar, rules a line", () => {
  const lines = renderMarkdown("# Title\n## Sub ##\n> quoted *text*\n---", 20);
  assert.deepEqual(plain(lines), ["Title", "Sub", "│ quoted text", "─".repeat(20)]);
  assert.equal(lines[0][0].style, style({ bold: true, underline: true }));
});

Deno.test("long lines wrap at the width in cells", () => {
  const lines = renderMarkdown("中文 words that wrap", 8);
  assert.deepEqual(plain(lines), ["中文", "words", "that", "wrap"]);
});

Deno.test("a stream renders what the whole text renders, however the deltas are cut", () => {
  const source =
    "Intro with **bold** text\n\n- a list item that is long\n```js\nlet x = 1;\n```\n" +
    "> quote\n1. last *one*";
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: source.length - 1 }), { maxLength: 12 }),
      fc.constantFrom(12, 30, 80),
      (cuts, width) => {
        const stream = new MarkdownStream();
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        let from = 0;
        for (const point of [...points, source.length]) {
          stream.append(source.slice(from, point));
          // A frame in between renders the partial text; the result must not depend on it.
          stream.lines(width);
          from = point;
        }
        assert.deepEqual(stream.lines(width), renderMarkdown(source, width));
      },
    ),
  );
});

Deno.test("a stream renders each finished line once", () => {
  const stream = new MarkdownStream();
  stream.append("one\ntwo\nthr");
  const first = stream.lines(40);
  stream.append("ee");
  const second = stream.lines(40);
  assert.equal(first[0], second[0], "the finished line is the same object, not re-rendered");
  assert.deepEqual(plain(second), ["one", "two", "three"]);
  assert.equal(stream.lines(40), second, "no new text: the same lines");
});
