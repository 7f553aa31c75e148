/**
 * The process a sandboxed plugin runs in: a child `deno run` with exactly the Deno permissions
 * its grant becomes (see {@linkcode denoPermissionFlags}), an environment holding nothing of the
 * host's secrets, the protocol on its stdin and stdout and its log on stderr.
 *
 * Whatever the process does wrong ends it with one verdict (`ended`): it exits (the code and
 * its last error line), it writes something to stdout that is not the protocol (killed at
 * once), a call outlives its deadline (killed: a spin loop never yields, so it cannot be asked
 * to stop). The host stays up either way. A host that exits normally kills the processes it
 * left running; one killed outright leaves them to notice their stdin closing and exit.
 *
 * @example
 * ```ts ignore
 * import { spawnPluginProcess } from "@amber/core/sandbox";
 * const process = spawnPluginProcess({
 *   specifier: "file:///plugins/greeter/mod.ts",
 *   pluginId: "greeter",
 *   grant: { read: ["src"] },
 *   workspace: "/ws",
 *   dataDir: "/home/me/.config/amber/plugins/greeter/data",
 *   readFolders: ["/plugins/greeter"],
 * });
 * const manifest = await process.call("describe", { protocolVersion: 1, hostVersion: "1.0.0" }, {
 *   deadlineMs: 5_000,
 *   what: "the import of plugin 'greeter'",
 * });
 * await process.stop();
 * ```
 *
 * @module
 */

import { DeadlineError } from "../limits.ts";
import type { CallOptions, ConnectionEnd, PluginConnection } from "./connection.ts";
import { PeerClosedError, type ProtocolError, RpcPeer } from "./json_rpc.ts";
import {
  checkoutPackages,
  type NpmResolution,
  pluginProcessCommand,
  PluginProcessError,
  type SpawnPluginOptions,
} from "./process_command.ts";

const LOG_LINES = 20;
const MAX_LOG_LINE = 64 * 1024;
const STDERR_GRACE_MS = 250;
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Starts the process of a plugin (see {@linkcode pluginProcessCommand}) and connects to it.
 * Throws a {@linkcode PluginProcessError} when it cannot start, and a `PermissionsError` when
 * the grant cannot become Deno's flags.
 *
 * @example
 * ```ts ignore
 * import { spawnPluginProcess } from "@amber/core/sandbox";
 * const process = spawnPluginProcess({
 *   specifier: "file:///plugins/greeter/mod.ts",
 *   pluginId: "greeter",
 *   grant: {},
 *   workspace: "/ws",
 *   dataDir: "/cfg/greeter/data",
 *   readFolders: ["/plugins/greeter"],
 * });
 * console.log((await process.ended).reason);
 * ```
 */
export function spawnPluginProcess(options: SpawnPluginOptions): PluginProcess {
  const lockFile = options.npm === undefined
    ? undefined
    : writeLockFile(options.npm, (options.packages ?? checkoutPackages())?.lock);
  const command = pluginProcessCommand(lockFile === undefined ? options : { ...options, lockFile });
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(command.command, {
      args: [...command.args],
      cwd: command.cwd,
      clearEnv: true,
      env: { ...command.env },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      // Its own process group: a kill ends the commands it was granted to start too, and a
      // record of it can stop the whole group later.
      detached: true,
    }).spawn();
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? `no deno at ${command.command}, or no folder ${command.cwd}`
      : error instanceof Error
      ? error.message
      : String(error);
    if (lockFile !== undefined) removeQuietly(lockFile);
    throw new PluginProcessError(options.pluginId, why, { cause: error });
  }
  const spawned = new PluginProcess(child, options.onLog);
  if (lockFile !== undefined) spawned.ended.finally(() => removeQuietly(lockFile));
  try {
    options.onSpawn?.({ pid: child.pid, finished: spawned.ended, stop: () => spawned.stop() });
  } catch {
    // A host that cannot record it still has it: the record is for after a kill -9.
  }
  return spawned;
}

// amber's own lock (the process may load amber's packages too) with the plugin's resolution
// added; a plugin's entry wins where both name a specifier.
function writeLockFile(npm: NpmResolution, amberLock: string | undefined): string {
  let base: { specifiers?: Record<string, string>; npm?: Record<string, unknown> } = {};
  if (amberLock !== undefined) {
    try {
      base = JSON.parse(Deno.readTextFileSync(amberLock));
    } catch {
      // No lock beside amber's packages: the plugin's resolution alone.
    }
  }
  const lock = {
    ...base,
    version: "5",
    specifiers: { ...base.specifiers, ...npm.specifiers },
    npm: { ...base.npm, ...npm.packages },
  };
  const file = Deno.makeTempFileSync({ prefix: "amber-plugin-", suffix: ".lock" });
  Deno.writeTextFileSync(file, JSON.stringify(lock));
  return file;
}

function removeQuietly(file: string): void {
  Deno.remove(file).catch(() => {});
}

/**
 * The host's end of one plugin process: the {@linkcode PluginConnection} over a real child.
 * Made by {@linkcode spawnPluginProcess}.
 */
export class PluginProcess implements PluginConnection {
  /** The peer on the process's stdout and stdin. */
  readonly peer: RpcPeer;
  /** The process id. */
  readonly pid: number;
  /** Settles once, when the process is gone and reaped, with why it ended. */
  readonly ended: Promise<ConnectionEnd>;
  readonly #child: Deno.ChildProcess;
  readonly #log: string[] = [];
  #verdict: ConnectionEnd | undefined;
  #exited = false;

