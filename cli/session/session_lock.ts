/**
 * One writer per session file. The process that has a session open (it created it, or resumed
 * it) holds the lock of session `<id>` (the file `locks/sessions/<id>.lock` in the config
 * directory, so that `sessions/` holds only sessions) for as long as it keeps it; a second
 * `--resume` of the same session while the first runs is refused at once, naming the session
 * and the process holding it, instead of interleaving two conversations' steps in one file.
 * Refusing rather than waiting: the other holder is usually an interactive session that may
 * stay open for hours.
 *
 * @module
 */

import { join } from "node:path";
import { acquireFileLock, AmberError, type FileLock } from "@amber/core";
import { SessionFile } from "@amber/core/kernel";

/**
 * Another amber process has the session open. The message names the session and, when the
 * holder recorded it, its process id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionBusyError } from "./session_lock.ts";
 * const error = new SessionBusyError("20261201-101500-abcdef", 4242);
 * assert.equal(error.name, "SessionBusyError");
 * assert.match(error.message, /^session 20261201-101500-abcdef is in use by amber process 4242/);
 * ```
 */
export class SessionBusyError extends AmberError {
  /** The session asked for. */
  readonly id: string;
  /** The process that holds it, when known. */
  readonly holderPid: number | undefined;
  /** Creates the error for session `id`, held by process `holderPid`. */
  constructor(id: string, holderPid?: number, options?: ErrorOptions) {
    const holder = holderPid === undefined ? "another amber process" : `amber process ${holderPid}`;
    super(
      `session ${id} is in use by ${holder}; let that one finish (or quit it), ` +
        `then resume again`,
      options,
    );
    this.name = "SessionBusyError";
    this.id = id;
    this.holderPid = holderPid;
  }
}

/**
 * Takes the lock of session `id` under `configDir` without waiting; rejects with a
 * {@linkcode SessionBusyError} when another holder has it. Release it when the session file is
 * closed; a process that dies releases it with its file descriptors.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lockSession, SessionBusyError } from "./session_lock.ts";
 * const dir = await Deno.makeTempDir();
 * const held = await lockSession(dir, "s1");
 * await assert.rejects(lockSession(dir, "s1"), SessionBusyError);
 * held.release();
 * (await lockSession(dir, "s1")).release();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function lockSession(configDir: string, id: string): Promise<FileLock> {
  // pathOf checks the id: nothing outside the directory can be named through it.
  SessionFile.pathOf(configDir, id);
  const path = join(configDir, "locks", "sessions", id);
  const lock = await acquireFileLock(path, { wait: false });
  if (lock !== undefined) return lock;
  throw new SessionBusyError(id, await holderOf(path));
}

// The lock file holds the holder's pid on its first line (core/file_lock.ts writes it).
async function holderOf(path: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await Deno.readTextFile(`${path}.lock`), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
