/**
 * `amber` as a process: runs the command line against the real standard streams and sets the
 * exit code. The two entry points share it: `main.ts` (for `deno run` and `deno install`) and
 * `standalone.ts` (for `deno bundle` and `deno compile`).
 *
 * @module
 */

import { main } from "./app.ts";

/**
 * Runs `args` as the `amber` command with stdout and stderr as its streams, and resolves to the
 * exit code. Every write is complete before the next starts, so a streamed answer piped into
 * another program arrives whole and in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runProcess } from "./process_main.ts";
 * assert.equal(await runProcess(["--version"]), 0);
 * ```
 */
export async function runProcess(args: readonly string[]): Promise<number> {
  const encoder = new TextEncoder();
  const write = (stream: typeof Deno.stdout, text: string) => {
    const bytes = encoder.encode(text);
    let written = 0;
    while (written < bytes.length) written += stream.writeSync(bytes.subarray(written));
  };
  return await main(args, {
    out: (text) => write(Deno.stdout, `${text}\n`),
    err: (text) => write(Deno.stderr, `${text}\n`),
    write: (text) => write(Deno.stdout, text),
  });
}
