// `amber plugins disable ID --dry-run [--cascade] [--json]`: `main` runs in-process over a harness
// whose plugins depend on each other, against a real config directory.

import { deepStrictEqual, match, rejects, strictEqual } from "node:assert/strict";
import { any, type Plugin } from "@amber/core";
import { main } from "@amber/cli";
import { tempDir } from "../_helpers.ts";

// base <- app <- extra; app also has a tool.
function plugins(): Plugin[] {
  const plugin = (id: string, requires?: Record<string, string>, tool = false): Plugin => ({
    id,
    version: "1.0.0",
    name: id,
    requires,
    bound: { commands: any(), tools: any() },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [
      {
        kind: "command",
        name: `${id}_cmd`,
        root: id,
        help: id,
        subtree: {},
        handlers: { "": () => `${id} here` },
      },
      ...(tool
        ? [{
          kind: "tool" as const,
          name: `${id}_tools`,
          tools: ["look", "poke"].map((verb) => ({
            name: `${id}_${verb}`,
            description: verb,
            parameters: { type: "object", properties: {} },
            execute: () => ({ ok: true, output: verb }),
          })),
        }]
        : []),
    ],
  });
  return [plugin("base"), plugin("app", { base: "*" }, true), plugin("extra", { app: "*" })];
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

// What `plugins info` lists of a plugin's ledger: `kind 'name': ids` lines.
async function ledgerLines(dir: string, id: string): Promise<string[]> {
  const info = await run(dir, "plugins", "info", id);
  return info.out.split("\n").filter((line) => line.startsWith("    ")).map((line) => line.trim())
    .sort();
}

Deno.test("--dry-run --cascade prints what would go, in order, and changes nothing", async () => {
  await using tmp = await tempDir();
  const dry = await run(tmp.dir, "plugins", "disable", "base", "--dry-run", "--cascade");
  strictEqual(dry.code, 0, dry.err);
  deepStrictEqual(dry.out.split("\n"), [
    "switching off base would switch off 3 plugins, in this order:",
    "  1. extra (it requires base): 1 command",
    "       command 'extra_cmd': extra",
    "  2. app (it requires base): 2 tools, 1 command",
    "       tool 'app_tools': app_look, app_poke",
    "       command 'app_cmd': app",
    "  3. base: 1 command",
    "       command 'base_cmd': base",
    "(dry run: nothing was changed)",
  ]);
  await rejects(Deno.stat(`${tmp.dir}/plugins`), Deno.errors.NotFound, "no state file was written");
  for (const id of ["base", "app", "extra"]) {
    match((await run(tmp.dir, "plugins", "info", id)).out, /state: active/);
  }
  strictEqual((await run(tmp.dir, "cmd", "extra")).out, "extra here");
});

Deno.test("the --json plan equals what the real disable removes from each plugin's ledger", async () => {
  await using tmp = await tempDir();
  const dry = await run(tmp.dir, "plugins", "disable", "app", "--dry-run", "--cascade", "--json");
  strictEqual(dry.code, 0, dry.err);
  const plan = JSON.parse(dry.out) as {
    plugins: { pluginId: string; removes: { kind: string; name: string; ids: string[] }[] }[];
  };
  deepStrictEqual(plan.plugins.map((step) => step.pluginId), ["extra", "app"]);
  const ledgers = new Map<string, string[]>();
  for (const id of ["base", "app", "extra"]) ledgers.set(id, await ledgerLines(tmp.dir, id));

  const real = await run(tmp.dir, "plugins", "disable", "app", "--cascade");
  strictEqual(real.code, 0, real.err);
  for (const step of plan.plugins) {
    const listed = step.removes.map((r) => `${r.kind} '${r.name}': ${r.ids.join(", ")}`).sort();
    deepStrictEqual(listed, ledgers.get(step.pluginId), `${step.pluginId}: the plan listed it all`);
    deepStrictEqual(await ledgerLines(tmp.dir, step.pluginId), [], `${step.pluginId} kept nothing`);
  }
  deepStrictEqual(await ledgerLines(tmp.dir, "base"), ledgers.get("base"), "base was not planned");
  const tools = await run(tmp.dir, "tools");
  strictEqual(/app_look|app_poke/.test(tools.out), false, tools.out);
});

Deno.test("without --cascade a dry run that would strand dependents fails as the disable does", async () => {
  await using tmp = await tempDir();
  const dry = await run(tmp.dir, "plugins", "disable", "base", "--dry-run");
  const real = await run(tmp.dir, "plugins", "disable", "base");
  strictEqual(dry.code, 1);
  strictEqual(real.code, 1);
  strictEqual(
    dry.err,
    "amber: cannot switch off 'base': active plugins require it: extra, app (switch them off first, or cascade)",
  );
  strictEqual(dry.err, real.err);
  const json = await run(tmp.dir, "plugins", "disable", "base", "--dry-run", "--json");
  strictEqual(json.code, 1);
  deepStrictEqual(JSON.parse(json.out), {
    pluginId: "base",
    cascade: false,
    plugins: [],
    stranded: ["extra", "app"],
  });
  match((await run(tmp.dir, "plugins", "info", "base")).out, /state: active/);
});

Deno.test("a dry run of a plugin that is off removes nothing; --dry-run and --json only go with disable", async () => {
  await using tmp = await tempDir();
  strictEqual((await run(tmp.dir, "plugins", "disable", "extra")).code, 0);
  const dry = await run(tmp.dir, "plugins", "disable", "extra", "--dry-run");
  deepStrictEqual(dry.out.split("\n"), [
    "extra is disabled: switching it off removes nothing",
    "(dry run: nothing was changed)",
  ]);
  const enable = await run(tmp.dir, "plugins", "enable", "extra", "--dry-run");
  strictEqual(enable.code, 2);
  strictEqual(enable.err, "amber: --dry-run goes with plugins disable");
  const json = await run(tmp.dir, "plugins", "disable", "extra", "--json");
  strictEqual(json.code, 2);
  strictEqual(json.err, "amber: --json goes with plugins disable --dry-run");
});
