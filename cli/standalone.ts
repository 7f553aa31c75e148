/**
 * The `amber` executable for single-file builds (`deno task bundle`, `deno task compile`):
 * everything is imported statically, so the bundler and the compiler include all of it.
 * `main.ts` is the entry for `deno run`, where loading lazily keeps `--version` fast.
 *
 * @module
 */

import { runProcess } from "./process_main.ts";

if (import.meta.main) Deno.exitCode = await runProcess(Deno.args);
