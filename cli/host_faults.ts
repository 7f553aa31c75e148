/**
 * A host's side of plugin faults: it remembers them in `faults.json` (see `fault_record.ts`),
 * holds back a plugin whose `initialize` hung in an earlier process, and, while open, contains
 * stray errors (see `containment.ts`), reporting each against the plugin whose files its stack
 * runs through.
 *
 * A bundled plugin's files are `plugins/<id>/` of `@amber/plugins`; a third-party plugin's are
 * the folder of the file its lock entry resolved to. An error whose stack runs through none of
 * them (or has no stack) is still contained, and reported as the host's own.
 *
 * @module
 */

import { describeError, type FaultEvent, type PluginRuntime } from "@amber/core";
import {
  containStrayErrors,
  noteAbandonedWork,
  stackFiles,
  type StrayKind,
} from "./containment.ts";
import {
  EMPTY_FAULT_RECORD,
  FAULT_RECORD_FILE,
  FaultJournal,
  type FaultRecord,
  readFaultRecord,
} from "./fault_record.ts";

/** Where a plugin's own files are: a folder URL ending in `/`. */
export interface PluginFolder {
  /** The plugin. */
  readonly pluginId: string;
  /** Its folder, as a URL ending in `/`. */
  readonly folder: string;
}

/**
 * The plugin whose files `error`'s stack runs through first (innermost frame first; the
 * deepest folder wins when folders nest), or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { attributeError } from "./host_faults.ts";
 * const error = new Error("boom");
 * error.stack = "Error: boom\n    at tick (file:///p/greeter/mod.ts:3:9)\n" +
 *   "    at run (file:///amber/core/runtime.ts:10:1)";
 * const folders = [
 *   { pluginId: "greeter", folder: "file:///p/greeter/" },
 *   { pluginId: "other", folder: "file:///p/other/" },
 * ];
 * assert.equal(attributeError(error, folders), "greeter");
 * assert.equal(attributeError("no stack", folders), undefined);
 * ```
 */
export function attributeError(
  error: unknown,
  folders: readonly PluginFolder[],
): string | undefined {
  for (const file of stackFiles(error)) {
    let best: PluginFolder | undefined;
    for (const entry of folders) {
      if (!file.startsWith(entry.folder)) continue;
      if (best === undefined || entry.folder.length > best.folder.length) best = entry;
    }
    if (best !== undefined) return best.pluginId;
  }
  return undefined;
}

/** The faults side of an open host. */
export class HostFaults {
  /** What `faults.json` held when the host opened. */
  readonly record: FaultRecord;
  /** Where this process's fault events go. */
  readonly journal: FaultJournal;
  readonly #configDir: string;
  #runtime: PluginRuntime | undefined;
  #folders: Promise<readonly PluginFolder[]> | undefined;
  #containment: Disposable | undefined;
  // The plugins the record has an entry for, as far as this process knows.
  #remembered: Set<string>;

  private constructor(configDir: string, record: FaultRecord) {
    this.#configDir = configDir;
    this.record = record;
    this.#remembered = new Set(Object.keys(record.plugins));
    this.journal = new FaultJournal(configDir, (error) =>
      this.#runtime?.report({
        pluginId: "core",
        where: FAULT_RECORD_FILE,
        message: `not updated: ${describeError(error)}`,
      }));
  }

  /**
   * Reads `configDir`'s fault record. One that cannot be read counts as empty here (`amber
   * doctor` says what is wrong with it).
   */
  static async open(configDir: string): Promise<HostFaults> {
    const record = await readFaultRecord(configDir).catch(() => EMPTY_FAULT_RECORD);
    return new HostFaults(configDir, record);
  }

  /** For `PluginRuntimeOptions.onFault`: remembers `event`, and says what a hold means. */
  readonly onFault = (event: FaultEvent): void => {
    // Switching on a plugin amber remembers nothing of leaves the file alone.
    if (event.kind === "release" && !this.#remembered.has(event.pluginId)) return;
    if (event.kind === "release") this.#remembered.delete(event.pluginId);
    else this.#remembered.add(event.pluginId);
    this.journal.note(event);
    if (event.kind === "timeout" && event.seam === "initialize") {
      // The initialize cannot be cancelled; whatever it waits for stays behind.
      noteAbandonedWork();
      this.#runtime?.report({
        pluginId: event.pluginId,
        where: event.where,
        message: `amber does not start it again until \`amber plugins enable ${event.pluginId}\``,
      });
    }
  };

  /**
   * Once every plugin is registered and before the runtime starts: holds back each plugin
   * whose `initialize` hung in an earlier process, and contains stray errors until
   * {@linkcode HostFaults.close}.
   */
  start(runtime: PluginRuntime): void {
    this.#runtime = runtime;
    const ids = new Set(runtime.ids());
    for (const [id, entry] of Object.entries(this.record.plugins)) {
      const hold = entry.hold;
      if (hold?.seam !== "initialize" || !ids.has(id)) continue;
      runtime.hold(
        id,
        `not started: its initialize hung at ${hold.at} (${hold.message}); ` +
          `\`amber plugins enable ${id}\` tries it again`,
      );
    }
    this.#containment ??= containStrayErrors((error, kind) => {
      this.#stray(error, kind);
      return true;
    });
  }

  /** Stops containing stray errors and waits for the record to be written. */
  async close(): Promise<void> {
    this.#containment?.[Symbol.dispose]();
    this.#containment = undefined;
    await this.journal.flush();
  }

  #stray(error: unknown, kind: StrayKind): void {
    const runtime = this.#runtime;
    if (runtime === undefined) return;
    const where = kind === "rejection"
      ? "a promise nobody awaited rejected (a forgotten await?)"
      : "an uncaught error (thrown from a timer or a callback)";
    const files = stackFiles(error);
    const at = files.length === 0 ? "" : ` (at ${files[0]})`;
    const message = `${describeError(error)}${at}`;
    this.#folders ??= pluginFolders(runtime, this.#configDir);
    // Reported whatever happens here: a rejection left unhandled by this very handler would
    // come straight back to it.
    this.#folders.then((folders) => attributeError(error, folders), () => undefined).then(
      (pluginId) => {
        if (pluginId === undefined) runtime.report({ pluginId: "core", where, message });
        else runtime.report({ pluginId, where, message, error });
      },
    ).catch(() => {});
  }
}

/**
 * Every registered plugin's folder: `plugins/<id>/` beside `@amber/plugins` for one bundled
 * with amber, the folder of the resolved file of its lock entry for a third-party one.
 */
export async function pluginFolders(
  runtime: PluginRuntime,
  configDir: string,
): Promise<PluginFolder[]> {
  const folders: PluginFolder[] = [];
  const bundled = new URL("./", import.meta.resolve("@amber/plugins")).href;
  // Asked only once a stray error needs a plugin to charge: the lock's reader loads then.
  const { readPluginLock } = await import("./plugin_lock.ts");
  const entries = await readPluginLock(configDir).then((lock) => lock.plugins, () => []);
  for (const id of runtime.ids()) {
    const entry = entries.find((e) => e.id === id);
    if (entry === undefined) {
      folders.push({ pluginId: id, folder: `${bundled}${id}/` });
      continue;
    }
    try {
      folders.push({ pluginId: id, folder: new URL("./", entry.resolved).href });
    } catch {
      // A lock entry whose location is not a URL attributes nothing.
    }
  }
  return folders;
}
