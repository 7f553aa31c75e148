/**
 * Third-party plugins: `amber plugins add <spec>` takes a plugin from a local file, an npm
 * package or a JSR package, checks it with the same validator `PluginRuntime.register` uses,
 * and records it in `plugins.lock.json` in the config directory; every start loads the recorded
 * plugins after the bundled ones.
 *
 * A third-party plugin runs in a process of its own (a child `deno run`, see
 * `@amber/core/sandbox`) with exactly the Deno permissions the user granted it, none by default.
 * Its manifest (`Plugin.permissions`) says what it needs: paths to read or write (relative to
 * the workspace, or `data:...` in its data folder `<config dir>/plugins/<id>/data`), net hosts,
 * env names, commands. `amber plugins add` reads the manifest from a process that may read the
 * plugin's own modules and nothing else, shows what it asks for and asks (when stdin is a
 * terminal); `--grant` accepts it without a question; without either, a plugin that asks for
 * anything is refused (exit 2) and nothing is recorded. One that asks for nothing is added
 * without a question. `amber plugins update <id>` needs a new grant the same way when a new
 * version asks for more; one that asks for less keeps only that. `--trusted` (after a warning)
 * records `trusted: true`: that plugin is imported into amber and runs with all of amber's
 * permissions, as every plugin did before; adding it again without `--trusted` sandboxes it.
 * A compiled amber (`deno task compile`) is not `deno` and cannot start plugin processes: it
 * refuses sandboxed plugins, saying so, and loads only trusted ones.
 *
 * The lock file, `<config dir>/plugins.lock.json`:
 *
 * ```json
 * {
 *   "version": 1,
 *   "plugins": [{
 *     "id": "greeter", "name": "Greeter", "version": "0.1.0", "category": "tools",
 *     "spec": "/home/me/greeter/mod.ts", "kind": "file",
 *     "specifier": "file:///home/me/greeter/mod.ts", "resolved": "file:///home/me/greeter/mod.ts",
 *     "sha256": "<64 hex digits>", "graph": { "version": 1, "files": [], "packages": [] },
 *     "grant": { "read": ["docs"], "write": ["data:cache"], "net": ["api.example.com"] },
 *     "addedAt": "2025-01-01T00:00:00.000Z"
 *   }]
 * }
 * ```
 *
 * `spec` is what `amber plugins add` takes again (a local path is stored as its absolute real
 * path, so it means the same from any directory); `specifier` is what is imported; `resolved`
 * is the file whose bytes `sha256` covers: a local file itself (or a directory's `deno.json`
 * export / `mod.ts`), an npm package's entry file as Deno resolves it, or a JSR package's entry
 * module of the version picked at add time (pinned in `specifier`). `grant` is what the user
 * accepted (an entry without one, written before plugins had processes of their own, is
 * granted nothing); `trusted: true` marks one that runs inside amber. Both are checked when the
 * lock is read, like every field: a bad one names the file, the entry and the field.
 *
 * The entry also records the plugin's module graph (`graph`, see `module_graph.ts`): every local
 * file it imports with its sha256, and its npm packages with version and integrity. The hashes
 * are checked before the plugin's process starts (or, trusted, before it is imported), so a
 * changed file never runs: a changed entry file is refused (the plugin is `failed`, naming the
 * file and both hashes) until `amber plugins add <spec>` accepts it again, a changed or missing
 * imported file until `amber plugins update <id>` does. An entry without `graph` (written before
 * amber recorded graphs) still loads, with a notice to run `update`.
 * An npm package that Deno can only locate once it is loaded (no `node_modules`, e.g. when
 * running the bundle) cannot be hashed before it runs: sandboxed, it is refused with a message
 * saying so; trusted, it is imported, then hashed, and a changed one is still never registered,
 * but its top-level code has run.
 *
 * A plugin that cannot be loaded (missing file, syntax error, a module that throws, no default
 * export, not a plugin, a changed hash, a manifest asking for more than its grant) is registered
 * with `PluginRuntime.registerFailed`, so it is listed as `failed` with a reason that names the
 * file and the cause, and every other plugin runs. One whose id a bundled plugin has taken
 * cannot be listed under that id; it is reported as a diagnostic on every start until
 * `amber plugins remove <id>` drops it from the lock.
 *
 * Loading a recorded plugin has a deadline, `timeouts.import` (per plugin:
 * `timeouts.plugins.<id>.import`). A plugin process past it is killed; a trusted import past it
 * is abandoned (an import cannot be cancelled). Either way the plugin is failed and, with the
 * host's fault record, held: later starts do not load it, and say so, until
 * `amber plugins enable <id>` releases it.
 *
 * This module holds what `amber plugins add|update|remove` do; a starting host's part is
 * `third_party_start.ts`, the lock file `plugin_lock.ts`, grants `plugin_grant.ts`, the plugin
 * process `plugin_sandbox.ts`, and locating, hashing and importing a source `plugin_source.ts`.
 *
 * @module
 */

