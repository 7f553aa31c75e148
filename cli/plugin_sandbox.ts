/**
 * How the CLI runs a third-party plugin in a process of its own: where that process may read
 * the plugin's modules from, its data folder, and the two ways it is started - once with no
 * grant at all, to read its manifest at `amber plugins add|update`, and at every start with the
 * grant recorded in the lock.
 *
 * @module
 */

import { isAbsolute, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { DeadlineError, type PluginPermissions } from "@amber/core";
import {
  type AmberPackages,
  loadSandboxedPlugin,
  type NpmResolution,
  type PluginManifest,
  RpcError,
  type SandboxedPlugin,
  SandboxedPluginError,
  type SandboxFault,
  type SpawnedPluginProcess,
} from "@amber/core/sandbox";
import { graphFolder, type ModuleGraph } from "./module_graph.ts";
import { usesDataFolder } from "./plugin_grant.ts";
import { pluginProcessEntry, pluginProcessPackages } from "./plugin_process_entry.ts";
import type { PluginSource } from "./plugin_source.ts";
import { describeLoadError, ThirdPartyPluginError } from "./third_party_error.ts";
import { VERSION } from "./version.ts";

/** Where and how the host runs sandboxed plugins. */
export interface SandboxSettings {
  /** The config directory: plugin data folders are `plugins/<id>/data` in it. */
  readonly configDir: string;
  /** The workspace the grants' relative paths mean. */
  readonly workspace: string;
  /** The deadline of loading a plugin (its `describe`), in ms; past it the process is killed. */
  readonly importTimeoutMs: number;
  /** Told when a registered plugin's process dies, is killed or writes garbage. */
  readonly onFault?: (fault: SandboxFault) => void;
  /** Receives what a plugin's process logs (its console, its stderr). */
  readonly onLog?: (pluginId: string, line: string) => void;
  /** Told of each process started for a recorded plugin, to record it for after a kill -9. */
  readonly onSpawn?: (pluginId: string, started: SpawnedPluginProcess) => void;
}

/**
 * The data folder of plugin `id`: what its grant's `data:` paths mean.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginDataDir } from "./plugin_sandbox.ts";
 * assert.equal(pluginDataDir("/cfg", "notes"), "/cfg/plugins/notes/data");
 * ```
 */
export function pluginDataDir(configDir: string, id: string): string {
  return join(configDir, "plugins", id, "data");
}

/**
 * What a plugin's process may read to import itself: exactly the local files of its recorded
 * module graph (the ones the lock hashes and the user accepted), so that it cannot read the
 * files beside them; a module outside the graph cannot even be loaded. An entry recorded before
 * amber recorded graphs gets its entry file's folder, as its files are not known (`amber plugins
 * update <id>` records them). An npm or JSR plugin needs nothing: Deno loads packages without a
 * read permission.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginReadPaths } from "./plugin_sandbox.ts";
 * const source = { kind: "file" as const, resolved: "file:///p/greeter/mod.ts" };
 * const graph = {
 *   version: 1 as const,
 *   files: [{ path: "mod.ts", sha256: "" }, { path: "/shared/util.ts", sha256: "" }],
 *   packages: [],
 * };
 * assert.deepEqual(pluginReadPaths(source, graph), ["/p/greeter/mod.ts", "/shared/util.ts"]);
 * assert.deepEqual(pluginReadPaths(source), ["/p/greeter"]);
 * assert.deepEqual(pluginReadPaths({ kind: "npm", resolved: "file:///nm/x/index.js" }), []);
 * ```
 */
export function pluginReadPaths(
  source: Pick<PluginSource, "kind" | "resolved">,
  graph?: Pick<ModuleGraph, "files">,
): string[] {
  const folder = source.kind === "file" ? graphFolder(source.resolved) : undefined;
  if (folder === undefined) return [];
  if (graph === undefined) return [folder];
  const entry = fileURLToPath(source.resolved);
  const files = graph.files.map((file) =>
    isAbsolute(file.path) ? file.path : join(folder, file.path)
  );
  return [...new Set([entry, ...files])];
}

/**
 * Starts the plugin's process with no permission at all (beyond reading its own modules),
 * reads its manifest, and ends the process: what `amber plugins add` shows before anything is
 * granted. Throws a `ThirdPartyPluginError` naming the file and Deno's or the validator's
 * words, or saying loading it did not finish in time (the process is killed then).
 *
 * @example
 * ```ts ignore
 * const manifest = await describeInSandbox(source, graph, settings);
 * console.log(manifest.id, manifest.permissions);
 * ```
 */
export async function describeInSandbox(
  source: PluginSource,
  graph: ModuleGraph | undefined,
  settings: SandboxSettings,
): Promise<PluginManifest> {
  refuseCompiled(source);
  const entry = pluginProcessEntry();
  const readFolders = pluginReadPaths(source, graph);
  // Nothing is granted, so no data folder is used; none is created.
  const dataDir = join(settings.configDir, "plugins");
  let sandboxed: SandboxedPlugin;
  try {
    sandboxed = await loadSandboxedPlugin({
      specifier: source.specifier,
      pluginId: source.file,
      grant: {},
      // Nothing is granted in it, but the process runs there: a workspace that is not (yet) a
      // folder is no reason to refuse the plugin.
      workspace: await isFolder(settings.workspace) ? settings.workspace : Deno.cwd(),
      dataDir,
      readFolders,
      ...npmResolution(graph),
      importTimeoutMs: settings.importTimeoutMs,
      hostVersion: VERSION,
      // The lock, the sessions and other plugins' state are out of reach whatever the grant.
      protect: await protectedPaths(settings.configDir, readFolders),
      ...(entry !== undefined ? { entry } : {}),
      ...packagesOption(),
      ...(settings.onLog !== undefined
        ? { onLog: (line: string) => settings.onLog?.(source.file, line) }
        : {}),
    });
  } catch (error) {
    throw loadFailure(source, settings, error, "nothing was recorded");
  }
  try {
    const reach = configReach(sandboxed.manifest.permissions, settings);
    if (reach !== undefined) {
      throw new ThirdPartyPluginError(
        source.spec,
        `${source.file}: it asks for ${reach}, which is amber's config directory ` +
          `(${settings.configDir}); a plugin may have its data folder (data:) there, nothing else. ` +
          "Nothing was recorded",
      );
    }
    return sandboxed.manifest;
  } finally {
    await sandboxed.close();
  }
}

/**
 * Starts recorded plugin `id` in its process with `grant`: the stand-in `Plugin` the runtime
 * registers. Its data folder is created first when the grant names it. Throws like
 * {@linkcode describeInSandbox}. The stand-in's id is the one its process describes: the
 * caller compares it with the id the plugin was added as.
 *
 * @example
 * ```ts ignore
 * const sandboxed = await startSandboxed(entry.id, source, entry.graph, entry.grant ?? {}, settings);
 * runtime.register(sandboxed.plugin, { source: entry.spec });
 * ```
 */
export async function startSandboxed(
  id: string,
  source: PluginSource,
  graph: ModuleGraph | undefined,
  grant: PluginPermissions,
  settings: SandboxSettings,
): Promise<SandboxedPlugin> {
  refuseCompiled(source);
  const reach = configReach(grant, settings);
  if (reach !== undefined) {
    throw new ThirdPartyPluginError(
      source.spec,
      `${source.file}: its grant names ${reach}, which is amber's config directory ` +
        `(${settings.configDir}); it is not started. Remove it with \`amber plugins remove ${id}\``,
    );
  }
  const dataDir = pluginDataDir(settings.configDir, id);
  if (usesDataFolder(grant)) await Deno.mkdir(dataDir, { recursive: true });
  const entry = pluginProcessEntry();
  const readFolders = pluginReadPaths(source, graph);
  try {
    return await loadSandboxedPlugin({
      specifier: source.specifier,
      pluginId: id,
      grant,
      workspace: settings.workspace,
      dataDir,
      readFolders,
      ...npmResolution(graph),
      importTimeoutMs: settings.importTimeoutMs,
      hostVersion: VERSION,
      // The lock, the sessions and other plugins' state are out of reach whatever the grant.
      protect: await protectedPaths(settings.configDir, [
        ...readFolders,
        ...(usesDataFolder(grant) ? [dataDir] : []),
      ]),
      ...(entry !== undefined ? { entry } : {}),
      ...packagesOption(),
      ...(settings.onFault !== undefined ? { onFault: settings.onFault } : {}),
      ...(settings.onLog !== undefined
        ? { onLog: (line: string) => settings.onLog?.(id, line) }
        : {}),
      ...(settings.onSpawn !== undefined
        ? { onSpawn: (started: SpawnedPluginProcess) => settings.onSpawn?.(id, started) }
        : {}),
    });
  } catch (error) {
    if (error instanceof DeadlineError) throw error;
    throw loadFailure(source, settings, error, "it was not started");
  }
}

// A compiled amber is not `deno`: it cannot start a `deno run` with a grant's flags, and its
// own permissions are fixed when it is compiled.
function refuseCompiled(source: PluginSource): void {
  if (!Deno.build.standalone) return;
  throw new ThirdPartyPluginError(
    source.spec,
    `${source.spec}: a compiled amber cannot run a plugin in a process of its own; ` +
      "run amber with deno (the bundle, or from source), or add the plugin --trusted",
  );
}

function loadFailure(
  source: PluginSource,
  settings: SandboxSettings,
  error: unknown,
  outcome: string,
): ThirdPartyPluginError {
  if (error instanceof DeadlineError) {
    return new ThirdPartyPluginError(
      source.spec,
      `${source.spec}: loading it did not finish within ${settings.importTimeoutMs} ms; ${outcome}`,
      { cause: error },
    );
  }
  return new ThirdPartyPluginError(source.spec, `${source.file}: ${processWords(error)}`, {
    cause: error,
  });
}

// What the plugin's process said (the import's or the validator's words) is the reason; the
// stand-in's own framing would only repeat the file.
function processWords(error: unknown): string {
  if (!(error instanceof SandboxedPluginError)) return describeLoadError(error);
  // A string is told on one line, as an error is.
  if (error.cause instanceof RpcError) return describeLoadError(error.cause.message);
  const prefix = `plugin '${error.pluginId}': `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/**
 * What of amber's config directory a plugin's process may neither read nor write, whatever its
 * grant: everything (the lock, config.yaml, the sessions, other plugins' state), except the
 * paths in `keep` (its data folder, its own module files when they lie in there) and the
 * folders on the way to them, which are walked into instead. The files amber writes there are
 * named even before they exist.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { protectedPaths } from "./plugin_sandbox.ts";
 * const config = await Deno.makeTempDir();
 * await Deno.mkdir(`${config}/plugins/notes/data`, { recursive: true });
 * await Deno.mkdir(`${config}/plugins/other`, { recursive: true });
 * await Deno.writeTextFile(`${config}/plugins/notes/plugin.conf`, "on\n");
 * const denied = await protectedPaths(config, [`${config}/plugins/notes/data`]);
 * assert.ok(denied.includes(`${config}/plugins/other`));
 * assert.ok(denied.includes(`${config}/plugins/notes/plugin.conf`));
 * assert.ok(denied.includes(`${config}/plugins.lock.json`));
 * assert.ok(!denied.some((path) => `${config}/plugins/notes/data`.startsWith(path)));
 * assert.deepEqual(await protectedPaths(config, ["/elsewhere/mod.js"]), [config]);
 * await Deno.remove(config, { recursive: true });
 * ```
 */
export async function protectedPaths(
  configDir: string,
  keep: readonly string[],
): Promise<string[]> {
  const root = resolve(configDir);
  const kept = keep.map((path) => resolve(path));
  // Denying a folder that holds a path the process was granted loses that grant (Deno 2.9.6
  // sometimes refuses an import under it), so such a folder is never denied as a whole.
  const within = (path: string, folder: string) =>
    path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
  const denied: string[] = [];
  const walk = async (path: string): Promise<void> => {
    if (kept.some((k) => within(path, k))) return;
    if (!kept.some((k) => within(k, path))) {
      denied.push(path);
      return;
    }
    try {
      for await (const item of Deno.readDir(path)) await walk(join(path, item.name));
    } catch {
      // Not a folder, or gone: nothing below it to deny.
    }
  };
  await walk(root);
  for (const name of ["config.yaml", "plugins.lock.json", "faults.json", "sessions"]) {
    const path = join(root, name);
    if (!denied.includes(path) && !denied.includes(root) && !kept.some((k) => within(k, path))) {
      denied.push(path);
    }
  }
  return denied;
}

// The first path of `permissions` that lands in amber's config directory, as "read x": Deno lets
// a grant that specific win over the process's deny of that folder, so such a path would hand a
// plugin the lock (and with it `trusted`). `data:` paths are its own folder there, and fine.
function configReach(
  permissions: PluginPermissions | undefined,
  settings: Pick<SandboxSettings, "configDir" | "workspace">,
): string | undefined {
  const config = resolve(settings.configDir);
  for (const kind of ["read", "write", "run"] as const) {
    for (const entry of permissions?.[kind] ?? []) {
      if (typeof entry !== "string" || entry.startsWith("data:")) continue;
      const path = resolve(settings.workspace, entry);
      if (path === config || path.startsWith(config + sep)) {
        return `${kind} ${entry}`;
      }
    }
  }
  return undefined;
}

// The resolution recorded with the graph, which the process is held to; none without npm imports.
function npmResolution(graph: ModuleGraph | undefined): { npm?: NpmResolution } {
  if (graph?.npm === undefined) return {};
  const packages: { [id: string]: { integrity?: string; dependencies?: readonly string[] } } = {};
  for (const { name, version, integrity, dependencies } of graph.packages) {
    packages[`${name}@${version}`] = {
      ...(integrity !== undefined ? { integrity } : {}),
      ...(dependencies !== undefined ? { dependencies } : {}),
    };
  }
  return { npm: { specifiers: graph.npm, packages } };
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

// Where `@amber/*` resolve in a plugin's process, when the build amber runs as says so.
function packagesOption(): { packages?: AmberPackages } {
  const packages = pluginProcessPackages();
  return packages === undefined ? {} : { packages };
}
