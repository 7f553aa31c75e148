// Writers of shared state run in real, concurrent amber processes: nothing one of them records
// is lost to another's read-modify-write.

import assert from "node:assert/strict";
import { join } from "node:path";
import { readPluginLock } from "@amber/cli/third-party";
import { readPluginState } from "../../core/plugin_state.ts";
import { runAmber } from "./_subprocess.ts";

function pluginSource(id: string): string {
  return `export default { id: ${JSON.stringify(id)}, version: "1.0.0", name: "P ${id}", ` +
    "initialize: () => true, shutdown() {}, capabilities: () => [] };\n";
}

Deno.test("30 concurrent `amber plugins add` of different plugins record 30 entries", async () => {
  const dir = await Deno.makeTempDir();
  const config = join(dir, "config");
  const ids = Array.from({ length: 30 }, (_, i) => `p${String(i).padStart(2, "0")}`);
  for (const id of ids) await Deno.writeTextFile(join(dir, `${id}.js`), pluginSource(id));
  // Trusted, so that 30 amber processes do not each start a process per plugin on a small
  // machine: what is tested is that no writer of the lock loses another's entry.
  const results = await Promise.all(
    ids.map((id) => runAmber(config, ["plugins", "add", join(dir, `${id}.js`), "--trusted"])),
  );
  for (const [i, result] of results.entries()) {
    assert.equal(result.code, 0, `${ids[i]}: ${result.err}`);
  }
  const recorded = (await readPluginLock(config)).plugins.map((entry) => entry.id);
  assert.deepEqual(recorded.toSorted(), ids);
  // The file locks are gone once every writer has finished.
  const leftovers = [...Deno.readDirSync(config)].map((entry) => entry.name)
    .filter((name) => name.endsWith(".lock") || name.includes(".tmp-"));
  assert.deepEqual(leftovers, []);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("concurrent `amber plugins add` and `remove` keep every other entry", async () => {
  const dir = await Deno.makeTempDir();
  const config = join(dir, "config");
  const kept = ["k0", "k1", "k2", "k3", "k4", "k5"];
  const dropped = ["d0", "d1", "d2", "d3", "d4", "d5"];
  for (const id of [...kept, ...dropped]) {
    await Deno.writeTextFile(join(dir, `${id}.js`), pluginSource(id));
  }
  for (const id of dropped) {
    assert.equal((await runAmber(config, ["plugins", "add", join(dir, `${id}.js`)])).code, 0);
  }
  const results = await Promise.all([
    ...kept.map((id) => runAmber(config, ["plugins", "add", join(dir, `${id}.js`)])),
    ...dropped.map((id) => runAmber(config, ["plugins", "remove", id])),
  ]);
  for (const result of results) assert.equal(result.code, 0, result.err);
  const recorded = (await readPluginLock(config)).plugins.map((entry) => entry.id);
  assert.deepEqual(recorded.toSorted(), kept);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("concurrent `amber plugins enable|disable` of different plugins are all recorded", async () => {
  const dir = await Deno.makeTempDir();
  const off = ["hello", "metrics", "prompts", "tool_plan", "groq", "mistral"];
  const on = ["tool_search", "moonshot", "kilocode", "local"];
  for (const id of on) {
    assert.equal((await runAmber(dir, ["plugins", "disable", id])).code, 0);
  }
  const results = await Promise.all([
    ...off.map((id) => runAmber(dir, ["plugins", "disable", id])),
    ...on.map((id) => runAmber(dir, ["plugins", "enable", id])),
  ]);
  for (const result of results) assert.equal(result.code, 0, result.err);
  for (const [ids, enabled] of [[off, false], [on, true]] as const) {
    for (const id of ids) {
      const read = await readPluginState(dir, id);
      assert.equal(read.status, "ok", `${id}: ${read.status}`);
      assert.equal(read.status === "ok" && read.record.enabled, enabled, id);
    }
  }
  await Deno.remove(dir, { recursive: true });
});
