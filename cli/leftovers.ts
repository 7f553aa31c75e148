/**
 * Process groups amber started, recorded on disk so that one a killed amber left behind is found
 * and stopped by the next start. A record names the group's leader by pid plus the process's
 * start time (a pid alone may since belong to someone else), the command, the session, and the
 * amber process that owns it; it lives in `<config dir>/processes/` from the group's start to its
 * end. A record is a leftover when its owner is gone and its group still runs: its leader is
 * still the same process, or the leader has exited while others of its group run on.
 *
 * @module
 */

import { join } from "node:path";
import { signalGroup } from "@amber/plugins/process_group";
import { writeTextAtomic } from "./atomic_file.ts";

/** The directory, inside the config directory, that holds the records. */
export const RECORDS_DIR = "processes";

/** How long a leftover gets between SIGTERM and SIGKILL when it is stopped (ms). */
export const LEFTOVER_GRACE_MS = 2000;

/** A process identified beyond its pid: a pid is reused, a pid plus start time is not. */
export interface ProcessIdentity {
  /** The process id. */
  readonly pid: number;
  /** When it started, as the system says it (clock ticks since boot on Linux). */
  readonly startTime: string;
}

/** A process group amber recorded when it started it. */
export interface ProcessRecord extends ProcessIdentity {
  /** The command line it runs. */
  readonly command: readonly string[];
  /** The session that started it, when one had been created by then. */
  readonly session?: string;
  /** The amber process that started it. */
  readonly owner: ProcessIdentity;
  /** When it was started (ISO 8601). */
  readonly startedAt: string;
}

/** A recorded process group whose amber is gone while the group still runs. */
export type Leftover = ProcessRecord;

/** What {@linkcode recordProcess} records besides the group's identity. */
export interface RecordOptions {
  /** The command line. */
  readonly command: readonly string[];
  /** The session, if there is one. */
  readonly session?: string;
}

/** {@linkcode recordProcess} was asked to record a process that is not running (any more). */
export class ProcessNotRunningError extends Error {
  /** Always `"ProcessNotRunningError"`. */
  override readonly name = "ProcessNotRunningError";
  /** The pid. */
  readonly pid: number;
  /** Creates the error for `pid`. */
  constructor(pid: number) {
    super(`process ${pid} is not running`);
    this.pid = pid;
  }
}

/** A written record; `forget` removes it once the group has ended. */
export interface WrittenRecord {
  /** What was written. */
  readonly record: ProcessRecord;
  /** Removes the record (a record already gone is not an error). */
  forget(): Promise<void>;
  /** {@linkcode WrittenRecord.forget} for an `unload` handler, which cannot wait. */
  forgetSync(): void;
}

/**
 * When process `pid` started, or undefined when there is no such process (a zombie counts as
 * gone). On Linux it is field 22 of `/proc/<pid>/stat`: read directly when amber may (Deno asks
 * for `--allow-all` to read `/proc/<pid>`), else through `cat`, which gives the same value, so
 * records compare alike whichever way they were written. Elsewhere it is what `ps -o lstart=`
 * says.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { processStartTime } from "./leftovers.ts";
 * const mine = await processStartTime(Deno.pid);
 * assert.equal(typeof mine, "string");
 * assert.equal(await processStartTime(Deno.pid), mine);
 * assert.equal(await processStartTime(2 ** 22 + 12345), undefined);
 * ```
 */
export async function processStartTime(pid: number): Promise<string | undefined> {
  if (Deno.build.os !== "linux") {
    const line = await outputOf("ps", ["-o", "stat=,lstart=", "-p", String(pid)]);
    if (line === undefined || line === "" || line.startsWith("Z")) return undefined;
    return line.slice(line.indexOf(" ") + 1).trim();
  }
  const path = `/proc/${pid}/stat`;
  let stat: string | undefined;
  try {
    stat = await Deno.readTextFile(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotCapable)) return undefined;
    stat = await outputOf("cat", [path]);
  }
  return stat === undefined || stat === "" ? undefined : startTimeFromStat(stat);
}

