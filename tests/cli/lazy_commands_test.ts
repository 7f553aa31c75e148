// Each command's module is evaluated only when that command runs, or when the help lists them
// all: `amber run` does not pay for `demo`, `plugin new` or `plugins add`. The table in
// cli/app.ts knows each command's name and options before loading it, so it must agree with the
// command its module exports.

import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS, main } from "../../cli/app.ts";
import { moduleGraph } from "../_module_graph.ts";
import { ROOT } from "./_subprocess.ts";

Deno.test("COMMANDS: every entry's name and options are those of the command it loads", async () => {
  const names = COMMANDS.map((entry) => entry.name);
  strictEqual(new Set(names).size, names.length, `a name twice: ${names.join(", ")}`);
  for (const entry of COMMANDS) {
    const command = await entry.load();
    strictEqual(command.name, entry.name);
    deepStrictEqual(command.options ?? [], entry.options ?? [], `${entry.name}: options`);
    deepStrictEqual(command.flags ?? [], entry.flags ?? [], `${entry.name}: flags`);
  }
});

Deno.test("cli/app.ts: no command module is in the graph evaluated before a command runs", async () => {
  // Static imports only: `deno info` lists a dynamic import's target too, but marks it.
  const { listed, reached: seen } = await moduleGraph(join(ROOT, "cli", "app.ts"));
  const commands = [...seen].filter((specifier) => specifier.includes("/cli/commands/"));
  deepStrictEqual(commands, []);
  // The dynamic imports are there, with literal specifiers, for `deno compile` to include.
  strictEqual(listed.some((specifier) => specifier.endsWith("/cli/commands/demo.ts")), true);
});

Deno.test("--help loads every command and lists each one's usage", async () => {
  const out: string[] = [];
  strictEqual(await main(["--help"], { out: (text) => out.push(text), err: () => {} }), 0);
  for (const entry of COMMANDS) {
    const command = await entry.load();
    strictEqual(out[0].includes(command.usage), true, `${entry.name} missing from the help`);
  }
  match(out[0], /^usage: amber <command> \[options\]$/m);
});
