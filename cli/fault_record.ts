/**
 * `faults.json` in the config directory: what amber remembers of each plugin's faults from one
 * process to the next, for `amber doctor` and so that a plugin whose import or `initialize` hung
 * is not waited for again on every command.
 *
 * Per plugin it keeps the most recent faults (at most {@linkcode MAX_FAULTS}), the most recent
 * quarantines (at most {@linkcode MAX_QUARANTINES}), and a hold: the import or `initialize` that
 * overran its deadline, which keeps the plugin from being imported or started until the user
 * switches it on again (`amber plugins enable ID`, `/set plugin on ID`), which clears the
 * plugin's whole entry. At most {@linkcode MAX_PLUGINS} plugins are kept, the most recently
 * active ones. Every change reads, changes and writes the file under a file lock, atomically,
 * so concurrent amber processes keep each other's entries.
 *
 * @module
 */

import { join } from "node:path";
import { AmberError, describeError, type FaultEvent, withFileLock } from "@amber/core";
import { writeTextAtomic } from "./atomic_file.ts";

/** The file's name in the config directory. */
export const FAULT_RECORD_FILE = "faults.json";
/** The most faults kept per plugin. */
export const MAX_FAULTS = 20;
/** The most quarantines kept per plugin. */
export const MAX_QUARANTINES = 5;
/** The most plugins kept. */
export const MAX_PLUGINS = 100;

/** One remembered fault or quarantine. */
export interface RecordedFault {
  /** When, ISO 8601. */
  readonly at: string;
  /** Where, as the diagnostic said it. */
  readonly where: string;
  /** What happened, in one line. */
  readonly message: string;
}

/** An import or initialize that overran its deadline: the plugin is held until re-enabled. */
export interface RecordedHold extends RecordedFault {
  /** Which seam hung. */
  readonly seam: "import" | "initialize";
}

/** What is remembered of one plugin. */
export interface PluginFaultEntry {
  /** Its most recent faults, oldest first. */
  readonly faults: readonly RecordedFault[];
  /** Its most recent quarantines, oldest first. */
  readonly quarantines: readonly RecordedFault[];
  /** The hold it is under, if any. */
  readonly hold?: RecordedHold;
}

/** The contents of `faults.json`. */
export interface FaultRecord {
  /** The format's version. */
  readonly version: 1;
  /** Per plugin id. */
  readonly plugins: { readonly [pluginId: string]: PluginFaultEntry };
}

/** A record with nothing in it. */
export const EMPTY_FAULT_RECORD: FaultRecord = Object.freeze({
  version: 1,
  plugins: Object.freeze({}),
});

/**
 * The path of `faults.json` in `configDir`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { faultRecordPath } from "./fault_record.ts";
 * assert.equal(faultRecordPath("/cfg"), "/cfg/faults.json");
 * ```
 */
export function faultRecordPath(configDir: string): string {
  return join(configDir, FAULT_RECORD_FILE);
}

/** `faults.json` could not be read or is not a fault record. */
export class FaultRecordError extends AmberError {
  /** The file. */
  readonly path: string;
  /** Creates the error. */
  constructor(path: string, message: string, options?: ErrorOptions) {
    super(`${path}: ${message}`, options);
    this.name = "FaultRecordError";
    this.path = path;
  }
}

/**
 * Reads the record; a missing file is an empty record. A file that cannot be read or parsed is
 * a {@linkcode FaultRecordError}; entries of a shape it does not know are skipped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readFaultRecord } from "./fault_record.ts";
 * const dir = await Deno.makeTempDir();
 * assert.deepEqual(await readFaultRecord(dir), { version: 1, plugins: {} });
 * await Deno.writeTextFile(`${dir}/faults.json`, "{ nope");
 * await assert.rejects(readFaultRecord(dir), /faults\.json: not JSON/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readFaultRecord(configDir: string): Promise<FaultRecord> {
  const path = faultRecordPath(configDir);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return EMPTY_FAULT_RECORD;
    throw new FaultRecordError(path, `cannot be read: ${describeError(error)}`, { cause: error });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new FaultRecordError(path, `not JSON: ${describeError(error)}`, { cause: error });
  }
  if (!isObject(raw) || raw.version !== 1 || !isObject(raw.plugins)) {
    throw new FaultRecordError(path, "not a fault record (expected version 1 and plugins)");
  }
  const plugins: Record<string, PluginFaultEntry> = {};
  for (const [id, value] of Object.entries(raw.plugins)) {
    if (!isObject(value)) continue;
    const hold = holdOf(value.hold);
    plugins[id] = {
      faults: faultList(value.faults),
      quarantines: faultList(value.quarantines),
      ...(hold === undefined ? {} : { hold }),
    };
  }
  return { version: 1, plugins };
}

/**
 * The record after `events`, bounded: the pure part of {@linkcode updateFaultRecord}. A
 * `fault` is appended to the plugin's faults; a `quarantine` to its quarantines; a `timeout`
 * sets its hold; a `release` forgets the plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyFaultEvents, EMPTY_FAULT_RECORD } from "./fault_record.ts";
 * const at = Date.UTC(2026, 0, 1);
 * const held = applyFaultEvents(EMPTY_FAULT_RECORD, [
 *   { kind: "fault", pluginId: "p", where: "tick", message: "boom", at },
 *   { kind: "timeout", pluginId: "p", where: "initialize", message: "hung", at, seam: "initialize" },
 * ]);
 * assert.equal(held.plugins.p.faults.length, 1);
 * assert.equal(held.plugins.p.hold?.seam, "initialize");
 * const released = applyFaultEvents(held, [
 *   { kind: "release", pluginId: "p", where: "setState", message: "switched on", at },
 * ]);
 * assert.deepEqual(released.plugins, {});
 * ```
 */
