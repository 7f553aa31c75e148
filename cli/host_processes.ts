/**
 * The host's side of the processes the agent starts (the `bash` tool's commands and background
 * jobs): the environment they get, and the groups still running, each recorded on disk (see
 * `leftovers.ts`) until it ends. On SIGTERM or SIGHUP every group is stopped before amber exits;
 * on any other exit each is sent SIGTERM, and what survives is stopped by the next start.
 *
 * @module
 */

import type { Diagnostic, ProcessPolicy, StartedProcess } from "@amber/core";
import { childEnvironment, type EnvPolicy, signalGroup } from "@amber/plugins/process_group";
import type { WrittenRecord } from "./leftovers.ts";

/** The signals that stop amber, with the exit code each ends it with (128 + its number). */
export const STOPPING_SIGNALS: ReadonlyMap<Deno.Signal, number> = new Map([
  ["SIGTERM", 143],
  ["SIGHUP", 129],
]);

/** Options of {@linkcode HostProcesses}. */
export interface HostProcessesOptions {
  /** Where the records are kept; without one nothing is recorded. */
  readonly configDir?: string;
  /** The host's environment policy, read at every start (the configuration is live). */
  readonly policy?: () => EnvPolicy;
  /** Receives what went wrong recording a process. */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
  /**
   * After SIGTERM or SIGHUP, once every group is stopped: how long a front end that handles the
   * signal itself (`amber run` cancels the turn and commits it) gets to end on its own before
   * amber exits anyway (ms); 0, exit at once, by default.
   */
  readonly exitGraceMs?: number;
}

interface Live {
  readonly group: StartedProcess;
  // Settles once the group is gone and its record removed.
  ended?: Promise<void>;
}

/**
 * The processes one host started: implements {@linkcode ProcessPolicy} for the tools, and stops
 * them all when asked, on SIGTERM and SIGHUP, and (with SIGTERM, as nothing can wait then) on
 * exit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startProcessGroup } from "@amber/plugins/process_group";
 * import { HostProcesses } from "./host_processes.ts";
 * // The key in use is withheld under any name, even one passed on purpose.
 * Deno.env.set("AN_ODD_NAME", "sk-in-use-0001");
 * const processes = new HostProcesses({ policy: () => ({ passEnv: ["AN_ODD_NAME"] }) });
 * processes.withhold("sk-in-use-0001");
 * const { env, secrets } = processes.environment();
 * Deno.env.delete("AN_ODD_NAME");
 * assert.equal(env.AN_ODD_NAME, undefined);
 * assert.deepEqual(secrets, ["sk-in-use-0001"]);
 * const group = await startProcessGroup({
 *   argv: ["sleep", "100"],
 *   cwd: Deno.cwd(),
 *   env,
 *   onOutput: () => {},
 * });
 * processes.track(group, ["sleep", "100"]);
 * assert.equal(processes.running, 1);
 * await processes.stopAll();
 * assert.equal(processes.running, 0);
 * assert.equal((await group.finished).signal, "SIGTERM");
 * processes.close();
 * ```
 */
export class HostProcesses implements ProcessPolicy {
  readonly #options: HostProcessesOptions;
  readonly #live = new Set<Live>();
  // Records of groups already gone whose removal from disk has not finished: a group leaves
  // `#live` when it ends, before its record is removed, and `stopAll` waits for these too.
  readonly #forgetting = new Set<Promise<void>>();
  readonly #keys = new Set<string>();
  readonly #handlers = new Map<Deno.Signal, () => void>();
  readonly #onUnload = (): void => {
    for (const live of this.#live) signalGroup(live.group.pid, "SIGTERM");
  };
  #listening = false;
  #armed = false;
  /** The session the next groups belong to, for their records. */
  session: string | undefined;

  /** Creates the tracker; {@linkcode HostProcesses.listen} makes it answer signals. */
  constructor(options: HostProcessesOptions = {}) {
    this.#options = options;
  }

  /** The groups still running. */
  get running(): number {
    return this.#live.size;
  }

