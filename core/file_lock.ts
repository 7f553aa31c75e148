/**
 * Advisory locks that serialize the writers of one file across processes: the plugin lock file,
 * each `plugin.conf`, a resumed session. The lock for `path` is an exclusive `flock` on
 * `<path>.lock`, so the kernel frees it when its holder exits, however it exits; nobody has to
 * clean up after a killed process.
 *
 * The lock file is removed by the holder on release. That is safe because an acquirer checks,
 * after locking, that the file it locked is still the one linked at `<path>.lock`; a waiter that
 * locked a file already unlinked tries again on the new one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { acquireFileLock, withFileLock } from "@amber/core";
 * const dir = await Deno.makeTempDir();
 * const path = `${dir}/state.json`;
 * const held = await acquireFileLock(path);
 * assert.equal(await acquireFileLock(path, { wait: false }), undefined);
 * held?.release();
 * const result = await withFileLock(path, async () => {
 *   await Deno.writeTextFile(path, "{}");
 *   return "written";
 * });
 * assert.equal(result, "written");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { AmberError } from "./errors.ts";

/** How long {@linkcode acquireFileLock} waits by default before giving up, in milliseconds. */
export const DEFAULT_FILE_LOCK_TIMEOUT_MS = 10_000;

/** Options of {@linkcode acquireFileLock}. */
export interface FileLockOptions {
  /** Wait for the holder to let go (the default), or return `undefined` at once when held. */
  readonly wait?: boolean;
  /** How long to wait before a {@linkcode FileLockTimeoutError}; default 10 seconds. */
  readonly timeoutMs?: number;
}

/** A held lock. Release it exactly once; releasing again does nothing. */
export interface FileLock {
  /** The file the lock protects (not the `.lock` file). */
  readonly path: string;
  /** Lets the next waiter in. */
  release(): void;
  /** Releases the lock, so a `using` declaration frees it at the end of its block. */
  [Symbol.dispose](): void;
}

/**
 * Waiting for a file lock took longer than allowed. The message names the file and, when the
 * holder recorded it, the process id that holds the lock.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FileLockTimeoutError } from "@amber/core";
 * const error = new FileLockTimeoutError("/tmp/amber.lock", 200, 4242);
 * assert.equal(error.name, "FileLockTimeoutError");
 * assert.equal(error.path, "/tmp/amber.lock");
 * assert.match(error.message, /held by process 4242/);
 * ```
 */
export class FileLockTimeoutError extends AmberError {
  /** The file whose lock was not obtained. */
  readonly path: string;
  /** How long the caller waited, in milliseconds. */
  readonly timeoutMs: number;
  /** The process id the holder wrote into the lock file, when it could be read. */
  readonly holderPid: number | undefined;
  /** Creates the error for `path` after waiting `timeoutMs`. */
  constructor(path: string, timeoutMs: number, holderPid?: number, options?: ErrorOptions) {
    const holder = holderPid === undefined ? "" : ` (held by process ${holderPid})`;
    super(
      `timed out after ${timeoutMs} ms waiting for the lock on ${path}${holder}; ` +
        `another writer holds it`,
      options,
    );
    this.name = "FileLockTimeoutError";
    this.path = path;
    this.timeoutMs = timeoutMs;
    this.holderPid = holderPid;
  }
}

/** The polling interval grows from the first to the last value while a lock is busy. */
const POLL_MS = [2, 5, 10, 20, 40, 50] as const;

/**
 * Takes the exclusive lock for `path` (the file `<path>.lock`, created with its directory when
 * missing). Resolves to `undefined` when `wait` is `false` and another holder has it; otherwise
 * waits up to `timeoutMs` and then rejects with a {@linkcode FileLockTimeoutError}.
 *
 * Callers in one process queue in the order they asked, and only the head of the queue polls
 * the file system; callers in other processes poll until the holder lets go.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { acquireFileLock, FileLockTimeoutError } from "@amber/core";
 * const dir = await Deno.makeTempDir();
 * const first = await acquireFileLock(`${dir}/plugin.conf`);
 * await assert.rejects(
 *   acquireFileLock(`${dir}/plugin.conf`, { timeoutMs: 30 }),
 *   FileLockTimeoutError,
 * );
 * first?.release();
 * const second = await acquireFileLock(`${dir}/plugin.conf`, { wait: false });
 * assert.ok(second);
 * second.release();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function acquireFileLock(
  path: string,
  options: FileLockOptions = {},
): Promise<FileLock | undefined> {
  const wait = options.wait ?? true;
  const timeoutMs = options.timeoutMs ?? DEFAULT_FILE_LOCK_TIMEOUT_MS;
  const lockPath = resolve(`${path}.lock`);
  const deadline = Date.now() + timeoutMs;
  if (!wait && LOCAL_QUEUES.has(lockPath)) return undefined;
  const previous = LOCAL_QUEUES.get(lockPath);
  let leave!: () => void;
  const turn = new Promise<void>((resolve) => leave = resolve);
  // The next caller waits for this one's turn, which starts only after the previous caller's.
  const tail = (previous ?? Promise.resolve()).then(() => turn);
  LOCAL_QUEUES.set(lockPath, tail);
  const exit = () => {
    leave();
    if (LOCAL_QUEUES.get(lockPath) === tail) LOCAL_QUEUES.delete(lockPath);
  };
  try {
    if (previous !== undefined && !await settlesBy(previous, deadline)) {
      throw new FileLockTimeoutError(path, timeoutMs, Deno.pid);
    }
    const file = await lockFile(path, lockPath, wait, deadline, timeoutMs);
    if (file === undefined) {
      exit();
      return undefined;
    }
    return new HeldLock(path, lockPath, file, exit);
  } catch (error) {
    exit();
    throw error;
  }
}

/** Per lock file, the tail of this process's queue of callers. */
const LOCAL_QUEUES = new Map<string, Promise<void>>();

