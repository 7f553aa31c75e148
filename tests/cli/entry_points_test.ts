// The two entry points of the `amber` executable: `cli/main.ts` (deno run, deno install) must not
// pull the rest of amber into the module graph Deno builds before it runs, so that `--version`
// costs only Deno's start-up; `cli/standalone.ts` (deno bundle, deno compile) must hold all of
// it, the interactive session included, or the single-file builds would lack it.

import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { tempDir } from "../_helpers.ts";
import { moduleGraph } from "../_module_graph.ts";
import { MAIN, ROOT, runAmber } from "./_subprocess.ts";

const toFileUrl = (path: string): string => pathToFileURL(path).href;

Deno.test("cli/main.ts: the graph Deno builds at start is the entry and the version only", async () => {
  const modules = (await moduleGraph(MAIN, { dynamic: true })).reached;
  strictEqual(modules.has(toFileUrl(join(ROOT, "cli", "version.ts"))), true);
  strictEqual(modules.has(toFileUrl(join(ROOT, "cli", "app.ts"))), false);
  // The entry, the version, and the package's deno.json the version is read from.
  const code = [...modules].filter((specifier) => specifier.endsWith(".ts"));
  strictEqual(code.length, 2, code.join("\n"));
});

Deno.test("cli/standalone.ts: the graph holds every command and the interactive session", async () => {
  const modules =
    (await moduleGraph(join(ROOT, "cli", "standalone.ts"), { dynamic: true })).reached;
  for (
    const path of ["app.ts", "commands/run.ts", "commands/tui.ts", "tui/app.ts", "session/mod.ts"]
  ) {
    strictEqual(modules.has(toFileUrl(join(ROOT, "cli", path))), true, path);
  }
});

Deno.test("cli/main.ts loads the rest when a command needs it, with amber's own permissions", async () => {
  await using tmp = await tempDir();
  const version = await runAmber(tmp.dir, ["--version"]);
  strictEqual(version.code, 0, version.err);
  strictEqual(version.out.startsWith("amber "), true);
  const tools = await runAmber(tmp.dir, ["tools"]);
  strictEqual(tools.code, 0, tools.err);
  strictEqual(tools.out.includes("read"), true, tools.out);
});
