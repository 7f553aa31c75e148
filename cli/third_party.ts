/**
 * Third-party plugins: `amber plugins add <spec>` loads a plugin from a local file, an npm
 * package or a JSR package, checks it with the same validator `PluginRuntime.register` uses,
 * and records it in `plugins.lock.json` in the config directory; every start loads the recorded
 * plugins after the bundled ones.
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
 *     "sha256": "<64 hex digits>", "addedAt": "2025-01-01T00:00:00.000Z"
 *   }]
 * }
 * ```
 *
 * `spec` is what `amber plugins add` takes again (a local path is stored as its absolute real
 * path, so it means the same from any directory); `specifier` is what is imported; `resolved`
 * is the file whose bytes `sha256` covers: a local file itself (or a directory's `deno.json`
 * export / `mod.ts`), an npm package's entry file as Deno resolves it, or a JSR package's entry
 * module of the version picked at add time (pinned in `specifier`).
 *
 * The entry also records the plugin's module graph (`graph`, see `module_graph.ts`): every local
 * file it imports with its sha256, and its npm packages with version and integrity. The hashes
 * are checked before the module is imported, so a changed file never runs: a changed entry file
 * is refused (the plugin is `failed`, naming the file and both hashes) until
 * `amber plugins add <spec>` accepts it again, a changed or missing imported file until
 * `amber plugins update <id>` does. An entry without `graph` (written before amber recorded
 * graphs) still loads, with a notice to run `update`.
 * The one exception is an npm package that Deno can only locate once it is loaded (no
 * `node_modules`, e.g. when running the bundle): it is imported, then hashed, and a changed one
 * is still never registered, but its top-level code has run.
 *
 * A plugin that cannot be loaded (missing file, syntax error, a module that throws, no default
 * export, not a plugin, a changed hash) is registered with `PluginRuntime.registerFailed`, so it
 * is listed as `failed` with a reason that names the file and the cause, and every other plugin
 * runs. One whose id a bundled plugin has taken cannot be listed under that id; it is reported
 * as a diagnostic on every start until `amber plugins remove <id>` drops it from the lock.
 *
 * Loading a recorded plugin has a deadline, `timeouts.import` (per plugin:
 * `timeouts.plugins.<id>.import`). An import past it is abandoned (an import cannot be
 * cancelled) and the plugin is failed; with the host's fault record it is also held: later
 * starts do not import it, and say so, until `amber plugins enable <id>` releases it.
 *
 * This module holds what `amber plugins add|remove` and a starting host do; the lock file is
 * `plugin_lock.ts`, and locating, hashing and importing a source is `plugin_source.ts`.
 *
 * @module
 */

import {
  createPluginHostApi,
  DeadlineError,
  DEFAULT_TIMEOUTS,
  type FaultEvent,
  type Plugin,
  type PluginHostApi,
  type PluginRuntime,
  timeoutFor,
  withDeadline,
} from "@amber/core";
import { noteAbandonedWork } from "./containment.ts";
import { type FaultRecord, readFaultRecord, updateFaultRecord } from "./fault_record.ts";
import { UsageError } from "./args.ts";
import {
  PLUGIN_LOCK_FILE,
  type PluginLock,
  type PluginLockEntry,
  readPluginLock,
  updatePluginLock,
} from "./plugin_lock.ts";
import { type LoadedPlugin, loadThirdPartyPlugin } from "./plugin_source.ts";
import {
  computeModuleGraph,
  diffModuleGraphs,
  type GraphDiff,
  graphFolder,
  type ModuleGraph,
} from "./module_graph.ts";
import { describeLoadError, ThirdPartyPluginError } from "./third_party_error.ts";
import { VERSION } from "./version.ts";

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
export { type LoadedPlugin, type LoadOptions, loadThirdPartyPlugin } from "./plugin_source.ts";
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
}

