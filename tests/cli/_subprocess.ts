// The CLI tests run amber as a user does: `deno run` of cli/main.ts in a real subprocess. One
// runner for all of them.

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { amberTaskFlags } from "../../tools/amber_task.ts";

/** The repository's root. */
export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url));
/** The CLI's entry point. */
export const MAIN: string = join(ROOT, "cli", "main.ts");
/**
 * The flags `deno task amber` runs amber with (`--quiet`, `--node-modules-dir=manual`, its V8
 * heap size), its permissions left out: the tests run amber as the task does. `--quiet` matters
 * on a terminal: Deno's module loader writes "clear to the end of the screen" to stderr each time
 * a module it had not read yet is imported, and an import after the interactive session's first
 * frame (the model catalog's, computed) wiped the prompt and the status bar.
 */
export const TASK_FLAGS: readonly string[] = amberTaskFlags(ROOT);
/** What `deno task amber` grants, with the network narrowed to loopback for tests. */
export const PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-net=127.0.0.1",
  "--allow-run",
];

/** What a subprocess did. */
export interface Result {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** How to run one. */
export interface RunOptions {
  /** The working directory. */
  readonly cwd?: string;
  /** Variables added to the inherited environment (NO_COLOR is always set). */
  readonly env?: Record<string, string>;
  /** Trim trailing white space from the output (default true). */
  readonly trim?: boolean;
  /** Extra `deno run` flags before the entry point (amber only). */
  readonly flags?: readonly string[];
}

/** Runs `deno <args>` and collects its output. */
export async function runDeno(args: readonly string[], options: RunOptions = {}): Promise<Result> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [...args],
    cwd: options.cwd,
    env: { NO_COLOR: "1", ...options.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => {
    const text = new TextDecoder().decode(bytes);
    return options.trim === false ? text : text.trimEnd();
  };
  return { code: output.code, out: decode(output.stdout), err: decode(output.stderr) };
}

/** Runs `amber <args>` with `configDir` as its config directory. */
export function runAmber(
  configDir: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<Result> {
  return runDeno(["run", ...TASK_FLAGS, ...PERMISSIONS, ...(options.flags ?? []), MAIN, ...args], {
    ...options,
    env: { AMBER_CONFIG_DIR: configDir, ...options.env },
  });
}