import { DeadlineError, DEFAULT_TIMEOUTS, type Plugin, withDeadline } from "@amber/core";
import { noteAbandonedWork } from "./containment.ts";
import { readFaultRecord, updateFaultRecord } from "./fault_record.ts";
import { UsageError } from "./args.ts";
import { type PluginLockEntry, readPluginLock, updatePluginLock } from "./plugin_lock.ts";
import { type GrantDecider, settleGrant } from "./plugin_grant.ts";
import { describeInSandbox } from "./plugin_sandbox.ts";
import {
  type LoadedPlugin,
  loadThirdPartyPlugin,
  locatePluginSource,
  type PluginSource,
} from "./plugin_source.ts";
import {
  computeModuleGraph,
  diffModuleGraphs,
  type GraphDiff,
  graphFolder,
  type ModuleGraph,
} from "./module_graph.ts";
import { reservedIdProblem, ThirdPartyPluginError } from "./third_party_error.ts";

export {
  PLUGIN_LOCK_FILE,
  type PluginLock,
  type PluginLockEntry,
  pluginLockPath,
  type PluginSourceKind,
  readPluginLock,
  updatePluginLock,
  writePluginLock,
} from "./plugin_lock.ts";
export {
  type LoadedPlugin,
  type LoadOptions,
  loadThirdPartyPlugin,
  locatePluginSource,
  type PluginSource,
} from "./plugin_source.ts";
export {
  type ImportFaults,
  registerThirdPartyPlugins,
  type ThirdPartyPlugins,
  type ThirdPartyStartOptions,
} from "./third_party_start.ts";
export { type GrantDecider, type GrantRequest, GrantRequiredError } from "./plugin_grant.ts";
export { pluginDataDir } from "./plugin_sandbox.ts";
export {
  PluginGraphChangedError,
  PluginHashMismatchError,
  ThirdPartyPluginError,
} from "./third_party_error.ts";
export type { GraphDiff, GraphFile, GraphPackage, ModuleGraph } from "./module_graph.ts";
export type { FaultRecord, PluginFaultEntry, RecordedFault, RecordedHold } from "./fault_record.ts";

/** What {@linkcode addThirdPartyPlugin} did. */
export interface AddResult {
  /** The entry recorded. */
  readonly entry: PluginLockEntry;
  /** The entry it replaced (the same plugin added again), if any. */
  readonly previous?: PluginLockEntry;
  /** The lock file written. */
  readonly path: string;
}

/** Options of {@linkcode addThirdPartyPlugin}. */
export interface AddOptions {
  /** What a relative path is resolved against. */
  readonly cwd?: string;
  /** The ids of the plugins built into the host, which a third-party plugin may not take. */
  readonly bundledIds: readonly string[];
  /** How long loading it may take (ms); `DEFAULT_TIMEOUTS.import` by default. */
  readonly timeoutMs?: number;
  /**
   * Runs it inside amber with all of amber's permissions (`--trusted`), recorded as
   * `trusted: true`; otherwise it runs in a process of its own with only its grant.
   */
  readonly trusted?: boolean;
  /**
   * Asked when it asks for permissions beyond those granted before (`--grant` answers yes; a
   * terminal asks the user). Without it such a plugin is refused with a `GrantRequiredError`.
   */
  readonly grant?: GrantDecider;
  /** The workspace its grant's relative paths mean; the current directory by default. */
  readonly workspace?: string;
  /** Receives what its process logs while its manifest is read. */
  readonly onLog?: (pluginId: string, line: string) => void;
}

