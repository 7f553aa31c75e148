/**
 * The `amber` executable. `--version` answers before anything else is loaded, so it costs only
 * Deno's own start-up.
 *
 * @module
 */

import { VERSION } from "./version.ts";

if (import.meta.main) {
  if (Deno.args.length === 1 && Deno.args[0] === "--version") {
    console.log(`amber ${VERSION}`);
  } else {
    const { main } = await import("./app.ts");
    const encoder = new TextEncoder();
    const write = (stream: typeof Deno.stdout, text: string) =>
      stream.writeSync(encoder.encode(`${text}\n`));
    Deno.exitCode = await main(Deno.args, {
      out: (text) => write(Deno.stdout, text),
      err: (text) => write(Deno.stderr, text),
    });
  }
}
