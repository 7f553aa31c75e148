/**
 * The client's end of a stdio MCP server: the server runs as the leader of a process group of
 * its own with a small environment, its stdout carries one JSON-RPC message a line, its stderr
 * goes line by line to a listener (never to the terminal), and closing ends the whole group.
 *
 * @module
 */

import { AmberError, type StartedProcess, withDeadline } from "@amber/core";
// @ts-types="@modelcontextprotocol/sdk/shared/stdio"
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * The variables of amber's environment a stdio server gets besides its entry's `env`: the
 * SDK's default set, which holds no credentials.
 */
export const MCP_DEFAULT_ENV: readonly string[] = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
];

/** How long a closed server's group gets between SIGTERM and SIGKILL, by default. */
export const MCP_STOP_GRACE_MS = 2000;

// A server that exits when its input closes (as the spec asks) is given this long to do so
// before it is signalled.
const STDIN_GRACE_MS = 200;
// How long a close after a failed write waits for the server's own end.
const WRITE_FAILED_GRACE_MS = 1000;
// The stderr lines kept to say why a server ended.
const KEPT_STDERR_LINES = 5;
// One message may not be longer than this (the SDK's own limit).
const MAX_LINE_BYTES = 10 * 1024 * 1024;
// How much of a garbage line a reason quotes.
const QUOTED_CHARS = 80;

/**
 * The environment of a stdio server: the {@linkcode MCP_DEFAULT_ENV} variables that `amberEnv`
 * has, and the entry's own `env` (already expanded) over them. Nothing else of amber's
 * environment reaches the server, so a key reaches it only when the entry names it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stdioEnvironment } from "./stdio_transport.ts";
 * const env = stdioEnvironment(
 *   { PATH: "/bin", HOME: "/home/a", OPENAI_API_KEY: "sk-1", BASH_FUNC: "() { :; }" },
 *   { DEBUG: "1" },
 * );
 * assert.deepEqual(env, { HOME: "/home/a", PATH: "/bin", DEBUG: "1" });
 * ```
 */
export function stdioEnvironment(
  amberEnv: Readonly<Record<string, string | undefined>>,
  entryEnv: { readonly [name: string]: string } = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of MCP_DEFAULT_ENV) {
    const value = amberEnv[name];
    // A value that is a shell function definition is an old attack vector; the SDK drops them.
    if (value !== undefined && !value.startsWith("()")) env[name] = value;
  }
  return { ...env, ...entryEnv };
}

/** A stdio server could not be started: no such program, or no such folder. */
export class McpProcessError extends AmberError {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpProcessError";
  }
}

/** Options of {@linkcode StdioTransport}. */
export interface StdioTransportOptions {
  /** The program. */
  readonly command: string;
  /** Its arguments. */
  readonly args?: readonly string[];
  /** Its whole environment; see {@linkcode stdioEnvironment}. */
  readonly env: Readonly<Record<string, string>>;
  /** Its working directory. */
  readonly cwd: string;
  /** Receives each line the server writes to stderr. */
  readonly onStderr: (line: string) => void;
  /** Told of the process group as soon as it runs, so that a host can stop it when it exits. */
  readonly onSpawn?: (process: StartedProcess, argv: readonly string[]) => void;
  /** Between SIGTERM and SIGKILL when the group is stopped (ms); {@linkcode MCP_STOP_GRACE_MS}. */
  readonly graceMs?: number;
}

// Groups still running, sent SIGTERM when amber's process ends without closing them.
const running = new Set<number>();
let unloadWatched = false;
function watchUnload(): void {
  if (unloadWatched) return;
  unloadWatched = true;
  globalThis.addEventListener("unload", () => {
    for (const pid of running) signalGroup(pid, "SIGTERM");
  });
}

/**
 * An MCP client transport over a server process started from `options`: the process leads a
 * new process group (so that stopping it stops what it started, such as `npx`'s node), with
 * exactly the environment given. A line on stdout that is not a JSON-RPC message ends the
 * connection, and so does the process's exit; {@linkcode StdioTransport.closed} says which.
 * {@linkcode StdioTransport.close} resolves once no process of the group is left.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { StdioTransport } from "./stdio_transport.ts";
 * const lines: string[] = [];
 * const transport = new StdioTransport({
 *   command: "sh",
 *   args: ["-c", "echo starting >&2; echo '{\"jsonrpc\":\"2.0\",\"method\":\"hi\"}'; echo oops"],
 *   env: {},
 *   cwd: Deno.cwd(),
 *   onStderr: (line) => lines.push(line),
 * });
 * const received: unknown[] = [];
 * transport.onmessage = (message) => received.push(message);
 * await transport.start();
 * assert.equal(await transport.closed, 'it wrote a line that is not JSON-RPC: "oops"');
 * assert.deepEqual(received, [{ jsonrpc: "2.0", method: "hi" }]);
 * assert.deepEqual(lines, ["starting"]);
 * ```
 */
