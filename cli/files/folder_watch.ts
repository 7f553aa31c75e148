/**
 * Polling a markdown folder at each step boundary, cheaply. A folder that is there is listed
 * (one listing and one `stat` per file). A folder that is not there costs one `stat` of its
 * nearest ancestor that is: creating anything in a folder moves that folder's modification time,
 * so while the ancestor's time stands still, the folder is still missing, and the failed `stat`s
 * that would say so (each one an exception, ten times the price of a successful one) are not
 * repeated. Within one pass over the plugins, a path is asked about once.
 *
 * @module
 */

import { dirname } from "node:path";
import { type DefinitionKind, type FolderScan, scanFolder } from "./definitions.ts";

// What this pass of polls learned; emptied once the synchronous pass is over.
const seen = new Map<string, Deno.FileInfo | undefined>();

function statNow(path: string): Deno.FileInfo | undefined {
  if (seen.has(path)) return seen.get(path);
  if (seen.size === 0) queueMicrotask(() => seen.clear());
  let info: Deno.FileInfo | undefined;
  try {
    info = Deno.statSync(path);
  } catch {
    info = undefined;
  }
  seen.set(path, info);
  return info;
}

interface Ancestor {
  readonly path: string;
  readonly mtime: number | undefined;
}

// The folder itself if it is there, else the nearest ancestor that is.
function nearestExisting(dir: string): Ancestor | undefined {
  let path = dir;
  for (;;) {
    const info = statNow(path);
    if (info?.isDirectory) return { path, mtime: info.mtime?.getTime() };
    const parent = dirname(path);
    if (parent === path) return undefined;
    path = parent;
  }
}

const NO_FILES: FolderScan = Object.freeze({ files: [], problems: [], fingerprint: "" });

/**
 * One folder, polled.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FolderWatch } from "./folder_watch.ts";
 * const root = await Deno.makeTempDir();
 * const watch = new FolderWatch("commands", `${root}/.amber/commands`);
 * const missing = watch.poll();
 * assert.equal(missing.files.length, 0);
 * assert.equal(watch.poll(), missing); // nothing moved: the same scan
 * await Deno.mkdir(`${root}/.amber/commands`, { recursive: true });
 * await Deno.writeTextFile(`${root}/.amber/commands/hi.md`, "Hi");
 * await Promise.resolve(); // the next pass
 * assert.deepEqual(watch.poll().files.map((f) => f.relative), ["hi.md"]);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export class FolderWatch {
  readonly #kind: DefinitionKind;
  readonly #dir: string;
  #scan: FolderScan | undefined;
  #absent: Ancestor | undefined;

  /** Watches `dir` for the files of `kind`. */
  constructor(kind: DefinitionKind, dir: string) {
    this.#kind = kind;
    this.#dir = dir;
  }

  /** The folder now: the last scan itself when nothing can have changed. */
  poll(): FolderScan {
    const absent = this.#absent;
    if (this.#scan !== undefined && absent !== undefined) {
      const info = statNow(absent.path);
      if (info?.isDirectory && info.mtime?.getTime() === absent.mtime) return this.#scan;
    }
    // Read before the folder is, so that one created in between moves it past what is kept.
    const nearest = nearestExisting(this.#dir);
    if (nearest !== undefined && nearest.path !== this.#dir) {
      this.#absent = nearest;
      this.#scan = NO_FILES;
      return NO_FILES;
    }
    this.#absent = undefined;
    this.#scan = scanFolder(this.#kind, this.#dir);
    return this.#scan;
  }
}