/**
 * `amber plugins add`: loads the plugin (which must load cleanly: nothing is recorded
 * otherwise), refuses an id a bundled plugin has or another spec already recorded, and records
 * it, or accepts it again (a new hash) when the same spec is added once more. Loading it has a
 * deadline (`options.timeoutMs`). A plugin added (again) starts with a clean fault record: a
 * hold from a hung import or initialize of what it was is forgotten.
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
 * assert.deepEqual((await readPluginLock(dir)).plugins, [entry]);
 * // The same validator as `PluginRuntime.register`: a version with a leading zero is refused,
 * // naming the file and the field, and the lock stays as it was.
 * await Deno.writeTextFile(`${dir}/bad.js`, plugin("01.0.0"));
 * await assert.rejects(
 *   addThirdPartyPlugin(dir, `${dir}/bad.js`, { bundledIds: [] }),
 *   /bad\.js: the default export is not a plugin: version '01\.0\.0' is not semver/,
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
  // A lock file that is not valid is refused before any plugin code runs.
  await readPluginLock(configDir);
  const ms = options.timeoutMs ?? DEFAULT_TIMEOUTS.import;
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
  const { plugin } = loaded;
  if (options.bundledIds.includes(plugin.id)) {
    throw new ThirdPartyPluginError(
      loaded.spec,
      `${loaded.file}: its id '${plugin.id}' is taken by a bundled plugin; a third-party plugin needs an id of its own`,
    );
  }
  // Listed only now that it loaded: a plugin that does not is refused with Deno's own words.
  const folder = graphFolder(loaded.resolved);
  const graph = folder === undefined
    ? undefined
    : await computeModuleGraph(loaded.specifier, folder);
  const entry: PluginLockEntry = {
    id: plugin.id,
    name: plugin.name,
    version: plugin.version,
    ...(plugin.category !== undefined ? { category: plugin.category } : {}),
    ...(plugin.description !== undefined ? { description: plugin.description } : {}),
    spec: loaded.spec,
    kind: loaded.kind,
    specifier: loaded.specifier,
    resolved: loaded.resolved,
    sha256: loaded.sha256,
    ...(graph !== undefined ? { graph } : {}),
    addedAt: new Date().toISOString(),
  };
  let previous: PluginLockEntry | undefined;
  // Checked and changed under the file lock against what is on disk now, so an entry another
  // `amber plugins add` recorded meanwhile is kept.
  const path = await updatePluginLock(configDir, (lock) => {
    previous = lock.plugins.find((e) => e.id === plugin.id);
    if (previous !== undefined && previous.spec !== loaded.spec) {
      throw new ThirdPartyPluginError(
        loaded.spec,
        `${loaded.file}: plugin id '${plugin.id}' is already added from ${previous.spec}; run \`amber plugins remove ${plugin.id}\` first`,
      );
    }
    // The same spec under another id (the plugin renamed itself) replaces its old entry.
    const others = lock.plugins.filter((e) => e.id !== plugin.id && e.spec !== loaded.spec);
    const at = lock.plugins.findIndex((e) => e.id === plugin.id || e.spec === loaded.spec);
    const plugins = [...others];
    plugins.splice(at < 0 ? plugins.length : Math.min(at, plugins.length), 0, entry);
    return { version: 1, plugins };
  });
  // Accepted anew: what amber remembered of its faults (a hold above all) is about what it was.
  const faults = await readFaultRecord(configDir).catch(() => undefined);
  if (faults?.plugins[plugin.id] !== undefined) {
    await updateFaultRecord(configDir, [{
      kind: "release",
      pluginId: plugin.id,
      where: "add",
      message: "added again",
      at: Date.now(),
    }]);
  }
  return { entry, path, ...(previous !== undefined ? { previous } : {}) };
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
 * lock, returning what changed. Throws a `UsageError` for an id that is not an added plugin.
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
  const result = await addThirdPartyPlugin(configDir, recorded.spec, options);
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

/**
 * Loads every plugin recorded in `configDir`'s lock and registers it with `runtime`, after the
 * plugins already registered (the bundled ones); one that cannot be loaded is registered as
 * failed with the reason. Never throws: a bad lock file or an id a bundled plugin has taken is
 * reported through `runtime.report`. Each import has the plugin's `import` deadline; given
 * `faults`, one whose import hung before is not imported but registered as failed and held
 * (see `PluginRuntime.hold`), and one that hangs now is noted there. Resolves to the plugins
 * registered.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { addThirdPartyPlugin, registerThirdPartyPlugins } from "@amber/cli/third-party";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * const dir = await Deno.makeTempDir();
 * assert.deepEqual(await registerThirdPartyPlugins(runtime, dir), []);
 * await Deno.writeTextFile(
 *   `${dir}/mod.js`,
 *   "export default { id: 'tiny', version: '1.0.0', name: 'Tiny', initialize: () => true, " +
 *     "shutdown() {}, capabilities: () => [] };",
 * );
 * await addThirdPartyPlugin(dir, `${dir}/mod.js`, { bundledIds: [] });
 * const registered = await registerThirdPartyPlugins(runtime, dir);
 * assert.deepEqual(registered.map((plugin) => plugin.id), ["tiny"]);
 * assert.equal(runtime.info("tiny").source, `${await Deno.realPath(dir)}/mod.js`);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function registerThirdPartyPlugins(
  runtime: PluginRuntime,
  configDir: string,
  faults?: ImportFaults,
): Promise<Plugin[]> {
  let lock: PluginLock;
  try {
    lock = await readPluginLock(configDir);
  } catch (error) {
    runtime.report({
      pluginId: "core",
      where: PLUGIN_LOCK_FILE,
      message: describeLoadError(error),
      error,
    });
    return [];
  }
  if (lock.plugins.length === 0) return [];
  const api = createPluginHostApi(VERSION);
  // Loaded side by side, registered in lock order, so the order never depends on timing.
  const outcomes = await Promise.all(
    lock.plugins.map((entry) => importWithin(runtime, entry, api, faults)),
  );
  const registered: Plugin[] = [];
  for (let i = 0; i < lock.plugins.length; i++) {
    const entry = lock.plugins[i];
    const { loaded, error, hold } = outcomes[i];
    if (runtime.ids().includes(entry.id)) {
      runtime.report({
        pluginId: entry.id,
        where: "load",
        message:
          `${entry.spec}: not loaded: its id '${entry.id}' is taken by a bundled plugin; run \`amber plugins remove ${entry.id}\` to drop it`,
      });
      continue;
    }
    let reason: string | undefined;
    if (hold !== undefined) reason = hold.reason;
    else if (loaded === undefined) reason = describeLoadError(error);
    else if (loaded.plugin.id !== entry.id) {
      reason =
        `${loaded.file}: its id is now '${loaded.plugin.id}', but it was added as '${entry.id}'; run \`amber plugins add ${entry.spec}\` again`;
    } else {
      try {
        runtime.register(loaded.plugin, { source: entry.spec });
        registered.push(loaded.plugin);
        // An entry from before graphs were recorded still loads; the user's file is left alone.
        if (entry.graph === undefined && graphFolder(entry.resolved) !== undefined) {
          runtime.report({
            pluginId: entry.id,
            where: PLUGIN_LOCK_FILE,
            message:
              `${entry.spec}: the lock records only this file, not the modules it imports; ` +
              `run \`amber plugins update ${entry.id}\` to record them all`,
          });
        }
        continue;
      } catch (thrown) {
        reason = `${loaded.file}: ${describeLoadError(thrown)}`;
      }
    }
    try {
      runtime.registerFailed({
        id: entry.id,
        reason,
        source: entry.spec,
        name: entry.name,
        version: entry.version,
        ...(entry.category !== undefined ? { category: entry.category } : {}),
        ...(entry.description !== undefined ? { description: entry.description } : {}),
      });
      if (hold !== undefined) runtime.hold(entry.id, hold.held);
    } catch (thrown) {
      runtime.report({
        pluginId: "core",
        where: PLUGIN_LOCK_FILE,
        message: describeLoadError(thrown),
      });
    }
  }
  return registered;
}

/**
 * What {@linkcode registerThirdPartyPlugins} needs to keep a hung import from being waited for
 * on every start: the fault record read at start, and where to note a new timeout.
 */
