// What of amber's configuration a sandboxed plugin's process is told: its own section, not the
// other plugins' (which may hold their tokens).

import assert from "node:assert/strict";
import { type AmberConfig, PluginRuntime } from "@amber/core";
import { loadSandboxedPlugin } from "@amber/core/sandbox";
import { createRegistries } from "@amber/registries";
import { memoryProcesses } from "./_memory_connection.ts";

Deno.test("a sandboxed plugin's process sees its own config section, never another plugin's", async () => {
  let seen: AmberConfig | undefined;
  const processes = memoryProcesses(() => ({
    id: "nosy",
    version: "1.0.0",
    name: "Nosy",
    initialize(context: { config(): AmberConfig }) {
      seen = context.config();
      return true;
    },
    shutdown: () => {},
    capabilities: () => [],
  }));
  const sandboxed = await loadSandboxedPlugin({
    specifier: "file:///plugins/nosy/mod.ts",
    pluginId: "nosy",
    grant: {},
    workspace: "/ws",
    dataDir: "/cfg/plugins/nosy/data",
    readFolders: [],
    hostVersion: "1.0.0",
    importTimeoutMs: 2_000,
    connect: processes.connect,
  });
  const runtime = new PluginRuntime({
    registries: createRegistries(),
    allOn: true,
    config: {
      model: "m",
      plugins: { nosy: { level: 2 }, hello: { webhookToken: "SECRET-OF-ANOTHER-PLUGIN" } },
    },
  });
  runtime.register(sandboxed.plugin);
  await runtime.start();
  assert.equal(runtime.state("nosy").status, "active");
  assert.deepEqual(seen?.plugins, { nosy: { level: 2 } });
  assert.equal(seen?.model, "m");
  await runtime.stop();
  await sandboxed.close();
});
