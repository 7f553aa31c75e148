/**
 * `amber` as a process: runs the command line against the real standard streams and sets the
 * exit code. `main.ts` (for `deno run`) and the single-file builds (`single_file.ts`, for
 * `deno bundle`, `deno compile` and the build `deno task install` installs) share it.
 *
 * @module
 */

import { main } from "./app.ts";
import { containStrayErrors, hasAbandonedWork, stackFiles } from "./containment.ts";

/**
 * Runs `args` as the `amber` command with stdout and stderr as its streams, and resolves to the
 * exit code. Every write is complete before the next starts, so a streamed answer piped into
 * another program arrives whole and in order.
 *
 * An error nothing handled (a rejection nobody awaited, a throw from a timer) does not end the
 * process: an open host reports it against the plugin it came from, and outside a host it is
 * printed. When plugin work past its deadline was abandoned (a hung import, initialize or
 * command handler), the process ends as soon as the command is done, with its exit code,
 * rather than waiting for that work.
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
  const err = (text: string) => write(Deno.stderr, `${text}\n`);
  // Below any host's: what arrives while no host is open (before, or after it closed).
  using _strays = containStrayErrors((error) => {
    const [file] = stackFiles(error);
    const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    err(`amber: an error nothing handled: ${what}${file === undefined ? "" : ` (at ${file})`}`);
    return true;
  });
  const code = await main(args, {
    out: (text) => write(Deno.stdout, `${text}\n`),
    err,
    write: (text) => write(Deno.stdout, text),
  });
  if (hasAbandonedWork()) Deno.exit(code);
  return code;
}