export class StdioTransport implements Transport {
  /** Called once when the connection has ended and the process group is gone. */
  onclose?: () => void;
  /** Called with what went wrong on the way (a write that failed, a line that is not JSON-RPC). */
  onerror?: (error: Error) => void;
  /** Called with each message the server sends. */
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  /** Resolves, never rejects, with why the connection ended, once the group is gone. */
  readonly closed: Promise<string>;

  readonly #options: StdioTransportOptions;
  readonly #stderrTail: string[] = [];
  #resolveClosed!: (reason: string) => void;
  #child: Deno.ChildProcess | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
  #output: Promise<void> = Promise.resolve();
  #reason: string | undefined;
  #ending: Promise<void> | undefined;
  #exited = false;
  #writeFailed = false;

  /** Prepares the transport; {@linkcode StdioTransport.start} starts the process. */
  constructor(options: StdioTransportOptions) {
    this.#options = options;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
  }

  /** The process id of the server (its group's id), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the server. Throws {@linkcode McpProcessError} when it cannot be started. */
  start(): Promise<void> {
    if (this.#child !== undefined) {
      return Promise.reject(new McpProcessError("this transport has already been started"));
    }
    const { command, args = [], env, cwd } = this.#options;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(command, {
        args: [...args],
        cwd,
        env: { ...env },
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        // A new session and process group: its kill reaches whatever the server started.
        detached: true,
      }).spawn();
    } catch (error) {
      const why = error instanceof Deno.errors.NotFound
        ? `no program '${command}' on the PATH, or no folder ${cwd}`
        : error instanceof Error
        ? error.message
        : String(error);
      return Promise.reject(
        new McpProcessError(`could not start '${command}': ${why}`, { cause: error }),
      );
    }
    this.#child = child;
    running.add(child.pid);
    watchUnload();
    this.#writer = child.stdin.getWriter();
    const stdout = child.stdout.getReader();
    const stderr = child.stderr.getReader();
    this.#readers = [stdout, stderr];
    const stdoutDone = readLines(stdout, (line) => this.#receive(line), (why) => this.#end(why));
    const stderrDone = readLines(stderr, (line) => this.#stderrLine(line));
    this.#output = Promise.all([stdoutDone, stderrDone]).then(() => {});
    stdoutDone.then(() => this.#stdoutEnded());
    child.status.then((status) => this.#exit(status));
    try {
      this.#options.onSpawn?.({
        pid: child.pid,
        finished: this.closed,
        stop: () => this.close(),
      }, [command, ...args]);
    } catch {
      // A host that cannot record the group still has it closed by this transport.
    }
    return Promise.resolve();
  }

  /** Writes `message` to the server's stdin. */
  async send(message: JSONRPCMessage): Promise<void> {
    const writer = this.#writer;
    if (writer === undefined || this.#reason !== undefined) {
      throw new McpProcessError(`the server is not running (${this.#reason ?? "not started"})`);
    }
    try {
      await writer.write(new TextEncoder().encode(serializeMessage(message)));
    } catch (error) {
      this.#writeFailed = true;
      throw error;
    }
  }

  /** Ends the connection: the whole process group is stopped; resolves when it is gone. */
  async close(): Promise<void> {
    if (this.#child === undefined) {
      this.#reason ??= "closed";
      this.#resolveClosed(this.#reason);
      return;
    }
    // A broken pipe means the server is on its way out: its exit, when it comes, says why.
    if (this.#writeFailed) await settles(this.closed, WRITE_FAILED_GRACE_MS);
    await this.#end("closed");
  }

  #receive(line: string): void {
    if (this.#reason !== undefined || line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      const start = line.length > QUOTED_CHARS ? `${line.slice(0, QUOTED_CHARS)}…` : line;
      const why = `it wrote a line that is not JSON-RPC: ${JSON.stringify(start)}`;
      this.#report(new McpProcessError(why, { cause: error }));
      void this.#end(why);
      return;
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.#report(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #stderrLine(line: string): void {
    this.#stderrTail.push(line);
    if (this.#stderrTail.length > KEPT_STDERR_LINES) this.#stderrTail.shift();
    try {
      this.#options.onStderr(line);
    } catch {
      // The listener's trouble is not the server's.
    }
  }

  #report(error: Error): void {
    try {
      this.onerror?.(error);
    } catch {
      // As above.
    }
  }

  async #stdoutEnded(): Promise<void> {
    // Its stdout usually ends because it exited: give the exit a moment to say so.
    if (await settles(this.#child!.status, STDIN_GRACE_MS)) return;
    void this.#end("it closed its standard output");
  }

  async #exit(status: Deno.CommandStatus): Promise<void> {
    this.#exited = true;
    // Let the last lines of stderr arrive; they usually say why.
    await settles(this.#output, STDIN_GRACE_MS);
    const how = status.signal !== null
      ? `its process was ended by ${status.signal}`
      : `its process exited with code ${status.code}`;
    const tail = this.#stderrTail.join(" | ");
    void this.#end(tail === "" ? how : `${how}: ${tail}`);
  }

  // Settles the connection once with `reason` (the first one given wins), then stops what is
  // left of the group and tells the listeners.
  #end(reason: string): Promise<void> {
    this.#reason ??= reason;
    return this.#ending ??= (async () => {
      const child = this.#child!;
      await this.#writer?.close().catch(() => {});
      if (this.#reason === "closed" && !this.#exited) {
        await settles(child.status, STDIN_GRACE_MS);
      }
      const grace = this.#options.graceMs ?? MCP_STOP_GRACE_MS;
      if (!(await this.#stopGroup(child, "SIGTERM", grace))) {
        if (!(await this.#stopGroup(child, "SIGKILL", grace))) {
          this.#report(new McpProcessError(`process group ${child.pid} outlived SIGKILL`));
        }
      }
      for (const reader of this.#readers) reader.cancel().catch(() => {});
      await child.status;
      running.delete(child.pid);
      this.#resolveClosed(this.#reason!);
      try {
        this.onclose?.();
      } catch {
        // Nothing to do about a listener that throws.
      }
    })();
  }

  // Signals the group unless it is already gone, then waits up to `graceMs` for it to be gone.
  async #stopGroup(
    child: Deno.ChildProcess,
    signal: Deno.Signal,
    graceMs: number,
  ): Promise<boolean> {
    const pid = child.pid;
    if (this.#exited && !groupAlive(pid)) return true;
    signalGroup(pid, signal);
    const deadline = Date.now() + graceMs;
    for (;;) {
      if (this.#exited && !groupAlive(pid)) return true;
      if (Date.now() >= deadline) return false;
      // Until the leader is reaped its exit is what to wait for; after, the rest of the group.
      if (this.#exited) await new Promise((resolve) => setTimeout(resolve, 20));
      else await settles(child.status, 20);
    }
  }
}

// Reads `reader` to its end, a line at a time; a line longer than the limit ends the reading
// with `onOverflow`.
async function readLines(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  onLine: (line: string) => void,
  onOverflow?: (why: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = pending.indexOf("\n")) !== -1) {
        onLine(pending.slice(0, newline).replace(/\r$/, ""));
        pending = pending.slice(newline + 1);
      }
      if (pending.length > MAX_LINE_BYTES && onOverflow !== undefined) {
        onOverflow(`it wrote a line longer than ${MAX_LINE_BYTES} bytes`);
        return;
      }
    }
  } catch {
    // Cancelled, or the pipe broke: the output is over either way.
  }
  pending += decoder.decode();
  if (pending !== "") onLine(pending.replace(/\r$/, ""));
}

function signalGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // Gone already.
  }
}

