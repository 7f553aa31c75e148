/**
 * A starting host's side of third-party plugins: every plugin the lock records is checked
 * against its recorded hashes (entry file and module graph) before anything of it runs, then
 * started: a `trusted` one imported into amber as before, any other in a process of its own
 * with exactly the grant the lock records (an entry without one is granted nothing). They load
 * side by side and are registered in lock order. A plugin that cannot be loaded is registered
 * failed with the reason; one whose manifest now asks for more than its grant is failed naming
 * what, and `amber plugins update <id> --grant`.
 *
 * @module
 */

import {
  createPluginHostApi,
  DeadlineError,
  type FaultEvent,
  type Plugin,
  type PluginHostApi,
  type PluginPermissions,
  type PluginRuntime,
  timeoutFor,
  withDeadline,
} from "@amber/core";
import {
  checkPermissions,
  exceedsGrant,
  type SandboxedPlugin,
  type SpawnedPluginProcess,
} from "@amber/core/sandbox";
import { noteAbandonedWork } from "./containment.ts";
import type { FaultRecord } from "./fault_record.ts";
import { graphFolder } from "./module_graph.ts";
import {
  PLUGIN_LOCK_FILE,
  type PluginLock,
  type PluginLockEntry,
  pluginLockPath,
  readPluginLock,
} from "./plugin_lock.ts";
import { type SandboxSettings, startSandboxed } from "./plugin_sandbox.ts";
import { type LoadedPlugin, loadThirdPartyPlugin, locatePluginSource } from "./plugin_source.ts";
import {
  describeLoadError,
  reservedIdProblem,
  ThirdPartyPluginError,
} from "./third_party_error.ts";
import { VERSION } from "./version.ts";

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

/** Options of {@linkcode registerThirdPartyPlugins}. */
export interface ThirdPartyStartOptions {
  /**
   * The fault record: a plugin whose import hung before is not loaded but registered failed
   * and held (see `PluginRuntime.hold`), and one that hangs now is noted there.
   */
  readonly faults?: ImportFaults;
  /** The workspace the grants' relative paths mean; the current directory by default. */
  readonly workspace?: string;
  /** Receives what a sandboxed plugin's process logs. */
  readonly onLog?: (pluginId: string, line: string) => void;
  /** Told of each plugin process started, to record it (see `SpawnPluginOptions.onSpawn`). */
  readonly onSpawn?: (pluginId: string, started: SpawnedPluginProcess) => void;
}

/** What {@linkcode registerThirdPartyPlugins} registered. */
export interface ThirdPartyPlugins {
  /** The plugins registered (not those registered failed). */
  readonly plugins: readonly Plugin[];
  /**
   * Ends every plugin process still running (one that was never switched on, say); after
   * `runtime.stop()`, which shuts the active ones down.
   */
  close(): Promise<void>;
}

