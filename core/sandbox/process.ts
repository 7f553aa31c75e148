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

import { fileURLToPath } from "node:url";
import { isAbsolute, join } from "node:path";
import { AmberError } from "../errors.ts";
import { DeadlineError } from "../limits.ts";
import type { PluginPermissions } from "../plugin.ts";
import type { CallOptions, ConnectionEnd, PluginConnection } from "./connection.ts";
import { PeerClosedError, type ProtocolError, RpcPeer } from "./json_rpc.ts";
import { denoPermissionFlags } from "./permissions.ts";

/**
 * Where a plugin's process finds amber's own packages, for a plugin that imports `@amber/core` or
 * another of them at run time.
 */
export interface AmberPackages {
  /**
   * The config file the process runs with (`--config`): its import map resolves `@amber/*`.
   * Absolute. Ignored when {@linkcode AmberPackages.importMap} is given.
   */
  readonly config?: string;
  /**
   * An import map file that resolves `@amber/*`, which the process runs with instead of a config
   * (`--no-config --import-map`: Deno sets up a config with imports more slowly). Absolute.
   */
  readonly importMap?: string;
  /** The folders those packages' modules are in: the process may read them. Absolute. */
  readonly folders: readonly string[];
  /** The lock file of the npm packages they import, which the plugin's own resolution joins. */
  readonly lock?: string;
}

/** Options of {@linkcode spawnPluginProcess}. */
export interface SpawnPluginOptions {
  /** The plugin module's specifier (`file:`, `npm:`, `jsr:`, `https:`), the last argument. */
  readonly specifier: string;
  /** The plugin's id, for messages. */
  readonly pluginId: string;
  /** What the user granted; the process gets exactly this. */
  readonly grant: PluginPermissions;
  /** The workspace root, absolute: the process's working folder and what paths are under. */
  readonly workspace: string;
  /** The plugin's data folder (`data:` in its permissions), absolute. */
  readonly dataDir: string;
  /** Folders it must read to import itself (its module's folder), absolute. */
  readonly readFolders: readonly string[];
  /**
   * The module the process runs and the arguments before the specifier; by default the
   * plugin-process entry beside this module, `child_main.ts`.
   */
  readonly entry?: readonly string[];
  /**
   * Where amber's own packages (`@amber/core` and the others) resolve in the process; by default
   * the source checkout this module runs from, if it runs from one (else the process gets
   * `--no-config`).
   */
  readonly packages?: AmberPackages;
  /** The `deno` executable; by default the one running the host. */
  readonly denoPath?: string;
  /**
   * The host environment to pick from; by default the host's own. Only the names Deno itself
   * needs and the granted `env` names are picked.
   */
  readonly env?: { readonly [name: string]: string };
  /** The V8 heap limit of the process, in MiB; 512 by default. */
  readonly maxMemoryMb?: number;
  /**
   * Folders no grant reaches: the process may neither read nor write in them, whatever its
   * grant says (the host passes its config directory: the lock, the sessions, other plugins'
   * state). A more specific grant inside one still holds, so the plugin's data folder and its
   * own module files do.
   */
  readonly protect?: readonly string[];
  /**
   * The npm resolution the plugin was accepted with: each `npm:` specifier its modules import
   * with the version it resolved to, and each package (`name@version`) with its integrity and
   * dependencies. Given, the process runs with a lock file of exactly that (`--lock --frozen`,
   * written for it and removed when it ends), so a version range cannot load another version
   * and an npm import the plugin did not have when it was accepted does not load.
   */
  readonly npm?: NpmResolution;
  /** The lock file the process is held to (`--lock --frozen`): what `npm` is written to. */
  readonly lockFile?: string;
  /**
   * Told of the process as soon as it runs, as the leader of a process group of its own: a host
   * records it (pid and start time) so that the next start stops one that a host killed outright
   * left behind while it spun and could not see its stdin close.
   */
  readonly onSpawn?: (started: SpawnedPluginProcess) => void;
  /** Receives each line the process writes to stderr. */
  readonly onLog?: (line: string) => void;
}

