// A served session's plugin selection is its own: what a client asks for when it creates a
// session, and what it switches later over the API, holds in that session's host only. The
// config directory's plugin states (the user's `amber plugins` choices) stay as they were, so
// the other sessions, and the ones created later, start from them.

import assert from "node:assert/strict";
import { join } from "node:path";
import { writePluginState } from "../../core/plugin_state.ts";
import { created, serve, type Served } from "./_served.ts";

// Every file under the config directory's `plugins/`, with its text.
async function pluginFiles(configDir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const walk = async (dir: string, prefix: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path, `${prefix}${entry.name}/`);
      else files[`${prefix}${entry.name}`] = await Deno.readTextFile(path);
    }
  };
  await walk(join(configDir, "plugins"), "");
  return files;
}

// The states of `ids` in session `id`, as the API lists them.
async function states(s: Served, id: string, ids: readonly string[]): Promise<string[]> {
  const response = await s.call("GET", `/sessions/${id}/plugins`);
  assert.equal(response.status, 200);
  const { plugins } = await response.json() as { plugins: { id: string; state: string }[] };
  return ids.map((wanted) => plugins.find((p) => p.id === wanted)?.state ?? "missing");
}

// `hello` is off by default; the user switched `tool_bash` off with `amber plugins`.
const WATCHED = ["hello", "tool_read", "tool_write", "tool_bash"] as const;
const DEFAULTS = ["disabled", "active", "active", "disabled"];

Deno.test("sessions created at once each get their own plugin selection, and nothing is saved", async () => {
  await using s = await serve();
  await writePluginState(s.configDir, "tool_bash", { enabled: false });
  const before = await pluginFiles(s.configDir);
  assert.deepEqual(Object.keys(before), ["tool_bash/plugin.conf"]);
  const [first, second] = await Promise.all([
    created(s, [], { plugins: { enable: ["hello"], disable: ["tool_read"] } }),
    created(s, [], { plugins: { enable: ["tool_bash"], disable: ["tool_write"] } }),
  ]);
  assert.deepEqual(await states(s, first, WATCHED), ["active", "disabled", "active", "disabled"]);
  assert.deepEqual(await states(s, second, WATCHED), ["disabled", "active", "disabled", "active"]);
  assert.deepEqual(await pluginFiles(s.configDir), before);
  const third = await created(s, []);
  assert.deepEqual(await states(s, third, WATCHED), DEFAULTS);
});

Deno.test("a plugin switched over the API changes that session only, and nothing is saved", async () => {
  await using s = await serve();
  await writePluginState(s.configDir, "tool_bash", { enabled: false });
  const before = await pluginFiles(s.configDir);
  const [first, second] = await Promise.all([created(s, []), created(s, [])]);
  const call = async (path: string) => {
    const response = await s.call("POST", `/sessions/${first}/plugins/${path}`);
    assert.equal(response.status, 200);
    return await response.json();
  };
  const off = await call("tool_read/disable");
  assert.equal(off.state, "disabled");
  assert.deepEqual(off.plan.plugins.map((p: { pluginId: string }) => p.pluginId), ["tool_read"]);
  assert.equal((await call("tool_bash/enable")).state, "active");
  assert.equal((await call("hello/enable")).state, "active");
  // The dry run still only plans.
  const dry = await call("tool_write/disable?dryRun=true");
  assert.equal(dry.state, undefined);
  assert.equal(dry.plan.pluginId, "tool_write");
  assert.deepEqual(await states(s, first, WATCHED), ["active", "disabled", "active", "active"]);
  assert.deepEqual(await states(s, second, WATCHED), DEFAULTS);
  assert.deepEqual(await pluginFiles(s.configDir), before);
  const later = await created(s, []);
  assert.deepEqual(await states(s, later, WATCHED), DEFAULTS);
});
