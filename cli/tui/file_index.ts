/**
 * The workspace's files, for `@` completion. In a git repository they are what
 * `git ls-files --cached --others --exclude-standard` lists (tracked files and new ones that
 * .gitignore does not exclude); elsewhere, or when git is missing or too slow, a walk that
 * honours every .gitignore from the root down and skips symlinks (no loop). `.git` and
 * `node_modules` are never listed. The index is built the first time it is asked for, kept, and
 * rebuilt in the background once it is older than its freshness period, so typing `@` never
 * waits on the disk.
 *
 * @module
 */

import { IgnoreMatcher, parseGitignore } from "@amber/plugins/gitignore";

/** Directories never listed, whatever .gitignore says. */
const SKIPPED: readonly string[] = [".git", "node_modules"];

/** How {@linkcode listWorkspaceFiles} lists. */
export interface ListFilesOptions {
  /** At most this many paths (20,000 by default): a huge tree is cut, not walked to its end. */
  readonly maxFiles?: number;
  /** Skip git and walk (tests of the walk; a workspace where git misbehaves). */
  readonly walkOnly?: boolean;
  /**
   * How long git may take (ms, 5 s by default): a slower git (a huge untracked tree, a hook that
   * hangs) is stopped, and the walk, which stops at `maxFiles`, lists instead.
   */
  readonly gitDeadlineMs?: number;
}

/**
 * The workspace's files as `/`-separated paths relative to `root`, sorted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listWorkspaceFiles } from "./file_index.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.mkdir(`${root}/src`);
 * await Deno.mkdir(`${root}/node_modules`);
 * await Deno.writeTextFile(`${root}/.gitignore`, "*.log\n");
 * await Deno.writeTextFile(`${root}/src/main.ts`, "");
 * await Deno.writeTextFile(`${root}/debug.log`, "");
 * await Deno.writeTextFile(`${root}/node_modules/x.js`, "");
 * assert.deepEqual(await listWorkspaceFiles(root, { walkOnly: true }), [".gitignore", "src/main.ts"]);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function listWorkspaceFiles(
  root: string,
  options: ListFilesOptions = {},
): Promise<string[]> {
  const max = options.maxFiles ?? 20_000;
  const listed = options.walkOnly
    ? undefined
    : await gitFiles(root, options.gitDeadlineMs ?? 5_000);
  const files = listed ?? await walkFiles(root, max);
  return files.filter((path) => !path.split("/").some((part) => SKIPPED.includes(part)))
    .sort().slice(0, max);
}

// What git lists, or undefined when `root` is not in a work tree, or git cannot run or does not
// answer within `deadlineMs`.
async function gitFiles(root: string, deadlineMs: number): Promise<string[] | undefined> {
  try {
    const output = await new Deno.Command("git", {
      args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--deduplicate"],
      cwd: root,
      stdout: "piped",
      stderr: "null",
      stdin: "null",
      signal: AbortSignal.timeout(deadlineMs),
    }).output();
    if (!output.success) return undefined;
    return new TextDecoder().decode(output.stdout).split("\0").filter((path) => path !== "");
  } catch {
    // No git on the PATH, or it was stopped: the walk does the job.
    return undefined;
  }
}

async function walkFiles(root: string, max: number): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string, rel: string, matcher: IgnoreMatcher): Promise<void> => {
    let ignore = "";
    try {
      ignore = await Deno.readTextFile(`${dir}/.gitignore`);
    } catch {
      // No .gitignore here.
    }
    const here = matcher.with(rel, parseGitignore(ignore));
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const entry of Deno.readDir(dir)) entries.push(entry);
    } catch {
      // An unreadable directory lists nothing rather than failing the completion.
      return;
    }
    entries.sort((a, b) => a.name < b.name ? -1 : 1);
    for (const entry of entries) {
      if (files.length >= max) return;
      if (entry.isSymlink || SKIPPED.includes(entry.name)) continue;
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (here.ignores(path, entry.isDirectory)) continue;
      if (entry.isDirectory) await walk(`${dir}/${entry.name}`, path, here);
      else if (entry.isFile) files.push(path);
    }
  };
  await walk(root, "", IgnoreMatcher.empty());
  return files;
}

/** How a {@linkcode FileIndex} lists and when it refreshes. */
export interface FileIndexOptions extends ListFilesOptions {
  /** After this long (ms, 10 s by default) the list is rebuilt the next time it is read. */
  readonly staleMs?: number;
  /** Called when a build finishes (the screen redraws with the new list). */
  readonly onUpdate?: () => void;
}

/**
 * The workspace's files, listed lazily and kept: {@linkcode FileIndex.paths} answers at once
 * with what is known (undefined before the first build finishes) and starts a build when there
 * is none yet or the last is stale.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FileIndex } from "./file_index.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${root}/notes.md`, "");
 * const index = new FileIndex(root, { walkOnly: true });
 * assert.equal(index.paths(), undefined, "nothing is listed before it is asked for");
 * assert.deepEqual(await index.refresh(), ["notes.md"]);
 * assert.deepEqual(index.paths(), ["notes.md"]);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export class FileIndex {
  readonly #root: string;
  readonly #options: FileIndexOptions;
  #paths: readonly string[] | undefined;
  #builtAt = 0;
  #building: Promise<readonly string[]> | undefined;

  /** An index of `root`; nothing is read until it is asked for. */
  constructor(root: string, options: FileIndexOptions = {}) {
    this.#root = root;
    this.#options = options;
  }

  /** The workspace root. */
  get root(): string {
    return this.#root;
  }

  /** The paths known now; starts a build when there is none yet or the list is stale. */
  paths(): readonly string[] | undefined {
    const stale = performance.now() - this.#builtAt > (this.#options.staleMs ?? 10_000);
    if (this.#building === undefined && (this.#paths === undefined || stale)) {
      this.refresh().catch(() => {
        // A failed listing leaves the last list in place; the next read tries again.
      });
    }
    return this.#paths;
  }

  /** Builds the list now (or joins the build running) and returns it. */
  refresh(): Promise<readonly string[]> {
    this.#building ??= listWorkspaceFiles(this.#root, this.#options).then((paths) => {
      this.#paths = paths;
      this.#builtAt = performance.now();
      this.#options.onUpdate?.();
      return paths;
    }).finally(() => this.#building = undefined);
    return this.#building;
  }
}
