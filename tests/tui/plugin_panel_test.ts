// The `/plugins` panel switches a plugin off only after showing the disable plan: the plugins
// that would go, in order, and every contribution each would remove. The real TUI, keys typed.

import assert from "node:assert/strict";
import { baseAndApp } from "./_console_plugins.ts";
import { startTui } from "./_harness.ts";

const UP = "\x1b[A";

Deno.test("/plugins shows the plan before switching a plugin off, and y carries out exactly that", async () => {
  await using t = await startTui({ plugins: baseAndApp() });
  const runtime = t.tui.host.runtime;
  const registries = t.tui.host.registries;
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("/plugins\r");
  await t.waitFor(/Esc close ·/, "the console");
  t.terminal.type(UP);
  await t.waitFor(/↑↓ select · Enter switch app off/);
  t.terminal.type(UP);
  await t.waitFor(/↑↓ select · Enter switch base off/);
  const before = registries.tool.entries().map((e) => `${e.owner}:${e.id}`);
  t.terminal.type("\r");
  const asked = await t.waitFor(/y switch it off · n keep it/, "the confirm step");
  const rows = asked.split("\n").map((row) => row.trim());
  const start = rows.indexOf("Switch off base?");
  assert.ok(start > 0, asked);
  assert.deepEqual(rows.slice(start, start + 10), [
    "Switch off base?",
    "",
    "switching off base would switch off 2 plugins, in this order:",
    "1. app (it requires base): 1 command, 1 tool",
    "command 'app_cmd': app_root",
    "tool 'app_tools': app_tool",
    "2. base: 1 command, 1 tool",
    "command 'base_cmd': base_root",
    "tool 'base_tools': base_tool",
    "",
  ]);
  assert.equal(runtime.state("base").status, "active", "nothing is switched off before y");
  assert.equal(runtime.state("app").status, "active");

  t.terminal.type("y");
  await t.waitFor(/base: disabled \(switched off first: app\)/, "the outcome");
  // Observed at the registries: exactly the listed tools and command roots went.
  const after = registries.tool.entries().map((e) => `${e.owner}:${e.id}`);
  assert.deepEqual(before.filter((e) => !after.includes(e)), ["base:base_tool", "app:app_tool"]);
  assert.deepEqual(after.filter((e) => !before.includes(e)), []);
  const roots = registries.command.tree().map((root) => root.name);
  assert.ok(!roots.includes("base_root") && !roots.includes("app_root"), roots.join());
  assert.equal(runtime.ledger.size("base") + runtime.ledger.size("app"), 0);
  assert.match(
    await Deno.readTextFile(`${t.configDir}/plugins/base/plugin.conf`),
    /^enabled = false$/m,
  );
});

Deno.test("/plugins: n keeps the plugin, and Enter on a plugin that is off switches it on", async () => {
  await using t = await startTui({ plugins: baseAndApp() });
  const runtime = t.tui.host.runtime;
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("/plugins\r");
  await t.waitFor(/Esc close ·/, "the console");
  t.terminal.type(UP);
  await t.waitFor(/Enter switch app off/);
  t.terminal.type("\r");
  await t.waitFor(/Switch off app\?/);
  t.terminal.type("n");
  await t.waitFor(/kept app/);
  assert.equal(runtime.state("app").status, "active");
  assert.ok(t.tui.host.registries.tool.get("app_tool") !== undefined);

  t.terminal.type("\r");
  await t.waitFor(/Switch off app\?/);
  t.terminal.type("y");
  await t.waitFor(/app: disabled/);
  await t.waitFor(/Enter switch app on/);
  t.terminal.type("\r");
  await t.waitFor(/app: active/);
  assert.equal(runtime.state("app").status, "active");
  assert.ok(t.tui.host.registries.tool.get("app_tool") !== undefined);
});
