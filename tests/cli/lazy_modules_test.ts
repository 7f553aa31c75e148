// What amber loads at start: Deno walks the graph of every literal `import("...")` of a module it
// loads (cli/lazy_modules.ts), so what a command needs only when it runs is reached by computed
// specifiers, and what single-file builds run (single_file.ts) hands literal imports over for each.

import assert from "node:assert/strict";
import { join } from "node:path";
import { moduleGraph } from "../_module_graph.ts";
import { ROOT } from "./_subprocess.ts";

Deno.test("amber's start-up graph holds no command, no terminal UI, no sandbox and no MCP module", async () => {
  const { reached } = await moduleGraph(join(ROOT, "cli", "process_main.ts"), { dynamic: true });
  const paths = [...reached].map((specifier) =>
    specifier.replace(
      /^file:\/\/\/.*?\/(?=cli\/|core\/|mcp\/|plugins\/|providers\/|registries\/)/,
      "",
    )
  );
  const late = paths.filter((path) =>
    path.startsWith("cli/commands/") || path.startsWith("cli/tui/") ||
    path.startsWith("core/sandbox/") || path.startsWith("mcp/") ||
    path.includes("modelcontextprotocol") || path === "cli/third_party_start.ts" ||
    path === "cli/mcp_sources.ts"
  );
  assert.deepEqual(late, []);
  // The walk itself still reaches the host: the check above is not vacuous.
  assert.ok(paths.includes("cli/host.ts"), paths.join("\n"));
});

Deno.test("every module cli/ loads by a computed specifier is imported literally by single_file.ts", async () => {
  const names = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".ts") && entry.name !== "lazy_modules.ts") {
        const text = await Deno.readTextFile(path);
        for (const match of text.matchAll(/\bloadModule(?:<[^>]*>)?\(\s*"([^"]+)"\s*\)/g)) {
          names.add(match[1]);
        }
      }
    }
  };
  await walk(join(ROOT, "cli"));
  assert.ok(names.has("./commands/run.ts") && names.has("@amber/mcp"), [...names].join(", "));
  const standalone = await Deno.readTextFile(join(ROOT, "cli", "single_file.ts"));
  const missing = [...names].filter((name) =>
    !standalone.includes(`"${name}": () => import("${name}")`)
  );
  assert.deepEqual(missing, [], "add them to single_file.ts's provideModules call");
});
