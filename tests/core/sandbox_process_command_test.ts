// Where `@amber/*` resolve in a plugin's process: from a source checkout, its root deno.json and its
// package folders; from a build that says where its packages are (the installed command), that
// import map alone (`--no-config`, so no deno.json anywhere applies) or that config, and read access
// to the build's folder. (tests/cli/install_test.ts runs a real sandboxed plugin importing
// `@amber/core` through the installed build.)

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type AmberPackages, pluginProcessCommand } from "@amber/core/sandbox";

const ROOT = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");

function command(packages?: AmberPackages): readonly string[] {
  return pluginProcessCommand({
    specifier: "file:///plugins/greeter/mod.ts",
    pluginId: "greeter",
    grant: {},
    workspace: "/ws",
    dataDir: "/cfg/greeter/data",
    readFolders: ["/plugins/greeter"],
    denoPath: "/bin/deno",
    env: {},
    ...(packages === undefined ? {} : { packages }),
  }).args;
}

const readAccess = (args: readonly string[]) =>
  args.find((arg) => arg.startsWith("--allow-read="))?.slice("--allow-read=".length).split(",");

Deno.test("from a source checkout: its deno.json and its package folders", () => {
  const args = command();
  assert.deepEqual(args.slice(args.indexOf("--config"), args.indexOf("--config") + 2), [
    "--config",
    join(ROOT, "deno.json"),
  ]);
  assert.equal(args.includes("--no-config"), false);
  const read = readAccess(args) ?? [];
  assert.ok(read.includes("/plugins/greeter"), read.join(","));
  assert.ok(read.includes(join(ROOT, "core")), read.join(","));
});

Deno.test("from a build with an import map: the map alone, no config, the build's folder", () => {
  const args = command({
    importMap: "/opt/amber/import_map.json",
    config: "/opt/amber/deno.json",
    folders: ["/opt/amber"],
  });
  assert.ok(args.includes("--no-config"));
  assert.ok(args.includes("--import-map=/opt/amber/import_map.json"));
  assert.equal(args.includes("--config"), false, "the import map wins over a config");
  assert.deepEqual(readAccess(args), ["/plugins/greeter", "/opt/amber"]);
});

Deno.test("from a build with a config: that config, and none of the checkout's folders", () => {
  const args = command({ config: "/opt/amber/deno.json", folders: ["/opt/amber"] });
  assert.deepEqual(args.slice(args.indexOf("--config"), args.indexOf("--config") + 2), [
    "--config",
    "/opt/amber/deno.json",
  ]);
  assert.deepEqual(readAccess(args), ["/plugins/greeter", "/opt/amber"]);
});

Deno.test("from a build that names no packages: --no-config, nothing more to read", () => {
  const args = command({ folders: [] });
  assert.ok(args.includes("--no-config"));
  assert.equal(args.some((arg) => arg.startsWith("--import-map")), false);
  assert.deepEqual(readAccess(args), ["/plugins/greeter"]);
});