/**
 * Loads every plugin recorded in `configDir`'s lock and registers it with `runtime`, after the
 * plugins already registered (the bundled ones); one that cannot be loaded is registered as
 * failed with the reason. Never throws: a bad lock file or an id a bundled plugin has taken is
 * reported through `runtime.report`. Each load has the plugin's `import` deadline (a plugin
 * process past it is killed); a process that dies later fails its plugin through
 * `runtime.fail`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { addThirdPartyPlugin, registerThirdPartyPlugins } from "@amber/cli/third-party";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * const dir = await Deno.makeTempDir();
 * assert.deepEqual((await registerThirdPartyPlugins(runtime, dir)).plugins, []);
 * await Deno.writeTextFile(
 *   `${dir}/mod.js`,
 *   "export default { id: 'tiny', version: '1.0.0', name: 'Tiny', initialize: () => true, " +
 *     "shutdown() {}, capabilities: () => [] };",
 * );
 * await addThirdPartyPlugin(dir, `${dir}/mod.js`, { bundledIds: [] });
 * const started = await registerThirdPartyPlugins(runtime, dir);
 * assert.deepEqual(started.plugins.map((plugin) => plugin.id), ["tiny"]);
 * assert.equal(runtime.info("tiny").source, `${await Deno.realPath(dir)}/mod.js`);
 * await runtime.start();
 * assert.equal(runtime.state("tiny").status, "active");
 * await runtime.stop();
 * await started.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function registerThirdPartyPlugins(
  runtime: PluginRuntime,
  configDir: string,
  options: ThirdPartyStartOptions = {},
): Promise<ThirdPartyPlugins> {
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
    return { plugins: [], close: () => Promise.resolve() };
  }
  if (lock.plugins.length === 0) return { plugins: [], close: () => Promise.resolve() };
  const api = createPluginHostApi(VERSION);
  const settings: Omit<SandboxSettings, "importTimeoutMs"> = {
    configDir,
    workspace: options.workspace ?? Deno.cwd(),
    onFault: (fault) => runtime.fail(fault.pluginId, fault.where, fault.message),
    ...(options.onLog !== undefined ? { onLog: options.onLog } : {}),
    ...(options.onSpawn !== undefined ? { onSpawn: options.onSpawn } : {}),
  };
  const taken = new Set(runtime.ids());
  // A dotted id in the lock (written by hand: `amber plugins add` refuses one) is not loaded:
  // it could stand in for a plugin amber realizes for the session.
  const skipped = (entry: PluginLockEntry): boolean =>
    taken.has(entry.id) || reservedIdProblem(entry.id) !== undefined;
  // Loaded side by side, registered in lock order, so the order never depends on timing.
  const outcomes = await Promise.all(
    lock.plugins.map((entry) =>
      skipped(entry)
        ? {}
        : entry.trusted === true
        ? importWithin(runtime, entry, api, options.faults)
        : startWithin(runtime, entry, settings, options.faults)
    ),
  );
  const registered: Plugin[] = [];
  const processes: SandboxedPlugin[] = [];
  for (let i = 0; i < lock.plugins.length; i++) {
    const entry = lock.plugins[i];
    const { loaded, sandboxed, error, hold } = outcomes[i] as Outcome;
    if (taken.has(entry.id)) {
      runtime.report({
        pluginId: entry.id,
        where: "load",
        message:
          `${entry.spec}: not loaded: its id '${entry.id}' is taken by a bundled plugin; run \`amber plugins remove ${entry.id}\` to drop it`,
      });
      continue;
    }
    const reserved = reservedIdProblem(entry.id);
    if (reserved !== undefined) {
      // Not the entry's id: that may be a realized plugin's, whose fault this is not.
      runtime.report({
        pluginId: "core",
        where: "load",
        message: `${entry.spec}: not loaded: ${reserved}; run \`amber plugins remove ${entry.id}\``,
      });
      continue;
    }
    let reason: string | undefined;
    const plugin = sandboxed?.plugin ?? loaded?.plugin;
    if (hold !== undefined) reason = hold.reason;
    // Our own errors already say what and where, on one line; their causes are in them.
    else if (plugin === undefined) {
      reason = error instanceof ThirdPartyPluginError ? error.message : describeLoadError(error);
    } else if (plugin.id !== entry.id) {
      reason = `${
        loaded?.file ?? entry.spec
      }: its id is now '${plugin.id}', but it was added as '${entry.id}'; run \`amber plugins add ${entry.spec}\` again`;
    } else {
      try {
        runtime.register(plugin, { source: entry.spec });
        registered.push(plugin);
        if (sandboxed !== undefined) processes.push(sandboxed);
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
        reason = `${loaded?.file ?? entry.spec}: ${describeLoadError(thrown)}`;
      }
    }
    await sandboxed?.close();
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
  return {
    plugins: registered,
    close: async () => {
      await Promise.all(processes.map((process) => process.close()));
    },
  };
}

interface Outcome {
  readonly loaded?: LoadedPlugin;
  readonly sandboxed?: SandboxedPlugin;
  readonly error?: unknown;
  // A load that hung, now or in an earlier process: why it is failed in this process, and the
  // reason it is held for until the user switches it on.
  readonly hold?: { readonly reason: string; readonly held: string };
}

// A plugin whose load hung in an earlier process is not loaded again until the user says so.
function earlierHold(
  entry: PluginLockEntry,
  faults: ImportFaults | undefined,
): Outcome | undefined {
  const before = faults?.record.plugins[entry.id]?.hold;
  if (before?.seam !== "import") return undefined;
  return {
    hold: {
      reason: `${entry.spec}: not imported in this process (its import hung at ${before.at}); ` +
        "amber imports it again at its next start",
      held: `${entry.spec}: not imported: its import hung at ${before.at} ` +
        `(${before.message}); \`amber plugins enable ${entry.id}\` tries it again`,
    },
  };
}

// A load past its deadline: noted in the fault record, failed now and held from now on.
function hung(entry: PluginLockEntry, error: DeadlineError, faults?: ImportFaults): Outcome {
  faults?.onFault({
    kind: "timeout",
    pluginId: entry.id,
    where: "import",
    message: error.message,
    at: Date.now(),
    seam: "import",
  });
  const reason = `${entry.spec}: ${error.message}`;
  const again = `\`amber plugins enable ${entry.id}\``;
  return { hold: { reason, held: `${reason}; amber does not import it again until ${again}` } };
}

// A trusted plugin: imported into amber within the `import` deadline.
async function importWithin(
  runtime: PluginRuntime,
  entry: PluginLockEntry,
  api: PluginHostApi,
  faults: ImportFaults | undefined,
): Promise<Outcome> {
  const held = earlierHold(entry, faults);
  if (held !== undefined) return held;
  const ms = timeoutFor(runtime.config(), "import", entry.id);
  try {
    const what = `the import of plugin '${entry.id}'`;
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
    return hung(entry, error, faults);
  }
}

// A sandboxed plugin: its files checked against the lock before its process starts with its
// grant, within the `import` deadline (past it the process is killed).
async function startWithin(
  runtime: PluginRuntime,
  entry: PluginLockEntry,
  settings: Omit<SandboxSettings, "importTimeoutMs">,
  faults: ImportFaults | undefined,
): Promise<Outcome> {
  const held = earlierHold(entry, faults);
  if (held !== undefined) return held;
  let sandboxed: SandboxedPlugin;
  let grant: PluginPermissions;
  let file: string;
  try {
    const source = await locatePluginSource(entry.spec, { expected: entry });
    const where = `${pluginLockPath(settings.configDir)}: plugin '${entry.id}' grant`;
    grant = checkPermissions(entry.grant ?? {}, where);
    const importTimeoutMs = timeoutFor(runtime.config(), "import", entry.id);
    sandboxed = await startSandboxed(entry.id, source, entry.graph, grant, {
      ...settings,
      importTimeoutMs,
    });
    file = source.file;
  } catch (error) {
    return error instanceof DeadlineError ? hung(entry, error, faults) : { error };
  }
  try {
    const asked = checkPermissions(sandboxed.manifest.permissions ?? {}, file);
    const beyond = exceedsGrant(asked, grant);
    if (beyond.length === 0) return { sandboxed };
    await sandboxed.close();
    return {
      error: new ThirdPartyPluginError(
        entry.spec,
        `${file}: it asks for more than it was granted: ${beyond.join(", ")}; ` +
          `run \`amber plugins update ${entry.id} --grant\` to grant it`,
      ),
    };
  } catch (error) {
    await sandboxed.close();
    return { error };
  }
}