// The trimmed standard output of a command that succeeded, else undefined.
async function outputOf(program: string, args: string[]): Promise<string | undefined> {
  try {
    const output = await new Deno.Command(program, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return output.success ? new TextDecoder().decode(output.stdout).trim() : undefined;
  } catch {
    return undefined;
  }
}

// The comm field (2) is in parentheses and may itself hold spaces and parentheses: the fields
// are counted from the last ")". Field 3 is the state, field 22 the start time.
function startTimeFromStat(stat: string): string | undefined {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return undefined;
  return fields[19];
}

/** Whether `identity` is still the process it was when recorded. */
export async function isAlive(identity: ProcessIdentity): Promise<boolean> {
  return await processStartTime(identity.pid) === identity.startTime;
}

let self: Promise<ProcessIdentity> | undefined;

/** This process, as records name their owner. */
export function currentProcess(): Promise<ProcessIdentity> {
  return self ??= processStartTime(Deno.pid).then((startTime) => ({
    pid: Deno.pid,
    // Without a start time the owner can never be matched: its records read as leftovers as soon
    // as it is gone, which is what they are.
    startTime: startTime ?? "unknown",
  }));
}

/**
 * Records the process group led by `pid` in `configDir`. Call it right after the start and
 * `forget` when the group is gone. Rejects when the record cannot be written, or with a
 * {@linkcode ProcessNotRunningError} when `pid` is not running (it then cannot be told from a
 * later process with the same pid).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listLeftovers, recordProcess } from "./leftovers.ts";
 * const configDir = await Deno.makeTempDir();
 * const written = await recordProcess(configDir, Deno.pid, { command: ["amber"] });
 * assert.deepEqual(written.record.command, ["amber"]);
 * // Its owner (this process) is alive: not a leftover.
 * assert.deepEqual(await listLeftovers(configDir), []);
 * await written.forget();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export async function recordProcess(
  configDir: string,
  pid: number,
  options: RecordOptions,
): Promise<WrittenRecord> {
  const startTime = await processStartTime(pid);
  if (startTime === undefined) throw new ProcessNotRunningError(pid);
  const record: ProcessRecord = {
    pid,
    startTime,
    command: [...options.command],
    ...(options.session === undefined ? {} : { session: options.session }),
    owner: await currentProcess(),
    startedAt: new Date().toISOString(),
  };
  const dir = join(configDir, RECORDS_DIR);
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `${pid}-${startTime.replace(/[^0-9A-Za-z]/g, "_")}.json`);
  // Written aside and renamed, so a reader never sees half a record.
  await writeTextAtomic(path, `${JSON.stringify(record)}\n`);
  return {
    record,
    forget: async () => {
      await Deno.remove(path).catch(() => {});
    },
    forgetSync: () => {
      try {
        Deno.removeSync(path);
      } catch {
        // Already gone.
      }
    },
  };
}

/**
 * The recorded process groups whose amber is gone while the group still runs, oldest first: the
 * leader is still the process recorded (same pid, same start time), or it has exited while
 * others of its group run on. Reads only: records of groups that have ended are left for
 * {@linkcode stopLeftovers} to clear.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listLeftovers } from "./leftovers.ts";
 * const configDir = await Deno.makeTempDir();
 * assert.deepEqual(await listLeftovers(configDir), []);
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export async function listLeftovers(configDir: string): Promise<Leftover[]> {
  const found: Leftover[] = [];
  for (const entry of await readRecords(configDir)) {
    if (entry.state === "leftover") found.push(entry.record);
  }
  return found.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

/** Options of {@linkcode stopLeftovers}. */
export interface StopLeftoversOptions {
  /** Between SIGTERM and SIGKILL (ms); {@linkcode LEFTOVER_GRACE_MS} by default. */
  readonly graceMs?: number;
}

/**
 * Stops every leftover in `configDir` (its whole group: SIGTERM, SIGKILL after the grace
 * period) and removes its record, along with the records of groups that ended on their own or
 * that cannot be read. A group whose leader's pid now belongs to another process is not
 * touched. Resolves to the leftovers it stopped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stopLeftovers } from "./leftovers.ts";
 * const configDir = await Deno.makeTempDir();
 * assert.deepEqual(await stopLeftovers(configDir), []);
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export async function stopLeftovers(
  configDir: string,
  options: StopLeftoversOptions = {},
): Promise<Leftover[]> {
  const graceMs = options.graceMs ?? LEFTOVER_GRACE_MS;
  const stopped: Leftover[] = [];
  await Promise.all((await readRecords(configDir)).map(async (entry) => {
    if (entry.state === "owned") return;
    if (entry.state === "leftover") {
      await stopGroup(entry.record, graceMs);
      stopped.push(entry.record);
    }
    await Deno.remove(entry.path).catch(() => {});
  }));
  return stopped.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

/** One line describing `leftover`, for diagnostics and `amber doctor`. */
export function describeLeftover(leftover: Leftover): string {
  const command = leftover.command.join(" ");
  const short = command.length > 60 ? `${command.slice(0, 57)}...` : command;
  const session = leftover.session === undefined ? "" : ` of session ${leftover.session}`;
  return `pid ${leftover.pid}${session}, started ${leftover.startedAt}: ${short}`;
}

type Entry =
  | { readonly state: "owned" | "leftover" | "ended"; readonly path: string; record: ProcessRecord }
  | { readonly state: "unreadable"; readonly path: string };

async function readRecords(configDir: string): Promise<Entry[]> {
  const dir = join(configDir, RECORDS_DIR);
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && entry.name.endsWith(".json")) names.push(entry.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return await Promise.all(names.map(async (name): Promise<Entry> => {
    const path = join(dir, name);
    let record: ProcessRecord;
    try {
      record = parseRecord(JSON.parse(await Deno.readTextFile(path)));
    } catch {
      return { state: "unreadable", path };
    }
    if (await isAlive(record.owner)) return { state: "owned", path, record };
    return { state: await groupRuns(record) ? "leftover" : "ended", path, record };
  }));
}

function parseRecord(value: unknown): ProcessRecord {
  const record = value as ProcessRecord;
  const identity = (id: ProcessIdentity | undefined) =>
    typeof id === "object" && id !== null && Number.isInteger(id.pid) && id.pid > 0 &&
    typeof id.startTime === "string";
  if (
    !identity(record) || !identity(record.owner) || !Array.isArray(record.command) ||
    typeof record.startedAt !== "string"
  ) {
    throw new Error("not a process record");
  }
  return record;
}

// Whether the recorded group still runs: its leader, still the process recorded; or, the leader
// gone, other members of its group. The kernel hands out no pid that is still a group's id, so
// while members remain, no other process can have taken the leader's pid, and the group is ours.
async function groupRuns(leader: ProcessIdentity): Promise<boolean> {
  const startTime = await processStartTime(leader.pid);
  if (startTime !== undefined) return startTime === leader.startTime;
  const table = await outputOf("ps", ["-e", "-o", "pgid=,stat="]);
  return (table ?? "").split("\n").some((line) => {
    const [pgid, stat] = line.trim().split(/\s+/);
    return Number(pgid) === leader.pid && stat !== undefined && !stat.startsWith("Z");
  });
}

async function stopGroup(leader: ProcessIdentity, graceMs: number): Promise<void> {
  // Checked right before signalling: the pid must still be the recorded group's.
  if (!(await groupRuns(leader))) return;
  signalGroup(leader.pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && await groupRuns(leader)) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Whatever of the group outlived the grace period. While any member lives the group's id
  // cannot be handed to a new process, so this reaches only the recorded group.
  signalGroup(leader.pid, "SIGKILL");
}
