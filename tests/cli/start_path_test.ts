// What start-up leaves unloaded: a command reaches the loader of third-party plugins only when
// there is a lock file, and the records of started processes only when their folder exists or a
// tool starts a process. Both modules must stay out of the graph every command evaluates, and
// the host must look for the records where they are written.

import assert from "node:assert/strict";
import { join } from "node:path";
import { PROCESS_RECORDS_DIR } from "../../cli/host.ts";
import { RECORDS_DIR } from "../../cli/leftovers.ts";
import { moduleGraph } from "../_module_graph.ts";
import { ROOT } from "./_subprocess.ts";

Deno.test("the host looks for leftovers in the folder they are recorded in", () => {
  assert.equal(PROCESS_RECORDS_DIR, RECORDS_DIR);
});

Deno.test("cli/app.ts: the third-party loader and the process records load only when used", async () => {
  const seen = (await moduleGraph(join(ROOT, "cli", "app.ts"))).reached;
  const lazy = ["/cli/third_party.ts", "/cli/plugin_source.ts", "/cli/leftovers.ts"];
  assert.deepEqual([...seen].filter((s) => lazy.some((name) => s.endsWith(name))), []);
  assert.equal(seen.has(new URL("../../cli/host.ts", import.meta.url).href), true);
});

Deno.test("amber plugins list and the host never load the sandbox: only add, update, remove and a lock do", async () => {
  for (const module of [["cli", "commands", "plugins.ts"], ["cli", "host.ts"]]) {
    const seen = (await moduleGraph(join(ROOT, ...module))).reached;
    const sandbox = [...seen].filter((s) => s.includes("/core/sandbox/"));
    assert.deepEqual(sandbox, [], module.join("/"));
  }
});