async function settlesBy(previous: Promise<void>, deadline: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([previous.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function lockFile(
  path: string,
  lockPath: string,
  wait: boolean,
  deadline: number,
  timeoutMs: number,
): Promise<Deno.FsFile | undefined> {
  let attempt = 0;
  while (true) {
    const file = await openLockFile(lockPath);
    let locked = false;
    try {
      locked = await file.tryLock(true);
      if (locked && await isLinked(file, lockPath)) {
        await recordHolder(file);
        return file;
      }
    } catch (error) {
      file.close();
      throw error;
    }
    file.close();
    // Locked but unlinked: the previous holder removed it on release; the next open finds the
    // fresh file at once, so retry without sleeping.
    if (locked) continue;
    if (!wait) return undefined;
    const now = Date.now();
    if (now >= deadline) {
      throw new FileLockTimeoutError(path, timeoutMs, await readHolder(lockPath));
    }
    const pause = POLL_MS[Math.min(attempt, POLL_MS.length - 1)];
    attempt += 1;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, deadline - now)));
  }
}

/**
 * Runs `work` while holding the lock for `path`, and releases the lock however `work` ends.
 * Rejects with a {@linkcode FileLockTimeoutError} when the lock is not obtained in time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withFileLock } from "@amber/core";
 * const dir = await Deno.makeTempDir();
 * const path = `${dir}/counter`;
 * await Deno.writeTextFile(path, "0");
 * const bump = () =>
 *   withFileLock(path, async () => {
 *     const value = Number(await Deno.readTextFile(path));
 *     await new Promise((resolve) => setTimeout(resolve, 1));
 *     await Deno.writeTextFile(path, String(value + 1));
 *   });
 * await Promise.all([bump(), bump(), bump()]);
 * assert.equal(await Deno.readTextFile(path), "3");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function withFileLock<T>(
  path: string,
  work: () => Promise<T>,
  options: { readonly timeoutMs?: number } = {},
): Promise<T> {
  const lock = await acquireFileLock(path, { wait: true, timeoutMs: options.timeoutMs });
  // With wait: true acquireFileLock resolves to a lock or rejects.
  try {
    return await work();
  } finally {
    lock?.release();
  }
}

class HeldLock implements FileLock {
  readonly path: string;
  #lockPath: string;
  #file: Deno.FsFile | undefined;
  #exit: () => void;

  constructor(path: string, lockPath: string, file: Deno.FsFile, exit: () => void) {
    this.path = path;
    this.#lockPath = lockPath;
    this.#file = file;
    this.#exit = exit;
  }

  release(): void {
    const file = this.#file;
    if (file === undefined) return;
    this.#file = undefined;
    // Unlink while still holding, so no one can lock this file and believe it current.
    try {
      Deno.removeSync(this.#lockPath);
    } catch {
      // Gone already or not removable: the lock itself is still released below.
    }
    file.close();
    this.#exit();
  }

  [Symbol.dispose](): void {
    this.release();
  }
}

async function openLockFile(lockPath: string): Promise<Deno.FsFile> {
  const options = { read: true, write: true, create: true } as const;
  try {
    return await Deno.open(lockPath, options);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    await Deno.mkdir(dirname(lockPath), { recursive: true });
    return await Deno.open(lockPath, options);
  }
}

async function isLinked(file: Deno.FsFile, lockPath: string): Promise<boolean> {
  const held = await file.stat();
  // Without inode numbers (Windows) the check cannot be made; the file is not unlinked there
  // while open anyway.
  if (held.ino === null) return true;
  try {
    const linked = await Deno.stat(lockPath);
    return linked.ino === held.ino && linked.dev === held.dev;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

async function recordHolder(file: Deno.FsFile): Promise<void> {
  await file.truncate(0);
  await file.write(new TextEncoder().encode(`${Deno.pid}\n`));
}

async function readHolder(lockPath: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await Deno.readTextFile(lockPath), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
