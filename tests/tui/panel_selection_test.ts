// The `/plugins` panel keeps the selected plugin on the page however long the list is, with what
// Enter would do above it; and a diagnostic the interactive session shows never carries the key.

import assert from "node:assert/strict";
import type { Plugin } from "@amber/core";
import { startTui } from "./_harness.ts";

const UP = "\x1b[A";
const DOWN = "\x1b[B";
const HOME = "\x1b[H";

// Plenty of plugins in a category that sorts after every bundled one: the list is far longer
// than the page.
function many(count: number): Plugin[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `p${String(i).padStart(2, "0")}`,
    version: "1.0.0",
    name: `Plugin ${i}`,
    category: "zz_many",
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [],
  }));
}

function rowsOf(screen: string): string[] {
  return screen.split("\n").map((row) => row.trim());
}

Deno.test("/plugins scrolls so the selected plugin is shown, under what Enter would do", async () => {
  await using t = await startTui({ plugins: many(30), rows: 14 });
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("/plugins\r");
  await t.waitFor(/Esc close ·/, "the console");

  // ↑ from nothing selects the last plugin, at the very end of the list.
  t.terminal.type(UP);
  let rows = rowsOf(await t.waitFor(/^ *› p29 /m, "the last plugin, selected and shown"));
  assert.equal(rows[1], "↑↓ select · Enter switch p29 off");
  assert.equal(rows[2], "p29 (Plugin 29 1.0.0, active) · contributes nothing");
  assert.equal(rows[3], "");
  assert.match(rows.at(-1)!, /of \d+$/, "the list is longer than the page");

  // Scrolled away with a key the panel does not use, the next selection is brought back.
  t.terminal.type(HOME);
  await t.waitFor((screen) => !/^ *› p/m.test(screen), "the selection scrolled off the page");
  t.terminal.type(UP);
  rows = rowsOf(await t.waitFor(/^ *› p28 /m, "p28, selected and shown"));
  assert.equal(rows[1], "↑↓ select · Enter switch p28 off");

  // Going up the list shows each selection in turn, the heading staying put.
  for (let i = 27; i >= 10; i--) t.terminal.type(UP);
  rows = rowsOf(await t.waitFor(/^ *› p10 /m, "p10, selected and shown"));
  assert.equal(rows[1], "↑↓ select · Enter switch p10 off");
  t.terminal.type(DOWN);
  await t.waitFor(/^ *› p11 /m, "p11, selected and shown");
});

Deno.test("a diagnostic the interactive session shows has the key in use redacted", async () => {
  const key = "sk-h10-tui-key-8642";
  const leaky: Plugin = {
    id: "leaky",
    version: "1.0.0",
    name: "Leaky",
    initialize: () => {
      throw new Error(`cannot use ${key}`);
    },
    shutdown: () => {},
    capabilities: () => [],
  };
  await using t = await startTui({
    plugins: [leaky],
    columns: 120,
    env: (name) => name === "OPENAI_API_KEY" ? key : undefined,
  });
  const screen = await t.waitFor(/plugin 'leaky'/, "the diagnostic");
  assert.match(screen, /plugin 'leaky' \(activation\): initialize failed: cannot use \[redacted\]/);
  assert.ok(!screen.includes(key), screen);
});
