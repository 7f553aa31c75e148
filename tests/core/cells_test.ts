import assert from "node:assert/strict";
import fc from "fast-check";
import { cellWidth, codePointWidth, forEachCluster, truncateToCells } from "@amber/core/cells";

Deno.test("printable ASCII takes one cell per character", () => {
  assert.equal(cellWidth(""), 0);
  assert.equal(cellWidth("gpt-5 │"), 7);
  assert.equal(cellWidth("hello, world"), 12);
});

Deno.test("East Asian wide and fullwidth characters take two cells", () => {
  assert.equal(cellWidth("中文"), 4);
  assert.equal(cellWidth("日本語モデル"), 12);
  assert.equal(cellWidth("한국어"), 6);
  assert.equal(cellWidth("ＡＢ"), 4, "fullwidth Latin");
  assert.equal(cellWidth("a中b"), 4);
  assert.equal(cellWidth("𠀀"), 2, "a CJK extension B ideograph outside the BMP");
});

Deno.test("emoji take two cells, joined sequences included", () => {
  assert.equal(cellWidth("👍"), 2);
  assert.equal(cellWidth("🚀 go"), 5);
  assert.equal(cellWidth("👍🏽"), 2, "skin-tone modifier joins its base");
  assert.equal(cellWidth("👨‍👩‍👧"), 2, "a ZWJ family is one glyph");
  assert.equal(cellWidth("🇯🇵"), 2, "a flag is two regional indicators in two cells");
  assert.equal(cellWidth("🇯🇵🇫🇷"), 4);
  assert.equal(cellWidth("❤"), 1, "text presentation");
  assert.equal(cellWidth("❤️"), 2, "VS16 asks for emoji presentation");
  assert.equal(cellWidth("1️⃣"), 2, "keycap");
});

Deno.test("combining marks, zero-width and control characters take no cells", () => {
  assert.equal(cellWidth("e\u0301"), 1);
  assert.equal(cellWidth("Ame\u0301lie\u0308"), 6);
  assert.equal(cellWidth("a\u200bb"), 2, "zero-width space");
  assert.equal(cellWidth("a\u200db"), 2, "a joiner between letters joins nothing wide");
  assert.equal(cellWidth("\u001b[31m"), 4, "ESC takes nothing, the printable rest does");
  assert.equal(cellWidth("a\tb\n"), 2);
  assert.equal(cellWidth("\u0085"), 0, "C1 control");
  assert.equal(cellWidth("\u1100\u1161"), 2, "a conjoining Hangul vowel joins its syllable");
});

Deno.test("codePointWidth agrees with cellWidth for single characters", () => {
  for (const text of ["a", "中", "👍", "\u0301", "\u0007", "…", "│", "Ａ", "\u00ad"]) {
    assert.equal(codePointWidth(text.codePointAt(0)!), cellWidth(text), JSON.stringify(text));
  }
  assert.equal(codePointWidth(0x4e2d), 2);
  assert.equal(codePointWidth(0x4e2d), 2, "cached answer is the same");
});

Deno.test("truncateToCells keeps text that fits and cuts what does not with an ellipsis", () => {
  assert.equal(truncateToCells("short", 5), "short");
  assert.equal(truncateToCells("short", 10), "short");
  assert.equal(truncateToCells("deepseek-chat", 8), "deepsee…");
  assert.equal(truncateToCells("abc", 1), "…");
  assert.equal(truncateToCells("abc", 0), "");
  assert.equal(truncateToCells("abc", -3), "");
  assert.equal(truncateToCells("abc", Number.NaN), "");
  assert.equal(truncateToCells("model: gpt", 8), "model:…", "trailing space is trimmed");
  assert.equal(truncateToCells("abcdef", 5, "..."), "ab...");
  assert.equal(truncateToCells("abcdef", 2, "..."), "..", "an ellipsis wider than the room is cut");
});

Deno.test("truncateToCells never splits a wide character or a combining sequence", () => {
  assert.equal(truncateToCells("中文模型", 5), "中文…");
  assert.equal(truncateToCells("中文模型", 4), "中…", "half a wide character is not shown");
  assert.equal(truncateToCells("e\u0301e\u0301e\u0301", 3), "e\u0301e\u0301e\u0301");
  assert.equal(truncateToCells("e\u0301e\u0301e\u0301x", 3), "e\u0301e\u0301…");
  assert.equal(truncateToCells("👨‍👩‍👧 family", 4), "👨‍👩‍👧…");
  assert.equal(truncateToCells("🇯🇵🇫🇷🇩🇪", 5), "🇯🇵🇫🇷…");
});

Deno.test("truncateToCells output always fits and keeps a prefix of the text", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 40 }), fc.integer({ min: 0, max: 30 }), (
      text,
      cells,
    ) => {
      const cut = truncateToCells(text, cells);
      assert.ok(cellWidth(cut) <= cells, `${JSON.stringify(cut)} is wider than ${cells}`);
      if (cellWidth(text) <= cells) assert.equal(cut, text);
      else if (cells > 0) {
        assert.ok(cut.endsWith("…"));
        assert.ok(text.startsWith(cut.slice(0, -1)));
      }
    }),
    { numRuns: 500 },
  );
});

Deno.test("clusters are the text's grapheme clusters, and their widths add up to cellWidth", () => {
  const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" });
  const pieces = [
    "a",
    "e\u0301",
    "中",
    "👍🏽",
    "👨‍👩‍👧",
    "🇯🇵",
    "❤️",
    "1️⃣",
    "\u200d",
    "\u0301",
    "\t",
    "ｶﾞ",
  ];
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ unit: "grapheme-composite" }))),
      (parts) => {
        const text = parts.join("");
        const found: [string, number][] = [];
        forEachCluster(text, (cluster, width) => found.push([cluster, width]));
        assert.deepEqual(found.map(([c]) => c), [...segmenter.segment(text)].map((s) => s.segment));
        assert.equal(found.reduce((sum, [, w]) => sum + w, 0), cellWidth(text));
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("a mark after printable ASCII stays with its letter, in clusters and when cut", () => {
  const found: string[] = [];
  forEachCluster("abe\u0301", (cluster) => found.push(cluster));
  assert.deepEqual(found, ["a", "b", "e\u0301"]);
  assert.equal(truncateToCells("abcde\u0301fg", 6), "abcde\u0301…");
  assert.equal(truncateToCells("abcdefg\u0301", 6), "abcde…");
});

Deno.test("an emoji sequence is one glyph of two cells; a joiner joins emoji only", () => {
  assert.equal(cellWidth("☝🏽"), 2, "a text-presentation base with a skin tone");
  assert.equal(cellWidth("👩🏽‍💻"), 2);
  assert.equal(cellWidth("🏴󠁧󠁢󠁥󠁮󠁧󠁿"), 2, "a tag sequence flag");
  assert.equal(cellWidth("中\u200d中"), 4, "two ideographs stay two glyphs");
  assert.equal(cellWidth("a\ufe0f"), 2, "VS16 widens a narrow base");
  assert.equal(cellWidth("\ufe0f"), 0, "VS16 alone has nothing to widen");
  assert.equal(cellWidth("\u302a"), 0, "a wide combining tone mark takes no cell of its own");
});