  /**
   * Keeps `key` (the key amber is using) from every child, under any name and even when its
   * variable is listed in `secrets.passEnv`, and redacts it from what they print.
   */
  withhold(key: string | undefined): void {
    if (key !== undefined && key !== "") this.#keys.add(key);
  }

  /** The environment for a child: see `childEnvironment` in `@amber/plugins/process_group`. */
  environment(): { readonly env: Record<string, string>; readonly secrets: readonly string[] } {
    const policy = this.#options.policy?.() ?? {};
    return childEnvironment(undefined, {
      ...policy,
      keys: [...(policy.keys ?? []), ...this.#keys],
    });
  }

  /** Tracks `group` until it ends, recording it on disk meanwhile. */
  track(group: StartedProcess, command: readonly string[]): void {
    const record = this.#record(group.pid, command);
    const live: Live = { group };
    this.#live.add(live);
    if (this.#listening) this.#arm();
    const forget = async (): Promise<void> => {
      this.#live.delete(live);
      const forgotten = record.then((written) => written?.forget());
      this.#forgetting.add(forgotten);
      try {
        await forgotten;
      } finally {
        this.#forgetting.delete(forgotten);
      }
    };
    live.ended = group.finished.then(forget, forget);
  }

  /**
   * Stops every group still running and waits until each is gone and no record of one is left on
   * disk (a group that ended on its own may still be having its record removed).
   */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#live].map(async (live) => {
      await live.group.stop().catch(() => {});
      await live.ended;
    }));
    await Promise.allSettled([...this.#forgetting]);
  }

  /**
   * Answers SIGTERM and SIGHUP by stopping every group and then exiting (143 or 129; after
   * `exitGraceMs` when the process has not ended by then), and sends the groups SIGTERM at any
   * other exit. The handlers are installed when the first group is tracked: a command that
   * starts no process pays nothing for them (~0.7 ms). {@linkcode HostProcesses.close} undoes it.
   */
  listen(): void {
    this.#listening = true;
    if (this.#live.size > 0) this.#arm();
  }

  /** Stops answering signals and exit; the groups are the caller's to stop. */
  close(): void {
    this.#listening = false;
    if (!this.#armed) return;
    this.#armed = false;
    globalThis.removeEventListener("unload", this.#onUnload);
    for (const [signal, handler] of this.#handlers) Deno.removeSignalListener(signal, handler);
    this.#handlers.clear();
  }

  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    globalThis.addEventListener("unload", this.#onUnload);
    const graceMs = this.#options.exitGraceMs ?? 0;
    for (const [signal, code] of STOPPING_SIGNALS) {
      const handler = (): void => {
        this.stopAll().finally(() => {
          // Unreferenced: a front end that ends on its own within the grace ends the process
          // with its own exit code; only one that hangs meets this timer.
          const timer = setTimeout(() => Deno.exit(code), graceMs);
          if (graceMs > 0) Deno.unrefTimer(timer);
        });
      };
      try {
        Deno.addSignalListener(signal, handler);
        this.#handlers.set(signal, handler);
      } catch {
        // Not a signal this system offers (SIGHUP on Windows).
      }
    }
  }

  async #record(pid: number, command: readonly string[]): Promise<WrittenRecord | undefined> {
    const configDir = this.#options.configDir;
    if (configDir === undefined) return undefined;
    // Loaded with the first process a tool starts: a command that starts none never needs it. A
    // literal import, read at start: this runs while a session's screen is up (lazy_modules.ts).
    const { ProcessNotRunningError, recordProcess } = await import("./leftovers.ts");
    try {
      return await recordProcess(configDir, pid, {
        command,
        ...(this.session === undefined ? {} : { session: this.session }),
      });
    } catch (error) {
      // A group that ended before it could be recorded needs no record.
      if (error instanceof ProcessNotRunningError) return undefined;
      this.#options.onDiagnostic?.({
        pluginId: "core",
        where: "processes",
        message: `cannot record process ${pid} (${command.join(" ")}): a kill -9 of amber ` +
          `would leave it running unnoticed: ${error instanceof Error ? error.message : error}`,
        error,
      });
      return undefined;
    }
  }
}