/** A plugin process as a host records it: the leader of its own process group. */
export interface SpawnedPluginProcess {
  /** The process id, which is also its group's id. */
  readonly pid: number;
  /** Settles when the process has ended. */
  readonly finished: Promise<unknown>;
  /** Stops it; resolves when it is gone. */
  stop(): Promise<unknown>;
}

/** The npm resolution a plugin process is held to; see {@linkcode SpawnPluginOptions.npm}. */
export interface NpmResolution {
  /** Each `npm:` specifier imported, with the version it resolved to. */
  readonly specifiers: { readonly [specifier: string]: string };
  /** Each package by `name@version`. */
  readonly packages: {
    readonly [id: string]: {
      readonly integrity?: string;
      readonly dependencies?: readonly string[];
    };
  };
}

/** What {@linkcode pluginProcessCommand} builds: how to start the process. */
export interface PluginProcessCommand {
  /** The `deno` executable. */
  readonly command: string;
  /** Its arguments, `run` first and the specifier last. */
  readonly args: readonly string[];
  /** The whole environment of the process (the host's is not inherited). */
  readonly env: { readonly [name: string]: string };
  /** Its working folder: the workspace. */
  readonly cwd: string;
}

/**
 * The plugin process could not be started (no `deno` at the path, a missing workspace).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginProcessError } from "@amber/core/sandbox";
 * const error = new PluginProcessError("greeter", "no deno at /nope");
 * assert.equal(error.message, "the process of plugin 'greeter' could not start: no deno at /nope");
 * ```
 */
export class PluginProcessError extends AmberError {
  /** The plugin's id. */
  readonly pluginId: string;
  /** Creates the error for the plugin `pluginId`. */
  constructor(pluginId: string, problem: string, options?: ErrorOptions) {
    super(`the process of plugin '${pluginId}' could not start: ${problem}`, options);
    this.name = "PluginProcessError";
    this.pluginId = pluginId;
  }
}

