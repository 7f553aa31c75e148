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
    const write = (stream: typeof Deno.stdout, text: string) => {
      const bytes = encoder.encode(text);
      let written = 0;
      while (written < bytes.length) written += stream.writeSync(bytes.subarray(written));
    };
    Deno.exitCode = await main(Deno.args, {
      out: (text) => write(Deno.stdout, `${text}\n`),
      err: (text) => write(Deno.stderr, `${text}\n`),
      write: (text) => write(Deno.stdout, text),
    });
  }
}
