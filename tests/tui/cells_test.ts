// The cell clusters the screen places text by: the same widths the status bar measures with,
// never a character split from its marks, and nothing lost.

import assert from "node:assert/strict";
import fc from "fast-check";
import { cellWidth, forEachCluster, truncateToCells } from "@amber/core/cells";

function clusters(text: string): [string, number][] {
  const out: [string, number][] = [];
  forEachCluster(text, (cluster, width) => out.push([cluster, width]));
  return out;
}

Deno.test("clusters keep marks, joiners, modifiers and flags with their base", () => {
  assert.deepEqual(clusters("ae\u0301中"), [["a", 1], ["e\u0301", 1], ["中", 2]]);
  assert.deepEqual(clusters("👨‍👩‍👧x"), [["👨‍👩‍👧", 2], ["x", 1]]);
  assert.deepEqual(clusters("👍🏽🇯🇵"), [["👍🏽", 2], ["🇯🇵", 2]]);
  assert.deepEqual(clusters("❤️❤"), [["❤️", 2], ["❤", 1]], "VS16 widens the heart it follows");
  assert.deepEqual(clusters("\u0301a"), [["\u0301", 0], ["a", 1]], "a mark with nothing before it");
  assert.deepEqual(clusters(""), []);
});

Deno.test("clusters add up to the text and to its cell width", () => {
  const pieces = ["a", " ", "中", "e\u0301", "👍", "👍🏽", "❤️", "🇯🇵", "👨‍👩‍👧", "\u200b", "ｘ"];
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 20 }), (parts) => {
      const text = parts.join("");
      const found = clusters(text);
      assert.equal(found.map(([c]) => c).join(""), text);
      assert.equal(found.reduce((sum, [, w]) => sum + w, 0), cellWidth(text));
    }),
  );
});

Deno.test("the TUI's widths are the status bar's: truncation agrees with clusters", () => {
  assert.equal(truncateToCells("中文模型", 5), "中文…");
  assert.equal(cellWidth(truncateToCells("👍🏽👍🏽👍🏽", 5)), 5);
});
