/**
 * A host that starts a plugin process which ignores its stdin closing, prints the process's id,
 * and exits normally: only the host's unload-time kill can end the plugin process.
 *
 * @module
 */

import { spawnPluginProcess } from "@amber/core/sandbox";

const workspace = Deno.args[0];
const process = spawnPluginProcess({
  specifier: "stubborn",
  pluginId: "stubborn",
  grant: {},
  workspace,
  dataDir: `${workspace}/.data`,
  readFolders: [],
  entry: [new URL("./rpc_child.ts", import.meta.url).href],
});
await process.call("echo", {}, { deadlineMs: 30_000, what: "echo" });
console.log(process.pid);
Deno.exit(0);
