/**
 * The `amber` executable for single-file builds (`deno task bundle`, `deno task compile`): what
 * it runs is imported by literal specifiers, so the bundler and the compiler include all of it.
 * `main.ts` is the entry for `deno run`, where loading lazily keeps `--version` fast.
 *
 * The single file is also what a sandboxed plugin's process runs, as there is no plugin-process
 * module beside it: started with `--amber-plugin-process <specifier>` it serves that plugin
 * over stdin/stdout instead of being amber, and loads nothing of amber's commands.
 *
 * @module
 */

import { PLUGIN_PROCESS_FLAG } from "./plugin_process_entry.ts";
import { VERSION } from "./version.ts";

if (import.meta.main) {
  if (Deno.args.length === 1 && Deno.args[0] === "--version") {
    console.log(`amber ${VERSION}`);
  } else if (Deno.args[0] === PLUGIN_PROCESS_FLAG) {
    const { runPluginProcess } = await import("@amber/core/sandbox");
    await runPluginProcess(Deno.args[1] ?? "");
  } else {
    const { runSingleFile } = await import("./single_file.ts");
    Deno.exitCode = await runSingleFile(Deno.args, { mainModule: Deno.mainModule });
  }
}