/**
 * `amber plugins add`: reads the plugin's manifest in a process of its own with no permission
 * at all (with `options.trusted`, by importing it into amber), so it must load cleanly: nothing
 * is recorded otherwise. Refuses an id a bundled plugin has or another spec already recorded;
 * asks `options.grant` when it asks for permissions not granted before (refused without a yes);
 * and records it with the grant, or accepts it again (a new hash) when the same spec is added
 * once more. Loading it has a deadline (`options.timeoutMs`). A plugin added (again) starts
 * with a clean fault record: a hold from a hung import or initialize of what it was is forgotten.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { addThirdPartyPlugin, readPluginLock } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * const plugin = (version: string) =>
 *   `export default { id: 'tiny', version: '${version}', name: 'Tiny', ` +
 *   "initialize: () => true, shutdown() {}, capabilities: () => [] };";
 * await Deno.writeTextFile(`${dir}/mod.js`, plugin("1.0.0"));
 * const { entry } = await addThirdPartyPlugin(dir, `${dir}/mod.js`, { bundledIds: ["hello"] });
 * assert.equal(entry.id, "tiny");
 * assert.equal(entry.kind, "file");
 * assert.deepEqual(entry.grant, {});
 * assert.deepEqual((await readPluginLock(dir)).plugins, [entry]);
 * // The same validator as `PluginRuntime.register`: a version with a leading zero is refused,
 * // naming the file and the field, and the lock stays as it was.
 * await Deno.writeTextFile(`${dir}/bad.js`, plugin("01.0.0"));
 * await assert.rejects(
 *   addThirdPartyPlugin(dir, `${dir}/bad.js`, { bundledIds: [] }),
 *   /bad\.js: .*version '01\.0\.0' is not semver/,
 * );
 * assert.deepEqual((await readPluginLock(dir)).plugins, [entry]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function addThirdPartyPlugin(
  configDir: string,
  spec: string,
  options: AddOptions,
): Promise<AddResult> {
  return await record(configDir, spec, options, () => `amber plugins add ${spec} --grant`);
}

// What a plugin says of itself, from its manifest or (trusted) the imported object.
interface Found {
  readonly source: PluginSource;
  readonly about: Pick<Plugin, "id" | "name" | "version" | "category" | "description"> & {
    readonly permissions?: unknown;
  };
  readonly graph?: ModuleGraph;
}

async function record(
  configDir: string,
  spec: string,
  options: AddOptions,
  retry: (id: string) => string,
): Promise<AddResult> {
  // A lock file that is not valid is refused before any plugin code runs.
  await readPluginLock(configDir);
  const ms = options.timeoutMs ?? DEFAULT_TIMEOUTS.import;
  const found = options.trusted === true
    ? await foundInProcess(spec, options, ms)
    : await foundInSandbox(configDir, spec, options, ms);
  const { source, about } = found;
  if (options.bundledIds.includes(about.id)) {
    throw new ThirdPartyPluginError(
      source.spec,
      `${source.file}: its id '${about.id}' is taken by a bundled plugin; a third-party plugin needs an id of its own`,
    );
  }
  const reserved = reservedIdProblem(about.id);
  if (reserved !== undefined) {
    throw new ThirdPartyPluginError(source.spec, `${source.file}: ${reserved}`);
  }
  // Asked before the lock file is locked: the user may take their time.
  const before = (await readPluginLock(configDir)).plugins
    .find((e) => e.id === about.id && e.spec === source.spec);
  const grant = options.trusted === true ? undefined : await settleGrant(
    { ...about, file: source.file },
    before?.trusted === true ? undefined : before?.grant,
    options.grant,
    retry(about.id),
  );
  const { graph } = found;
  const entry: PluginLockEntry = {
    id: about.id,
    name: about.name,
    version: about.version,
    ...(about.category !== undefined ? { category: about.category } : {}),
    ...(about.description !== undefined ? { description: about.description } : {}),
    spec: source.spec,
    kind: source.kind,
    specifier: source.specifier,
    resolved: source.resolved,
    sha256: source.sha256,
    ...(graph !== undefined ? { graph } : {}),
    ...(grant !== undefined ? { grant } : {}),
    ...(options.trusted === true ? { trusted: true as const } : {}),
    addedAt: new Date().toISOString(),
  };
  let previous: PluginLockEntry | undefined;
  // Checked and changed under the file lock against what is on disk now, so an entry another
  // `amber plugins add` recorded meanwhile is kept.
  const path = await updatePluginLock(configDir, (lock) => {
    previous = lock.plugins.find((e) => e.id === entry.id);
    if (previous !== undefined && previous.spec !== entry.spec) {
      throw new ThirdPartyPluginError(
        entry.spec,
        `${source.file}: plugin id '${entry.id}' is already added from ${previous.spec}; run \`amber plugins remove ${entry.id}\` first`,
      );
    }
    // The same spec under another id (the plugin renamed itself) replaces its old entry.
    const others = lock.plugins.filter((e) => e.id !== entry.id && e.spec !== entry.spec);
    const at = lock.plugins.findIndex((e) => e.id === entry.id || e.spec === entry.spec);
    const plugins = [...others];
    plugins.splice(at < 0 ? plugins.length : Math.min(at, plugins.length), 0, entry);
    return { version: 1, plugins };
  });
  // Accepted anew: what amber remembered of its faults (a hold above all) is about what it was.
  const faults = await readFaultRecord(configDir).catch(() => undefined);
  if (faults?.plugins[entry.id] !== undefined) {
    await updateFaultRecord(configDir, [{
      kind: "release",
      pluginId: entry.id,
      where: "add",
      message: "added again",
      at: Date.now(),
    }]);
  }
  return { entry, path, ...(previous !== undefined ? { previous } : {}) };
}

// `--trusted`: imported into amber as before plugins had processes of their own.
async function foundInProcess(spec: string, options: AddOptions, ms: number): Promise<Found> {
  let loaded: LoadedPlugin;
  try {
    loaded = await withDeadline(() => loadThirdPartyPlugin(spec, { cwd: options.cwd }), ms, spec);
  } catch (error) {
    if (!(error instanceof DeadlineError)) throw error;
    noteAbandonedWork();
    throw new ThirdPartyPluginError(
      spec,
      `${spec}: loading it did not finish within ${ms} ms; nothing was recorded`,
      { cause: error },
    );
  }
  const { plugin, ...source } = loaded;
  // Listed only now that it loaded: a plugin that does not is refused with Deno's own words.
  const folder = graphFolder(source.resolved);
  const graph = folder === undefined
    ? undefined
    : await computeModuleGraph(source.specifier, folder);
  return { source, about: plugin, ...(graph !== undefined ? { graph } : {}) };
}

// The default: located and hashed without running it, then its manifest read from a process
// of its own that may read its modules and nothing else.
async function foundInSandbox(
  configDir: string,
  spec: string,
  options: AddOptions,
  ms: number,
): Promise<Found> {
  const source = await locatePluginSource(spec, { cwd: options.cwd });
  const folder = graphFolder(source.resolved);
  // Listed before it runs: its process may read the folders its modules are in. A module Deno
  // cannot list is loaded all the same, so that the refusal has Deno's words for it.
  let listing: { graph?: ModuleGraph; error?: unknown } = {};
  if (folder !== undefined) {
    try {
      listing = { graph: await computeModuleGraph(source.specifier, folder) };
    } catch (error) {
      listing = { error };
    }
  }
  // Unlisted, it may read its entry file only: the import then fails with Deno's words.
  const graph = listing.graph ?? { version: 1 as const, files: [], packages: [] };
  const manifest = await describeInSandbox(source, graph, {
    configDir,
    workspace: options.workspace ?? Deno.cwd(),
    importTimeoutMs: ms,
    ...(options.onLog !== undefined ? { onLog: options.onLog } : {}),
  });
  if (listing.error !== undefined) throw listing.error;
  return { source, about: manifest, ...(listing.graph ? { graph: listing.graph } : {}) };
}

/** What {@linkcode updateThirdPartyPlugin} did. */
export interface UpdateResult extends AddResult {
  /** The entry it replaced. */
  readonly previous: PluginLockEntry;
  /**
   * How the recorded graph changed; `undefined` when the old entry had no graph (it recorded
   * only its entry file) or the new one has none (a remote module).
   */
  readonly diff?: GraphDiff;
}

