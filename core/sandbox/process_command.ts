/**
 * How the process of a sandboxed plugin is started: the `deno run` command line (the permission
 * flags of its grant, what it may never reach, its heap limit, where amber's own packages
 * resolve) and the environment it gets, which holds nothing of the host's secrets. Spawning it and
 * speaking to it is `process.ts`.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { isAbsolute, join } from "node:path";
import { AmberError } from "../errors.ts";
import type { PluginPermissions } from "../plugin.ts";
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
function configFlags(packages: AmberPackages | undefined): string[] {
  if (packages?.importMap !== undefined) {
    return ["--no-config", `--import-map=${packages.importMap}`];
  }
  return packages?.config === undefined ? ["--no-config"] : ["--config", packages.config];
}

/** amber's packages as the source checkout this module runs from has them, if it runs from one. */
export function checkoutPackages(): AmberPackages | undefined {
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
        Deno.statSync(join(path, "core", "sandbox", "process_command.ts")).isFile
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
