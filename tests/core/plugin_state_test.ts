import { deepStrictEqual, match, ok, strictEqual, throws } from "node:assert/strict";
import { PluginStateError } from "@amber/core";
import {
  formatPluginState,
  parsePluginState,
  pluginStatePath,
  readPluginState,
  writePluginState,
} from "../../core/plugin_state.ts";

Deno.test("plugin.conf round-trips through format and parse", () => {
  for (const enabled of [true, false]) {
    deepStrictEqual(parsePluginState(formatPluginState("x", { enabled }), "f"), { enabled });
  }
  deepStrictEqual(parsePluginState("enabled=off\r\n", "f"), { enabled: false });
});

Deno.test("a malformed plugin.conf names the file and the line", () => {
  const cases: [string, RegExp][] = [
    ["# c\nenabled: true\n", /^f:2: expected 'key = value'/],
    ["enabled = maybe\n", /^f:1: 'enabled' must be true or false, found 'maybe'/],
    ["enabled = true\ncolour = red\n", /^f:2: unknown key 'colour'/],
    ["enabled = true\nenabled = false\n", /^f:2: 'enabled' is set twice/],
    ["# nothing\n", /^f: no 'enabled' line/],
  ];
  for (const [text, pattern] of cases) {
    throws(() => parsePluginState(text, "f"), (error: unknown) => {
      ok(error instanceof PluginStateError);
      match(error.message, pattern);
      return true;
    });
  }
});

Deno.test("read reports absent, ok and corrupt without throwing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    strictEqual((await readPluginState(dir, "p")).status, "absent");
    await writePluginState(dir, "p", { enabled: false });
    const read = await readPluginState(dir, "p");
    strictEqual(read.status, "ok");
    strictEqual(read.status === "ok" && read.record.enabled, false);
    await Deno.writeTextFile(pluginStatePath(dir, "p"), "garbage\n");
    const corrupt = await readPluginState(dir, "p");
    strictEqual(corrupt.status, "corrupt");
    match(corrupt.status === "corrupt" ? corrupt.error.message : "", /plugin\.conf:1:/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writing over a corrupt file keeps the old text in a backup", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/plugins/p`, { recursive: true });
    await Deno.writeTextFile(pluginStatePath(dir, "p"), "my notes, not a state file\n");
    const written = await writePluginState(dir, "p", { enabled: true });
    ok(written.backup);
    strictEqual(await Deno.readTextFile(written.backup), "my notes, not a state file\n");
    const read = await readPluginState(dir, "p");
    strictEqual(read.status === "ok" && read.record.enabled, true);
    const names = [...Deno.readDirSync(`${dir}/plugins/p`)].map((e) => e.name).sort();
    strictEqual(names.length, 2, `no temporary file is left behind: ${names}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
