/**
 * The entry module of a sandboxed plugin's process:
 * `deno run --no-prompt <the plugin's grant> child_main.ts <specifier>`. It serves the plugin at
 * `specifier` (the last argument) over stdin and stdout until the host closes stdin or says
 * `shutdown`; see `runPluginProcess` in `child.ts`.
 *
 * @module
 */

import { runPluginProcess } from "./child.ts";

if (import.meta.main) await runPluginProcess(Deno.args.at(-1) ?? "");