  /** Connects to `child`, whose stdin, stdout and stderr must be piped. */
  constructor(child: Deno.ChildProcess, onLog?: (line: string) => void) {
    this.#child = child;
    this.pid = child.pid;
    this.peer = new RpcPeer({
      input: child.stdout,
      output: child.stdin,
      onProtocolError: (error) => this.kill(garbage(error)),
    });
    live.add(child);
    watchUnload();
    const logged = readLines(child.stderr, (line) => {
      this.#log.push(line);
      if (this.#log.length > LOG_LINES) this.#log.shift();
      try {
        onLog?.(line);
      } catch {
        // A listener's failure is not the plugin's.
      }
    });
    this.ended = child.status.then(async (status) => {
      this.#exited = true;
      live.delete(child);
      // A program the plugin started may hold stderr open after the process itself is gone.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((done) => timer = setTimeout(done, STDERR_GRACE_MS));
      await Promise.race([logged, grace]);
      clearTimeout(timer);
      return this.#verdict ?? { reason: exitReason(status, this.#log), expected: false };
    });
  }

  /**
   * Sends a request; past `deadlineMs` the process is killed and the call rejects with a
   * `DeadlineError`. Rejects with `RpcError` for the plugin's error answer and
   * `PeerClosedError` when the process ends first.
   */
  call<T>(method: string, params: unknown, options: CallOptions): Promise<T> {
    const { deadlineMs, what } = options;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      // A timer longer than this fires at once; a deadline that long is no deadline.
      if (!(deadlineMs <= MAX_TIMER_MS)) return;
      timer = setTimeout(() => {
        this.kill(`its process was killed: ${what} did not answer within ${deadlineMs} ms`);
        reject(new DeadlineError(what, deadlineMs));
      }, deadlineMs);
    });
    const answer = this.peer.request<T>(method, params, {
      signal: options.signal,
      onProgress: options.onProgress,
    }).then((value) => {
      // An answer read after the process was condemned (it came in the same chunk as the
      // garbage that condemned it) is not delivered: nothing it says is trusted any more.
      if (this.#verdict?.expected === false) throw new PeerClosedError(method);
      return value;
    });
    return Promise.race([answer, deadline]).finally(() => clearTimeout(timer));
  }

  /**
   * Ends the process on purpose: closes its stdin, waits up to `graceMs` for it to exit, then
   * kills it. Resolves when it is gone; `ended` then says it was stopped, as expected.
   */
  async stop(graceMs = 1000): Promise<void> {
    if (!this.#exited && this.#verdict === undefined) {
      this.#verdict = { reason: "its process was stopped", expected: true };
    }
    // Not awaited: a process that does not read its stdin would hold the close forever.
    this.peer.close().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((done) =>
      timer = setTimeout(() => done("late"), Math.min(graceMs, MAX_TIMER_MS))
    );
    const outcome = await Promise.race([this.ended, late]);
    clearTimeout(timer);
    if (outcome === "late") this.#signal();
    await this.ended;
  }

  /** Kills the process now (SIGKILL); `ended` gives `reason` unless it had already ended. */
  kill(reason: string): void {
    if (this.#exited) return;
    this.#verdict ??= { reason, expected: false };
    this.#signal();
  }

  #signal(): void {
    try {
      // The group: what the plugin started with a `run` grant ends with it.
      Deno.kill(-this.#child.pid, "SIGKILL");
    } catch {
      try {
        this.#child.kill("SIGKILL");
      } catch {
        // It exited between the check and the kill.
      }
    }
  }
}

// Every process still running, killed when the host unloads so that a host exiting normally
// leaves none behind.
const live = new Set<Deno.ChildProcess>();
let watching = false;

function watchUnload(): void {
  if (watching) return;
  watching = true;
  globalThis.addEventListener("unload", () => {
    for (const child of live) {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
  });
}
async function readLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): Promise<void> {
  let rest = "";
  try {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      rest += text;
      let at = rest.indexOf("\n");
      while (at >= 0) {
        onLine(clean(rest.slice(0, at)));
        rest = rest.slice(at + 1);
        at = rest.indexOf("\n");
      }
      // A line without an end must not grow without bound.
      if (rest.length > MAX_LOG_LINE) {
        onLine(clean(rest));
        rest = "";
      }
    }
  } catch {
    // A broken pipe ends the log like a clean end does.
  }
  if (rest !== "") onLine(clean(rest));
}

function clean(line: string): string {
  // deno-lint-ignore no-control-regex
  return line.replace(/\u001b\[[0-9;]*[A-Za-z]/g, "").replace(/\r$/, "");
}

function garbage(error: ProtocolError): string {
  const what = error.line === "" ? error.message : `'${error.line.slice(0, 80)}'`;
  return `it wrote to stdout what is not the protocol: ${what}`;
}

function exitReason(status: Deno.CommandStatus, log: readonly string[]): string {
  const how = status.signal !== null
    ? `its process was ended by ${status.signal}`
    : `its process exited with code ${status.code}`;
  const last = lastError(log);
  return last === undefined ? how : `${how}: ${last}`;
}

// Deno reports an uncaught error as "error: Uncaught (in promise) Error: boom" and a stack, V8
// a heap overflow as "# Fatal JavaScript out of memory: ..." and a C stack: that line says the
// most. Without one, the last line the process wrote.
function lastError(log: readonly string[]): string | undefined {
  const lines = log.map((line) => line.trim()).filter((line) => line !== "");
  const error = lines.findLast((line) => line.startsWith("error: ") || line.startsWith("# Fatal "));
  const line = error === undefined ? lines.at(-1) : error
    .replace(/^error: /, "")
    .replace(/^# /, "")
    .replace(/^Uncaught (\(in promise\) )?/, "");
  if (line === undefined) return undefined;
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}
