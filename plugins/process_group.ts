/**
 * Child processes that run in a process group of their own, so that stopping one stops
 * everything it started; and the environment they get, without the parent's keys. The `bash`
 * tool uses them, and so does the CLI's background job service: this module is where both
 * import them from, so neither depends on the other.
 *
 * @module
 */

import { hasCommand } from "./_workspace.ts";

/** How long a stopped group gets between SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 2000;

// Names of the usual shapes of credentials: never handed to a child unless passed on purpose.
const SECRET_NAME = /(?:^|_)(?:KEY|SECRET|PASSWORD|TOKEN|PAT|CREDENTIALS)$/i;
// Values shorter than this are too likely to occur by chance to be looked for inside other values
// or redacted from output; a shorter key is still withheld where it stands whole.
const MIN_REDACTED = 8;

/** What, beyond the usual secret shapes, is kept from a child, and what is passed on purpose. */
export interface EnvPolicy {
  /**
   * Variables passed even when their name looks like a secret (`secrets.passEnv` in config.yaml);
   * never a variable holding one of {@linkcode EnvPolicy.keys}.
   */
  readonly passEnv?: readonly string[];
  /** Names of variables that hold keys (every provider's key variable), whatever their shape. */
  readonly keyNames?: readonly (string | undefined)[];
  /**
   * Keys never handed to a child under any name, even one listed in `passEnv`: the key amber is
   * using. A variable whose value contains one is withheld.
   */
  readonly keys?: readonly string[];
}

/** A child's environment and the secret values left out of it. */
export interface ChildEnvironment {
  /** The parent's variables minus the secrets; see {@linkcode childEnvironment}. */
  readonly env: Record<string, string>;
  /** The values left out (and the policy's keys), for {@linkcode redactSecrets}. */
  readonly secrets: readonly string[];
}

/**
 * The environment for a child process: the parent's, without its secrets, so that a command can
 * never print a key. Left out are, in this order of precedence:
 *
 * 1. every variable whose value is or contains one of the policy's `keys`, whatever its name,
 *    even one listed in `passEnv`;
 * 2. unless listed in `passEnv`: every variable named like a secret (`*_KEY`, `*_SECRET`,
 *    `*_PASSWORD`, `*_TOKEN`, `*_PAT`, `*_CREDENTIALS`, any case), every variable of the policy's
 *    `keyNames`, and every variable whose value contains the value of one of those.
 *
 * Without the env permission the child gets an empty environment rather than an unfiltered one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { childEnvironment } from "@amber/plugins/process_group";
 * const key = "sk-0123456789";
 * const { env, secrets } = childEnvironment(
 *   { PATH: "/bin", OPENAI_API_KEY: key, GH_TOKEN: "ghp_abcdefgh", ODD: key, LLM: "x-llm-key1" },
 *   { passEnv: ["GH_TOKEN", "ODD"], keyNames: ["LLM"], keys: [key] },
 * );
 * assert.deepEqual(env, { PATH: "/bin", GH_TOKEN: "ghp_abcdefgh" });
 * assert.deepEqual(secrets, [key, "x-llm-key1"]);
 * ```
 */
export function childEnvironment(
  source?: Record<string, string>,
  policy: EnvPolicy = {},
): ChildEnvironment {
  let all: Record<string, string>;
  try {
    all = source ?? Deno.env.toObject();
  } catch {
    return { env: {}, secrets: [] };
  }
  const keys = (policy.keys ?? []).filter((key) => key !== "");
  const passed = new Set(policy.passEnv ?? []);
  const keyNames = new Set(policy.keyNames?.filter((name) => name !== undefined));
  const nameIsSecret = (name: string): boolean => SECRET_NAME.test(name) || keyNames.has(name);
  // Provider keys found under their own names, sought also inside other variables.
  const keyValues = Object.entries(all)
    .filter(([name, value]) => keyNames.has(name) && value.length >= MIN_REDACTED)
    .map(([, value]) => value);
  const holds = (value: string, secrets: readonly string[]): boolean =>
    secrets.some((secret) =>
      value === secret || (secret.length >= MIN_REDACTED && value.includes(secret))
    );

  const env: Record<string, string> = {};
  const secrets = new Set(keys.filter((key) => key.length >= MIN_REDACTED));
  for (const [name, value] of Object.entries(all)) {
    const withheld = holds(value, keys) ||
      (!passed.has(name) && (nameIsSecret(name) || holds(value, keyValues)));
    if (!withheld) env[name] = value;
    else if (value.length >= MIN_REDACTED) secrets.add(value);
  }
  return { env, secrets: [...secrets] };
}