/**
 * `amber plugins update <id>`: loads the added plugin `id` again from the spec it was added
 * from and records its entry file and module graph as they are now, under the lock file's
 * lock, returning what changed. A trusted plugin stays trusted. A sandboxed one whose manifest
 * now asks for more than its recorded grant needs `options.grant`'s yes (`--grant`), else a
 * `GrantRequiredError` is thrown and nothing is recorded; one that asks for less keeps only
 * what it asks now. Throws a `UsageError` for an id that is not an added plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { addThirdPartyPlugin, updateThirdPartyPlugin } from "@amber/cli/third-party";
 * const dir = await Deno.realPath(await Deno.makeTempDir());
 * await Deno.writeTextFile(
 *   `${dir}/mod.js`,
 *   "import { name } from './helper.js'; export default { id: 'tiny', version: '1.0.0', " +
 *     "name, initialize: () => true, shutdown() {}, capabilities: () => [] };",
 * );
 * await Deno.writeTextFile(`${dir}/helper.js`, "export const name = 'Tiny';");
 * await addThirdPartyPlugin(dir, `${dir}/mod.js`, { bundledIds: [] });
 * await Deno.writeTextFile(`${dir}/helper.js`, "export const name = 'Tiny too';");
 * const { diff, entry } = await updateThirdPartyPlugin(dir, "tiny", { bundledIds: [] });
 * assert.deepEqual(diff?.changed, ["helper.js"]);
 * assert.deepEqual(entry.graph?.files.map((file) => file.path), ["helper.js", "mod.js"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function updateThirdPartyPlugin(
  configDir: string,
  id: string,
  options: AddOptions,
): Promise<UpdateResult> {
  const { plugins } = await readPluginLock(configDir);
  const recorded = plugins.find((e) => e.id === id);
  if (recorded === undefined) {
    const added = plugins.map((e) => e.id).join(", ");
    throw new UsageError(`'${id}' is not an added plugin; added plugins: ${added || "(none)"}`);
  }
  // A trusted plugin stays trusted; a sandboxed one needs a new grant only for more.
  const result = await record(
    configDir,
    recorded.spec,
    { ...options, trusted: recorded.trusted === true },
    () => `amber plugins update ${id} --grant`,
  );
  const previous = result.previous ?? recorded;
  const before: ModuleGraph | undefined = previous.graph;
  const after = result.entry.graph;
  return {
    ...result,
    previous,
    ...(before !== undefined && after !== undefined
      ? { diff: diffModuleGraphs(before, after) }
      : {}),
  };
}

/** What {@linkcode removeThirdPartyPlugin} did. */
export interface RemoveResult {
  /** The entry removed. */
  readonly entry: PluginLockEntry;
  /** The lock file written. */
  readonly path: string;
}

