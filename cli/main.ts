/**
 * The `amber` executable, for `deno run` and `deno install`. `--version` answers before
 * anything else is loaded, so it costs only Deno's own start-up.
 *
 * @module
 */

import { VERSION } from "./version.ts";

if (import.meta.main) {
  if (Deno.args.length === 1 && Deno.args[0] === "--version") {
    console.log(`amber ${VERSION}`);
  } else {
    // `deno run` builds the module graph of its entry point before running it, and follows
    // dynamic imports whose specifier is a literal; one that is computed is loaded only when it
    // runs. Without this, `--version` walked all of amber's ~185 modules first (measured: 60 ms
    // against 43 ms, Deno's floor being ~33). Single-file builds start from `standalone.ts`,
    // which imports the same module statically so that the bundler and compiler include it.
    const entry = ["./process_main", "ts"].join(".");
    const { runProcess }: typeof import("./process_main.ts") = await import(entry);
    Deno.exitCode = await runProcess(Deno.args);
  }
}
