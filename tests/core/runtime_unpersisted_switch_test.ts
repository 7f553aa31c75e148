// `setState(id, on, { persist: false })`: a switch that holds for one runtime and writes no
// `plugin.conf`, so that another runtime on the same config directory keeps the user's choice
// (the per-session plugin selection of `amber serve`).

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { pluginStatePath } from "../../core/plugin_state.ts";
import { capabilityOf, makePlugin, makeRuntime, tempDir } from "../_helpers.ts";

const plugins = () => [
  makePlugin("base", [capabilityOf("tool", "base")]),
  makePlugin("app", [capabilityOf("tool", "app")], { requires: { base: "*" } }),
  makePlugin("extra", [capabilityOf("prompt", "extra")], { enabledByDefault: false }),
];

async function started(configDir: string) {
  const made = makeRuntime({ configDir });
  for (const plugin of plugins()) made.runtime.register(plugin);
  await made.runtime.start();
  return made;
}

async function listing(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return names.sort();
}

Deno.test("an unpersisted switch changes this runtime only and writes no plugin.conf", async () => {
  await using tmp = await tempDir();
  const one = await started(tmp.dir);
  const off = await one.runtime.setState("base", false, { persist: false, cascade: true });
  strictEqual(off.path, undefined);
  deepStrictEqual(off.cascaded, ["app"]);
  const on = await one.runtime.setState("extra", true, { persist: false });
  strictEqual(on.path, undefined);
  deepStrictEqual(
    one.runtime.list().map((view) => [view.plugin.id, view.state.status]),
    [["base", "disabled"], ["app", "blocked"], ["extra", "active"]],
  );
  deepStrictEqual(await listing(`${tmp.dir}/plugins`), []);
  // A second runtime on the same directory starts from the defaults.
  const two = await started(tmp.dir);
  deepStrictEqual(
    two.runtime.list().map((view) => [view.plugin.id, view.state.status]),
    [["base", "active"], ["app", "active"], ["extra", "disabled"]],
  );
  await one.runtime.stop();
  await two.runtime.stop();
});

Deno.test("an unpersisted switch leaves a plugin.conf the user wrote as it was", async () => {
  await using tmp = await tempDir();
  const seeded = await started(tmp.dir);
  await seeded.runtime.setState("extra", true);
  await seeded.runtime.stop();
  const path = pluginStatePath(tmp.dir, "extra");
  const before = await Deno.readTextFile(path);
  const session = await started(tmp.dir);
  strictEqual(session.runtime.state("extra").status, "active");
  await session.runtime.setState("extra", false, { persist: false });
  strictEqual(session.runtime.state("extra").status, "disabled");
  strictEqual(await Deno.readTextFile(path), before);
  // The ordinary switch still persists.
  const written = await session.runtime.setState("extra", false);
  strictEqual(written.path, path);
  await session.runtime.stop();
});
