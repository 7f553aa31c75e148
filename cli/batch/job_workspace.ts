/**
 * The workspace of one batch job, and what the job changed in it. A job names a local folder
 * (used where it is) or a git repository and ref (cloned into a fresh folder of the job's own).
 * Either way, the folder's content is recorded as a git tree before the session starts and again
 * after it ends, and the job's diff is the difference of the two trees: untracked files count,
 * `.gitignore` is honoured, and what was already uncommitted before the job is not the job's.
 *
 * Nothing of the user's repository changes: the snapshots go through an index file and an object
 * directory in the job's scratch folder (the repository's own objects are read as alternates).
 * A folder that is not in a git repository gets a throwaway repository in the scratch folder,
 * with the folder as its work tree, so its diff is taken the same way.
 *
 * @module
 */

import { isAbsolute, join, resolve } from "node:path";

/** A job's workspace could not be made ready (a failed clone, an unknown ref, no such folder). */
export class JobWorkspaceError extends Error {
  /** Makes the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "JobWorkspaceError";
  }
}

/** Where a job works: a local folder, or a repository and ref to clone. */
export interface WorkspaceSource {
  /** A local folder, used in place. */
  readonly workspace?: string;
  /** A git URL (or path) cloned into a fresh folder. */
  readonly repo?: string;
  /** The branch, tag or commit of `repo` checked out; its default branch when absent. */
  readonly ref?: string;
}

/** A job's workspace, ready for its session. */
export interface JobWorkspace {
  /** The folder the session works in. */
  readonly path: string;
  /** What changed in the folder since it was opened, as `git diff --binary` writes it. */
  diff(): Promise<string>;
}

/**
 * Makes the job's workspace ready under `scratch` (the job's own folder, which the caller
 * removes): clones `repo` at `ref` into `scratch/work`, or checks that `workspace` is a folder;
 * then records its content for {@linkcode JobWorkspace.diff}. Rejects with a
 * {@linkcode JobWorkspaceError}.
 *
 * @example A job's change to a folder, as a diff
 * ```ts
 * import assert from "node:assert/strict";
 * import { openJobWorkspace } from "./job_workspace.ts";
 * const folder = await Deno.makeTempDir();
 * const scratch = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${folder}/a.txt`, "one\n");
 * const workspace = await openJobWorkspace({ workspace: folder }, scratch);
 * await Deno.writeTextFile(`${folder}/b.txt`, "two\n");
 * const diff = await workspace.diff();
 * assert.match(diff, /\+\+\+ b\/b\.txt\n@@ -0,0 \+1 @@\n\+two/);
 * assert.doesNotMatch(diff, /a\.txt/);
 * await Deno.remove(folder, { recursive: true });
 * await Deno.remove(scratch, { recursive: true });
 * ```
 */
export async function openJobWorkspace(
  source: WorkspaceSource,
  scratch: string,
  signal?: AbortSignal,
): Promise<JobWorkspace> {
  const path = source.repo !== undefined
    ? await cloneAt(source.repo!, source.ref, join(scratch, "work"), signal)
    : await localFolder(source.workspace ?? "");
  const git = await snapshotGit(path, join(scratch, "git"));
  const before = await git.tree();
  return {
    path,
    diff: async () => {
      const after = await git.tree();
      return await git.run(["diff", "--binary", "--no-color", "--no-ext-diff", before, after]);
    },
  };
}

async function localFolder(workspace: string): Promise<string> {
  if (workspace === "" || !isAbsolute(workspace)) {
    throw new JobWorkspaceError(`workspace '${workspace}' is not an absolute path`);
  }
  try {
    const stat = await Deno.stat(workspace);
    if (!stat.isDirectory) throw new JobWorkspaceError(`workspace '${workspace}' is not a folder`);
  } catch (error) {
    if (error instanceof JobWorkspaceError) throw error;
    if (error instanceof Deno.errors.NotFound) {
      // Said as the worker sees it: the folder may well exist where the batch was submitted.
      throw new JobWorkspaceError(`workspace '${workspace}' does not exist on this worker`, {
        cause: error,
      });
    }
    throw new JobWorkspaceError(`workspace '${workspace}': ${(error as Error).message}`, {
      cause: error,
    });
  }
  return resolve(workspace);
}

async function cloneAt(
  repo: string,
  ref: string | undefined,
  target: string,
  signal?: AbortSignal,
): Promise<string> {
  const fail = (what: string, detail: string) =>
    new JobWorkspaceError(`cannot ${what} ${repo}${ref ? ` at ${ref}` : ""}: ${detail}`);
  const cloned = await git(["clone", "--quiet", "--no-checkout", "--", repo, target], {}, signal);
  if (!cloned.ok) throw fail("clone", cloned.stderr);
  // A branch other than the default one exists only as `origin/<ref>` after a clone.
  const candidates = ref === undefined ? ["HEAD"] : [ref, `origin/${ref}`];
  for (const candidate of candidates) {
    const commit = await git(
      ["-C", target, "rev-parse", "--verify", "--quiet", `${candidate}^{commit}`],
      {},
      signal,
    );
    if (!commit.ok) continue;
    const checkout = await git(
      ["-C", target, "checkout", "--quiet", "--detach", commit.stdout.trim()],
      {},
      signal,
    );
    if (!checkout.ok) throw fail("check out", checkout.stderr);
    return target;
  }
  throw fail("check out", `no branch, tag or commit '${ref ?? "HEAD"}'`);
}

interface SnapshotGit {
  run(args: readonly string[]): Promise<string>;
  tree(): Promise<string>;
}

// Git commands over `path` whose index and new objects live in `dir`: the folder's repository,
// if it is in one, is only read.
async function snapshotGit(path: string, dir: string): Promise<SnapshotGit> {
  await Deno.mkdir(join(dir, "objects"), { recursive: true });
  const env: Record<string, string> = {
    GIT_INDEX_FILE: join(dir, "index"),
    GIT_OBJECT_DIRECTORY: join(dir, "objects"),
  };
  const inside = await git(["-C", path, "rev-parse", "--path-format=absolute", "--git-common-dir"]);
  if (inside.ok) {
    const common = inside.stdout.trim();
    env.GIT_ALTERNATE_OBJECT_DIRECTORIES = join(common, "objects");
    // The repository's index as the start: its stat cache spares hashing unchanged files.
    const index = await git([
      "-C",
      path,
      "rev-parse",
      "--path-format=absolute",
      "--git-path",
      "index",
    ]);
    if (index.ok) {
      await Deno.copyFile(index.stdout.trim(), env.GIT_INDEX_FILE).catch(() => {});
    }
  } else {
    const repository = join(dir, "repository");
    const init = await git(["init", "--quiet", "--bare", repository]);
    if (!init.ok) throw new JobWorkspaceError(`cannot record ${path}: ${init.stderr}`);
    env.GIT_DIR = repository;
    env.GIT_WORK_TREE = path;
    delete env.GIT_OBJECT_DIRECTORY;
  }
  const run = async (args: readonly string[]): Promise<string> => {
    const result = await git(["-C", path, ...args], env);
    if (!result.ok) {
      throw new JobWorkspaceError(`git ${args[0]} in ${path}: ${result.stderr}`);
    }
    return result.stdout;
  };
  return {
    run,
    tree: async () => {
      // `.` keeps a workspace that is a sub-folder of a repository to its own files.
      await run(["add", "--all", "--", "."]);
      return (await run(["write-tree"])).trim();
    },
  };
}

interface GitResult {
  readonly ok: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

async function git(
  args: readonly string[],
  env: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<GitResult> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("git", {
      args: [...args],
      env: { ...env, GIT_TERMINAL_PROMPT: "0" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      ...(signal === undefined ? {} : { signal }),
    }).output();
  } catch (error) {
    throw new JobWorkspaceError(`cannot run git: ${(error as Error).message}`, { cause: error });
  }
  const decoder = new TextDecoder();
  return {
    ok: output.success,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr).trim(),
  };
}