/**
 * `text` with every secret value replaced by `[redacted]`: a second line of defence for output
 * that reads a key from somewhere else (a `.env` file).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { redactSecrets } from "@amber/plugins/process_group";
 * assert.equal(redactSecrets("key=sk-12345678", ["sk-12345678"]), "key=[redacted]");
 * ```
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first: a secret that contains another would otherwise keep its other characters.
  const ordered = secrets.length > 1 ? [...secrets].sort((a, b) => b.length - a.length) : secrets;
  for (const secret of ordered) {
    if (out.includes(secret)) out = out.replaceAll(secret, "[redacted]");
  }
  return out;
}

/** Options of {@linkcode startProcessGroup}. */
export interface ProcessGroupOptions {
  /** The program and its arguments. */
  readonly argv: readonly string[];
  /** The working directory. */
  readonly cwd: string;
  /** The whole environment; see {@linkcode childEnvironment}. */
  readonly env: Record<string, string>;
  /** Receives output as it arrives, stdout and stderr alike, decoded. */
  readonly onOutput: (text: string) => void;
}

/** How a process group ended. */
export interface GroupExit {
  /** The leader's exit code; 128 + the signal number when a signal ended it. */
  readonly code: number;
  /** The signal that ended the leader, if one did. */
  readonly signal?: string;
}

/** A running process group. */
export interface ProcessGroup {
  /** The leader's pid, which is also the group id. */
  readonly pid: number;
  /**
   * Settles when the leader has exited and the output has ended. Whatever the leader left
   * running in its group is stopped then (SIGTERM, then SIGKILL), so this means the group is
   * gone.
   */
  readonly finished: Promise<GroupExit>;
  /** Whether `finished` has settled. */
  readonly done: boolean;
  /** Stops the whole group: SIGTERM, SIGKILL after the grace period; resolves when it is gone. */
  stop(graceMs?: number): Promise<GroupExit>;
}

/**
 * Starts `argv` as the leader of a new session and process group: through `setsid` when it is
 * installed, else with Deno's `detached` spawn, which makes the same system call. Standard input
 * is closed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { childEnvironment, startProcessGroup } from "@amber/plugins/process_group";
 * let output = "";
 * const group = await startProcessGroup({
 *   argv: ["bash", "-c", "echo hi; exec sleep 100"],
 *   cwd: Deno.cwd(),
 *   env: childEnvironment().env,
 *   onOutput: (text) => (output += text),
 * });
 * while (!output.includes("hi")) await new Promise((resolve) => setTimeout(resolve, 10));
 * const exit = await group.stop();
 * assert.equal(output, "hi\n");
 * assert.equal(exit.signal, "SIGTERM");
 * assert.equal(group.done, true);
 * ```
 */
export async function startProcessGroup(options: ProcessGroupOptions): Promise<ProcessGroup> {
  const setsid = await hasCommand("setsid");
  const argv = setsid ? ["setsid", ...options.argv] : [...options.argv];
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: !setsid,
  }).spawn();
  const pid = child.pid;
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const pump = async (reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> => {
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        if (text !== "") options.onOutput(text);
      }
    } catch {
      // Cancelled, or the pipe broke: either way the output is over.
    }
    const rest = decoder.decode();
    if (rest !== "") options.onOutput(rest);
  };
  const outputEnded = Promise.all(readers.map(pump)).then(() => {});
  const cancelReaders = (): void => {
    for (const reader of readers) reader.cancel().catch(() => {});
  };

  let done = false;
  let reaped = false;
  child.status.then(() => (reaped = true), () => (reaped = true));
  // Right after the spawn `setsid` may not have made the group yet: then the leader, which has
  // started nothing so far, is signalled alone. Its pid is safe to use until it is reaped.
  const signalAll = (signal: Deno.Signal): void => {
    try {
      Deno.kill(-pid, signal);
    } catch {
      if (reaped) return;
      try {
        Deno.kill(pid, signal);
      } catch {
        // It exited meanwhile.
      }
    }
  };
  let stopping: Promise<void> | undefined;
  // TERM, then KILL, then give up on pipes held by something that escaped the group.
  const stopGroup = (graceMs: number): Promise<void> =>
    stopping ??= (async () => {
      signalAll("SIGTERM");
      if (await settles(outputEnded, graceMs)) return;
      signalAll("SIGKILL");
      if (await settles(outputEnded, graceMs)) return;
      cancelReaders();
    })();

  const finished = (async (): Promise<GroupExit> => {
    const status = await child.status;
    // Background children may outlive the leader and hold the pipes open: stop them.
    if (!(await settles(outputEnded, 0))) await stopGroup(STOP_GRACE_MS);
    await outputEnded;
    done = true;
    return status.signal === null ? { code: status.code } : {
      code: status.code,
      signal: status.signal,
    };
  })();

  return {
    pid,
    finished,
    get done(): boolean {
      return done;
    },
    async stop(graceMs = STOP_GRACE_MS): Promise<GroupExit> {
      if (!done) await stopGroup(graceMs);
      return await finished;
    },
  };
}

/**
 * Sends `signal` to every process in the group led by `pid`; a group that is already gone is
 * not an error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signalGroup } from "@amber/plugins/process_group";
 * // No such group: nothing happens, and nothing is thrown.
 * assert.equal(signalGroup(2 ** 22 + 12345, "SIGTERM"), undefined);
 * ```
 */
export function signalGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left to signal.
  }
}

// Whether `promise` settles within `ms`, with the timer cleared either way so nothing leaks.
async function settles(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
