// Plugin ids with one dotted namespace (`mcp.everything`): what amber gives the plugins it
// realizes for a session. They register, persist their on/off state under their own folder and
// come back the same after a restart; anything else with a dot is still refused.

import assert from "node:assert/strict";
import {
  PLUGIN_ID_PATTERN,
  PLUGIN_SLUG_PATTERN,
  PluginCategory,
  PluginValidationError,
  validatePlugin,
} from "@amber/core";
import { pluginStatePath } from "../../core/plugin_state.ts";
import { capabilityOf, makePlugin, makeRuntime, tempDir } from "../_helpers.ts";

Deno.test("a plugin id is a slug or one namespace, a dot and a name", () => {
  for (const id of ["notes", "mcp.everything", "mcp.my-server", "mcp.a_b-1", "files.commands"]) {
    assert.equal(PLUGIN_ID_PATTERN.test(id), true, id);
  }
  for (
    const id of ["mcp.", ".x", "a.b.c", "mcp..x", "MCP.x", "mcp.Every", "my-ns.x", "mcp.x/y", ""]
  ) {
    assert.equal(PLUGIN_ID_PATTERN.test(id), false, id);
  }
  assert.equal(PLUGIN_SLUG_PATTERN.test("notes"), true);
  assert.equal(PLUGIN_SLUG_PATTERN.test("mcp.everything"), false);
  assert.equal(PluginCategory.Mcp, "mcp");
});

Deno.test("validatePlugin takes a dotted id and still refuses a malformed one", () => {
  const plugin = (id: string) => makePlugin(id, [], { category: PluginCategory.Mcp });
  assert.equal(validatePlugin(plugin("mcp.everything")).id, "mcp.everything");
  assert.throws(() => validatePlugin(plugin("mcp.a.b")), (error: unknown) => {
    assert.ok(error instanceof PluginValidationError);
    assert.equal(error.field, "id");
    assert.match(error.message, /plugin id 'mcp\.a\.b' is not a slug/);
    return true;
  });
});

Deno.test("a dotted plugin's state persists in its own folder and a restart reads it", async () => {
  await using tmp = await tempDir();
  const plugins = () => [
    makePlugin("mcp.everything", [capabilityOf("tool", "mcp__everything__echo")], {
      category: PluginCategory.Mcp,
    }),
    makePlugin("mcp", [capabilityOf("tool", "plain")]),
  ];
  const first = makeRuntime({ configDir: tmp.dir });
  plugins().forEach((plugin) => first.runtime.register(plugin));
  await first.runtime.start();
  const written = await first.runtime.setState("mcp.everything", false);
  assert.equal(written.path, `${tmp.dir}/plugins/mcp.everything/plugin.conf`);
  assert.equal(written.path, pluginStatePath(tmp.dir, "mcp.everything"));
  assert.match(await Deno.readTextFile(written.path), /^enabled = false$/m);
  assert.deepEqual(first.registries.tool.list().map((entry) => entry.tool.name), ["t_plain"]);
  await first.runtime.stop();

  const second = makeRuntime({ configDir: tmp.dir });
  plugins().forEach((plugin) => second.runtime.register(plugin));
  await second.runtime.start();
  assert.deepEqual(
    second.runtime.list().map((view) => [view.plugin.id, view.state.status]),
    [["mcp.everything", "disabled"], ["mcp", "active"]],
  );
  await second.runtime.setState("mcp.everything", true);
  assert.deepEqual(
    second.registries.tool.list().map((entry) => entry.tool.name).toSorted(),
    ["t_mcp__everything__echo", "t_plain"],
  );
  await second.runtime.stop();
});