export function applyFaultEvents(record: FaultRecord, events: readonly FaultEvent[]): FaultRecord {
  const plugins: Record<string, PluginFaultEntry> = { ...record.plugins };
  for (const event of events) {
    const id = event.pluginId;
    if (event.kind === "release") {
      delete plugins[id];
      continue;
    }
    const entry = plugins[id] ?? { faults: [], quarantines: [] };
    const fault: RecordedFault = {
      at: new Date(event.at).toISOString(),
      where: event.where,
      message: event.message,
    };
    // Re-inserted, so the object's key order is the order of the most recent activity.
    delete plugins[id];
    if (event.kind === "fault") {
      plugins[id] = { ...entry, faults: [...entry.faults, fault].slice(-MAX_FAULTS) };
    } else if (event.kind === "quarantine") {
      plugins[id] = {
        ...entry,
        quarantines: [...entry.quarantines, fault].slice(-MAX_QUARANTINES),
      };
    } else {
      const seam = event.seam === "import" ? "import" : "initialize";
      plugins[id] = { ...entry, hold: { ...fault, seam } };
    }
  }
  const ids = Object.keys(plugins);
  for (const id of ids.slice(0, Math.max(0, ids.length - MAX_PLUGINS))) delete plugins[id];
  return { version: 1, plugins };
}

/**
 * Applies `events` to `configDir`'s record: read, changed and written atomically under the
 * file's lock. A record that cannot be read is replaced (it holds nothing that cannot be
 * learnt again). Resolves to the path written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readFaultRecord, updateFaultRecord } from "./fault_record.ts";
 * const dir = await Deno.makeTempDir();
 * await updateFaultRecord(dir, [
 *   { kind: "fault", pluginId: "p", where: "hook 'h'", message: "boom", at: Date.now() },
 * ]);
 * assert.equal((await readFaultRecord(dir)).plugins.p.faults[0].message, "boom");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function updateFaultRecord(
  configDir: string,
  events: readonly FaultEvent[],
): Promise<string> {
  const path = faultRecordPath(configDir);
  await Deno.mkdir(configDir, { recursive: true });
  await withFileLock(path, async () => {
    const now = await readFaultRecord(configDir).catch(() => EMPTY_FAULT_RECORD);
    const next = applyFaultEvents(now, events);
    await writeTextAtomic(path, `${JSON.stringify(next, null, 2)}\n`);
  });
  return path;
}

/**
 * Collects a process's fault events and writes them to the record as they come, one write at a
 * time (events that arrive during a write go into the next). `flush()` waits for all of them; a
 * write that fails is reported to `onError` and its events are dropped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FaultJournal, readFaultRecord } from "./fault_record.ts";
 * const dir = await Deno.makeTempDir();
 * const journal = new FaultJournal(dir, (error) => assert.fail(String(error)));
 * journal.note({ kind: "fault", pluginId: "p", where: "tick", message: "a", at: Date.now() });
 * journal.note({ kind: "fault", pluginId: "p", where: "tick", message: "b", at: Date.now() });
 * await journal.flush();
 * assert.deepEqual((await readFaultRecord(dir)).plugins.p.faults.map((f) => f.message), ["a", "b"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class FaultJournal {
  readonly #configDir: string;
  readonly #onError: (error: unknown) => void;
  #pending: FaultEvent[] = [];
  #writing: Promise<void> = Promise.resolve();
  #scheduled = false;

  /** A journal writing to `configDir`'s record. */
  constructor(configDir: string, onError: (error: unknown) => void) {
    this.#configDir = configDir;
    this.#onError = onError;
  }

  /** Queues `event` for the record. */
  note(event: FaultEvent): void {
    this.#pending.push(event);
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#writing = this.#writing.then(() => this.#write());
  }

  /** Resolves when every event noted so far is written (or its write failed). */
  flush(): Promise<void> {
    return this.#writing;
  }

  async #write(): Promise<void> {
    this.#scheduled = false;
    const events = this.#pending;
    this.#pending = [];
    if (events.length === 0) return;
    try {
      await updateFaultRecord(this.#configDir, events);
    } catch (error) {
      this.#onError(error);
    }
  }
}

function holdOf(value: unknown): RecordedHold | undefined {
  if (!isFault(value)) return undefined;
  const seam = (value as { seam?: unknown }).seam;
  if (seam !== "import" && seam !== "initialize") return undefined;
  return { seam, at: value.at, where: value.where, message: value.message };
}

function faultList(value: unknown): RecordedFault[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isFault).map((f) => ({ at: f.at, where: f.where, message: f.message }));
}

function isFault(value: unknown): value is RecordedFault {
  return isObject(value) && typeof value.at === "string" && typeof value.where === "string" &&
    typeof value.message === "string";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
