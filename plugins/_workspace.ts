/**
 * Private helpers the bundled tool plugins share: where a tool path lands, whether it stays in
 * the workspace, how it reads back to the model, atomic writes, and small result builders.
 *
 * @module
 */

import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ToolResult } from "@amber/core";

/**
 * The absolute path a tool argument names: relative paths are taken from the workspace root,
 * and `~/` from the home directory (models write it; a shell would expand it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolvePath } from "./_workspace.ts";
 * assert.equal(resolvePath("/ws", "src/a.ts"), "/ws/src/a.ts");
 * assert.equal(resolvePath("/ws", "/etc/hosts"), "/etc/hosts");
 * ```
 */
export function resolvePath(root: string, path: string): string {
  if (path === "~" || path.startsWith("~/")) {
    const home = homeDir();
    if (home !== undefined) return resolve(home, path.slice(2));
  }
  return resolve(resolve(root), path);
}

function homeDir(): string | undefined {
  try {
    return Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE");
  } catch {
    // Without --allow-env there is no home to expand; the path stays literal.
    return undefined;
  }
}

/**
 * Where `path` really is: symlinks followed as far as they lead, including a dangling one and
 * the missing tail of a path that does not exist yet (a file about to be written).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { realPath } from "./_workspace.ts";
 * const dir = Deno.realPathSync(await Deno.makeTempDir());
 * assert.equal(realPath(`${dir}/not/yet/there.txt`), `${dir}/not/yet/there.txt`);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function realPath(path: string): string {
  return realPathAt(resolve(path), 0);
}

// Symlink hops before giving up, as the kernel's own ELOOP limit does.
const MAX_LINKS = 40;

function realPathAt(path: string, hops: number): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    // Missing, dangling or unreadable: resolve what can be resolved and keep the rest literal.
  }
  const parent = dirname(path);
  if (parent === path) return path;
  try {
    if (hops < MAX_LINKS && Deno.lstatSync(path).isSymlink) {
      // A dangling link still says where a write through it would land.
      return realPathAt(resolve(parent, Deno.readLinkSync(path)), hops + 1);
    }
  } catch {
    // Not there at all: fall through to the parent.
  }
  return join(realPathAt(parent, hops), basename(path));
}

/**
 * Whether `path` lies inside `root`, judged by real paths: a symlink inside the workspace that
 * points out of it counts as outside, and so does `..` climbing out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isInside } from "./_workspace.ts";
 * const root = await Deno.makeTempDir();
 * assert.equal(isInside(root, `${root}/src/new.ts`), true);
 * assert.equal(isInside(root, "/etc/hosts"), false);
 * await Deno.symlink("/etc", `${root}/etc_link`);
 * assert.equal(isInside(root, `${root}/etc_link/hosts`), false);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export function isInside(root: string, path: string): boolean {
  return within(realPath(root), realPath(path));
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * How a path reads back to the model: relative to the workspace when it is under it (`.` for the
 * root itself), absolute otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { displayPath } from "./_workspace.ts";
 * assert.equal(displayPath("/ws", "/ws/src/a.ts"), "src/a.ts");
 * assert.equal(displayPath("/ws", "/etc/hosts"), "/etc/hosts");
 * ```
 */
export function displayPath(root: string, path: string): string {
  const absolute = resolve(path);
  const rel = relative(resolve(root), absolute);
  if (rel === "") return ".";
  return within(resolve(root), absolute) ? rel : absolute;
}

/**
 * Whether a tool call's path argument needs approval: only when it leaves the workspace. A call
 * without a string path needs none, since validation rejects it before anything happens.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outsideWorkspace } from "./_workspace.ts";
 * assert.equal(outsideWorkspace("/tmp", { path: "/etc/hosts" }), true);
 * assert.equal(outsideWorkspace("/tmp", {}), false);
 * ```
 */
export function outsideWorkspace(root: string, args: unknown, key = "path"): boolean {
  const path = (args as Record<string, unknown> | null | undefined)?.[key];
  if (typeof path !== "string" || path === "") return false;
  return !isInside(root, resolvePath(root, path));
}

/**
 * Writes `data` to `path` atomically: a temp file beside it, then a rename, so a reader never
 * sees half a file. Parent directories are created; an existing file keeps its permissions.
 * Writes go to the real path, so a symlink is written through rather than replaced.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeAtomic } from "./_workspace.ts";
 * const dir = await Deno.makeTempDir();
 * await writeAtomic(`${dir}/a/b.txt`, new TextEncoder().encode("hi"));
 * assert.equal(await Deno.readTextFile(`${dir}/a/b.txt`), "hi");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writeAtomic(path: string, data: Uint8Array): Promise<void> {
  const target = realPath(path);
  const dir = dirname(target);
  await Deno.mkdir(dir, { recursive: true });
  let mode: number | undefined;
  try {
    mode = (await Deno.stat(target)).mode ?? undefined;
  } catch {
    // A new file gets the default mode.
  }
  const temp = join(dir, `.${basename(target)}.${crypto.randomUUID().slice(0, 8)}.tmp`);
  try {
    await Deno.writeFile(temp, data, mode === undefined ? {} : { mode: mode & 0o7777 });
    if (mode !== undefined) await Deno.chmod(temp, mode & 0o7777);
    await Deno.rename(temp, target);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

/**
 * An error result, as every tool returns its failures.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolError } from "./_workspace.ts";
 * assert.deepEqual(toolError("file not found: a.txt"), {
 *   ok: false,
 *   output: "",
 *   error: "file not found: a.txt",
 * });
 * ```
 */
export function toolError(error: string): ToolResult {
  return { ok: false, output: "", error };
}

/**
 * An error as one line of text, with Deno's error class names turned into plain words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeError } from "./_workspace.ts";
 * assert.equal(describeError(new Deno.errors.NotFound("x")), "not found");
 * ```
 */
export function describeError(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "not found";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.NotCapable) {
    return `amber lacks the Deno permission for this (${error.message})`;
  }
  if (error instanceof Deno.errors.IsADirectory) return "is a directory";
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Whether the bytes look binary: a NUL byte in the first 8 KiB, the test git and grep use.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { looksBinary } from "./_workspace.ts";
 * assert.equal(looksBinary(new Uint8Array([104, 0, 105])), true);
 * assert.equal(looksBinary(new TextEncoder().encode("hi")), false);
 * ```
 */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

const present = new Map<string, Promise<boolean>>();

/**
 * Whether `name` runs (`name --version` starts), asked once per process and remembered. Without
 * the run permission every command counts as absent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasCommand } from "./_workspace.ts";
 * assert.equal(typeof await hasCommand("bash"), "boolean");
 * assert.equal(await hasCommand(Deno.execPath()), true);
 * assert.equal(await hasCommand("amber_no_such_command"), false);
 * ```
 */
export function hasCommand(name: string): Promise<boolean> {
  let known = present.get(name);
  if (known === undefined) {
    known = (async () => {
      try {
        const status = await new Deno.Command(name, {
          args: ["--version"],
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).output();
        return status.code === 0;
      } catch {
        return false;
      }
    })();
    present.set(name, known);
  }
  return known;
}

/**
 * Text clipped to its last `max` characters, with the cut stated in front, as the process tools
 * show long output.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keepTail } from "./_workspace.ts";
 * assert.equal(keepTail("abcdef", 3), "[output cut: 6 chars, showing the last 3]\ndef");
 * assert.equal(keepTail("abc", 3), "abc");
 * ```
 */
export function keepTail(text: string, max: number): string {
  if (text.length <= max) return text;
  return `[output cut: ${text.length} chars, showing the last ${max}]\n${text.slice(-max)}`;
}