/**
 * Whether any process of the group `pgid` is still alive: a zombie, which only waits for its
 * parent to collect it, is not (on some machines an orphaned zombie stays in its group). Reads
 * `/proc` where amber may (Deno lets only a process with every permission read another's
 * `/proc/<pid>`), else asks `ps`, else a signal stands in (and counts zombies).
 */
export function groupAlive(pgid: number): boolean {
  try {
    return procGroupAlive(pgid);
  } catch {
    // No /proc, or not ours to read.
  }
  try {
    const { stdout, success } = new Deno.Command("ps", {
      args: ["-o", "stat=", "-g", String(pgid)],
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    // ps exits 1 when the group has no process at all.
    const states = new TextDecoder().decode(stdout).split("\n").map((line) => line.trim());
    return success && states.some((state) => state !== "" && !/^[ZX]/.test(state));
  } catch {
    // No ps either.
  }
  try {
    Deno.kill(-pgid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

// Throws when /proc cannot be listed or a process's stat cannot be read for want of permission;
// a process that ended between the listing and the read is skipped.
function procGroupAlive(pgid: number): boolean {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so read after the last.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

// Whether `promise` settles (either way) within `ms`; core's deadline clears its timer.
function settles(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = promise.then(() => {}, () => {});
  return withDeadline(() => settled, ms, "settling").then(() => true, () => false);
}