// What Deno itself needs to find its cache, the npm packages and a temp folder; nothing else of
// the host's environment crosses, so no key can.
const PASSED_ENV = ["HOME", "DENO_DIR", "XDG_CACHE_HOME", "PATH", "LANG", "NO_COLOR", "TMPDIR"];
// Set for every process: stderr is parsed for the crash reason, and an update check is network
// traffic the plugin did not ask for.
const FIXED_ENV = { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" };
const AMBER_PACKAGES = ["core", "registries", "providers", "plugins", "cli"];
const LOG_LINES = 20;
const MAX_LOG_LINE = 64 * 1024;
const STDERR_GRACE_MS = 250;
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How the process of a plugin is started: `deno run --no-prompt --no-lock --cached-only
 * --node-modules-dir=none`, the config, the
 * permission flags of `grant`, the heap limit, the entry and the specifier, with an
 * environment of only HOME, DENO_DIR, XDG_CACHE_HOME, PATH, LANG, TMPDIR (those the host has),
 * NO_COLOR and DENO_NO_UPDATE_CHECK, and the granted env names' values.
 *
 * `--no-prompt` because the process's stdin is the protocol; `--no-lock` so a plugin's npm
 * imports are never written into amber's lock. `--cached-only` because loading a module is no
 * network permission: without it a plugin granted nothing could still `import("npm:...")` or an
 * `https:` module, downloading and running code its lock never hashed; what its recorded graph
 * needs was fetched at `amber plugins add` (`deno info`). `--node-modules-dir=none` reads npm
 * packages from Deno's cache, so plugin processes starting side by side do not queue for the
 * lock of a `node_modules` folder (and start sooner). The process gets the config or import map
 * of `packages` (so `@amber/core` and the other packages resolve) and may read their folders, so
 * that a plugin importing `@amber/core/testing` or another amber module can load it: by default,
 * run from a source checkout, amber's root `deno.json` and the packages' folders (core,
 * registries, providers, plugins, cli); elsewhere it gets `--no-config`, and a `deno.json` in the
 * workspace never applies to it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginProcessCommand } from "@amber/core/sandbox";
 * const command = pluginProcessCommand({
 *   specifier: "npm:amber-greeter@1",
 *   pluginId: "greeter",
 *   grant: { env: ["GREETING"] },
 *   workspace: "/ws",
 *   dataDir: "/cfg/greeter/data",
 *   readFolders: [],
 *   entry: ["file:///child.ts"],
 *   denoPath: "/bin/deno",
 *   env: { HOME: "/home/me", OPENAI_API_KEY: "sk-secret", GREETING: "hi" },
 * });
 * assert.equal(command.args.at(-1), "npm:amber-greeter@1");
 * assert.ok(command.args.includes("--allow-env=GREETING"));
 * assert.equal(command.env.OPENAI_API_KEY, undefined);
 * assert.equal(command.env.GREETING, "hi");
 * assert.equal(command.cwd, "/ws");
 * ```
 */
export function pluginProcessCommand(options: SpawnPluginOptions): PluginProcessCommand {
  const packages = options.packages ?? checkoutPackages();
  const readFolders = [...options.readFolders, ...packages?.folders ?? []];
  const flags = denoPermissionFlags(options.grant, {
    workspace: options.workspace,
    dataDir: options.dataDir,
    readFolders,
  });
  const memory = Math.max(16, Math.floor(options.maxMemoryMb ?? 512));
  const entry = options.entry ?? [new URL("./child_main.ts", import.meta.url).href];
  const args = [
    "run",
    "--no-prompt",
    ...(options.lockFile === undefined
      ? ["--no-lock"]
      : [`--lock=${options.lockFile}`, "--frozen"]),
    "--cached-only",
    "--node-modules-dir=none",
    ...configFlags(packages),
    ...flags,
    ...protectFlags(options.pluginId, options.protect ?? []),
    `--v8-flags=--max-old-space-size=${memory}`,
    ...entry,
    options.specifier,
  ];
  const pick = options.env === undefined
    ? (name: string) => hostEnv(name)
    : (name: string) => options.env?.[name];
  const env: Record<string, string> = {};
  for (const name of [...PASSED_ENV, ...options.grant.env ?? []]) {
    const value = pick(name);
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, FIXED_ENV);
  return {
    command: options.denoPath ?? Deno.execPath(),
    args,
    env,
    cwd: options.workspace,
  };
}

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

function configFlags(packages: AmberPackages | undefined): string[] {
  if (packages?.importMap !== undefined) {
    return ["--no-config", `--import-map=${packages.importMap}`];
  }
  return packages?.config === undefined ? ["--no-config"] : ["--config", packages.config];
}

// amber's packages as the source checkout this module runs from has them.
function checkoutPackages(): AmberPackages | undefined {
  const root = sourceRoot();
  return root === undefined ? undefined : {
    config: join(root, "deno.json"),
    folders: AMBER_PACKAGES.map((name) => join(root, name)),
    lock: join(root, "deno.lock"),
  };
}

let root: string | undefined | null = null;

// The checkout this module runs from, or undefined when it runs from a bundle or a registry.
function sourceRoot(): string | undefined {
  if (root !== null) return root;
  root = undefined;
  const url = new URL("../../", import.meta.url);
  if (url.protocol === "file:") {
    try {
      const path = fileURLToPath(url);
      if (
        Deno.statSync(join(path, "deno.json")).isFile &&
        Deno.statSync(join(path, "core", "sandbox", "process.ts")).isFile
      ) root = path.replace(/[\\/]$/, "");
    } catch {
      // Not a checkout, or the host may not look: the process gets no config.
    }
  }
  return root;
}

function hostEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
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

// Deno lets a more specific allow win over a deny, so denying a whole folder keeps what was
// granted inside it.
function protectFlags(pluginId: string, folders: readonly string[]): string[] {
  const absolute = [...new Set(folders)].filter((folder) => isAbsolute(folder));
  for (const folder of absolute) {
    if (folder.includes(",")) {
      throw new PluginProcessError(
        pluginId,
        `the protected folder '${folder}' contains a comma, which Deno's --deny-read list cannot carry`,
      );
    }
  }
  if (absolute.length === 0) return [];
  const list = absolute.join(",");
  return [`--deny-read=${list}`, `--deny-write=${list}`];
}
