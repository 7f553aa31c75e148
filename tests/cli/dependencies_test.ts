// The CLI over a harness whose plugins depend on each other: `main` runs in-process with the
// embedder's plugin list, against a real config directory.

import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { any, type Plugin } from "@amber/core";
import { main } from "@amber/cli";
import { tempDir } from "../_helpers.ts";

function plugins(): Plugin[] {
  const plugin = (id: string, requires?: Record<string, string>): Plugin => ({
    id,
    version: "1.0.0",
    name: id,
    requires,
    bound: { commands: any() },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      kind: "command",
      name: id,
      root: id,
      help: id,
      subtree: {},
      handlers: { "": () => `${id} here` },
    }],
  });
  return [plugin("app", { base: "^1.0.0" }), plugin("base"), plugin("wants_new", { base: "^2" })];
}

async function run(dir: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(["--config-dir", dir, ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  }, { plugins });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

Deno.test("disabling a required plugin is refused naming its dependents; --cascade goes through", async () => {
  await using tmp = await tempDir();
  const refused = await run(tmp.dir, "plugins", "disable", "base");
  strictEqual(refused.code, 1);
  strictEqual(
    refused.err,
    "amber: cannot switch off 'base': active plugins require it: app (switch them off first, or cascade)",
  );
  strictEqual((await run(tmp.dir, "plugins", "info", "base")).out.includes("state: active"), true);

  const cascaded = await run(tmp.dir, "plugins", "disable", "base", "--cascade");
  strictEqual(cascaded.code, 0, cascaded.err);
  deepStrictEqual(cascaded.out.split("\n").map((l) => l.replace(/ \(saved to .*\)$/, "")), [
    "app: switched off first (it requires base)",
    "base: disabled",
  ]);
  const after = await run(tmp.dir, "plugins", "list");
  match(after.out, /app +app +1\.0\.0 +blocked: plugin 'app' requires 'base', which is off/);

  const back = await run(tmp.dir, "plugins", "enable", "base");
  strictEqual(back.code, 0, back.err);
  match(back.out, /^base: active/);
  strictEqual((await run(tmp.dir, "cmd", "app")).out, "app here");
});

Deno.test("plugins graph lists the order and what is left out, and config check reports it", async () => {
  await using tmp = await tempDir();
  const graph = await run(tmp.dir, "plugins", "graph");
  deepStrictEqual(graph.out.split("\n").map((l) => l.trim().replace(/\s+/g, " ")), [
    "1. base 1.0.0 active requires nothing",
    "2. app 1.0.0 active requires base ^1.0.0",
    "not in the order:",
    "wants_new: blocked: plugin 'wants_new' requires 'base' ^2, but 'base' is 1.0.0",
  ]);
  const check = await run(tmp.dir, "config", "check");
  strictEqual(check.code, 1);
  deepStrictEqual(check.out.split("\n"), [
    "plugin 'wants_new' is blocked: plugin 'wants_new' requires 'base' ^2, but 'base' is 1.0.0",
    "1 problem",
  ]);
});