/**
 * `amber plugins remove`: drops the plugin's lock entry. Its `plugins/<id>/plugin.conf` is left
 * as it is, like every plugin's state. A bundled plugin cannot be removed (a
 * {@linkcode ThirdPartyPluginError} says to disable it instead); an id that is neither throws a
 * `UsageError` listing the added plugins.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { removeThirdPartyPlugin, ThirdPartyPluginError } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * await assert.rejects(removeThirdPartyPlugin(dir, "hello", ["hello"]), ThirdPartyPluginError);
 * await assert.rejects(removeThirdPartyPlugin(dir, "nope", ["hello"]), /added plugins: \(none\)/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function removeThirdPartyPlugin(
  configDir: string,
  id: string,
  bundledIds: readonly string[],
): Promise<RemoveResult> {
  let removed: PluginLockEntry | undefined;
  const path = await updatePluginLock(configDir, (lock) => {
    const entry = lock.plugins.find((e) => e.id === id);
    if (entry === undefined) {
      if (bundledIds.includes(id)) {
        throw new ThirdPartyPluginError(
          id,
          `'${id}' is bundled with amber and cannot be removed; switch it off with \`amber plugins disable ${id}\``,
        );
      }
      const added = lock.plugins.map((e) => e.id).join(", ") || "(none)";
      throw new UsageError(`'${id}' is not an added plugin; added plugins: ${added}`);
    }
    removed = entry;
    return { version: 1, plugins: lock.plugins.filter((e) => e !== entry) };
  });
  return { entry: removed!, path };
}