export interface ImportFaults {
  /** The record when the host opened. */
  readonly record: FaultRecord;
  /** Told of an import that times out, to remember it. */
  onFault(event: FaultEvent): void;
}

interface ImportOutcome {
  readonly loaded?: LoadedPlugin;
  readonly error?: unknown;
  // An import that hung, now or in an earlier process: why it is failed in this process, and
  // the reason it is held for until the user switches it on.
  readonly hold?: { readonly reason: string; readonly held: string };
}

// Loads one recorded plugin within the `import` deadline; one whose import hung before is not
// imported at all.
async function importWithin(
  runtime: PluginRuntime,
  entry: PluginLockEntry,
  api: PluginHostApi,
  faults: ImportFaults | undefined,
): Promise<ImportOutcome> {
  const id = entry.id;
  const again = `\`amber plugins enable ${id}\``;
  const before = faults?.record.plugins[id]?.hold;
  if (before?.seam === "import") {
    return {
      hold: {
        reason: `${entry.spec}: not imported in this process (its import hung at ${before.at}); ` +
          "amber imports it again at its next start",
        held: `${entry.spec}: not imported: its import hung at ${before.at} ` +
          `(${before.message}); ${again} tries it again`,
      },
    };
  }
  const ms = timeoutFor(runtime.config(), "import", id);
  try {
    const what = `the import of plugin '${id}'`;
    return {
      loaded: await withDeadline(
        () => loadThirdPartyPlugin(entry.spec, { api, expected: entry }),
        ms,
        what,
      ),
    };
  } catch (error) {
    if (!(error instanceof DeadlineError)) return { error };
    // The import cannot be cancelled: whatever it waits for stays behind.
    noteAbandonedWork();
    faults?.onFault({
      kind: "timeout",
      pluginId: id,
      where: "import",
      message: error.message,
      at: Date.now(),
      seam: "import",
    });
    const reason = `${entry.spec}: ${error.message}`;
    return { hold: { reason, held: `${reason}; amber does not import it again until ${again}` } };
  }
}
