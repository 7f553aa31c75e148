/**
 * amber's own config directory is off limits to the model without the user's say: a `write` or
 * `edit` whose path lands in it, or a `bash` / `process_start` command line that names it, is
 * put to the user even under `--approve auto` (the host gate asks for a confirmation, which the
 * kernel never answers by policy); under `--approve deny`, or with no one to ask, it is blocked
 * with a message naming the path. Without this, a prompt-injected model could rewrite
 * `plugins.lock.json` to let a changed plugin load, or switch plugins on and off.
 *
 * Paths are judged by where they really are: `..` is resolved and symlinks are followed (also a
 * dangling one, which says where a write through it would land). A command line counts when one
 * of its words resolves into the directory, or when it spells the directory's path (absolute,
 * relative to the workspace, or under `~` / `$HOME`). This is a guard against a careless or
 * misled model, not a sandbox: a command that builds the path at run time is not seen.
 *
 * When the config directory is the workspace, or holds it, protecting all of it would ask for
 * every write; then only amber's own files in it ({@linkcode AMBER_STATE_ENTRIES}) are protected.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProtectedPaths } from "@amber/cli/session";
 * const workspace = await Deno.realPath(await Deno.makeTempDir());
 * const paths = new ProtectedPaths({ configDir: `${workspace}/.amber`, workspace });
 * assert.equal(
 *   paths.touchedBy("write", { path: "src/../.amber/plugins.lock.json" }),
 *   `${workspace}/.amber/plugins.lock.json`,
 * );
 * assert.equal(paths.touchedBy("bash", { command: "cat .amber/config.yaml" }), `${workspace}/.amber`);
 * assert.equal(paths.touchedBy("edit", { path: "src/main.ts" }), undefined);
 * await Deno.remove(workspace, { recursive: true });
 * ```
 *
 * @module
 */

import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { GateInput, GateOutcome } from "@amber/core";

/**
 * What amber keeps in its config directory: protected one by one when the directory itself
 * cannot be (it is the workspace or holds it).
 */
export const AMBER_STATE_ENTRIES: readonly string[] = Object.freeze([
  "config.yaml",
  "plugins.lock.json",
  "plugins",
  "sessions",
  "locks",
  "processes",
  "faults.json",
  "history.jsonl",
  "trusted_permissions.json",
]);

/** The tools whose path argument writes a file. */
const PATH_TOOLS: ReadonlySet<string> = new Set(["write", "edit"]);
/** The tools whose command argument runs a shell command line. */
const COMMAND_TOOLS: ReadonlySet<string> = new Set(["bash", "process_start"]);
// Words of a command line looked at one by one; a longer line is still matched by spelling.
const MAX_WORDS = 256;
// Symlink hops followed before giving up, as the kernel's ELOOP limit does.
const MAX_LINKS = 40;

/** Where amber's config directory and the workspace are. */
export interface ProtectedPathsOptions {
  /** amber's config directory. */
  readonly configDir: string;
  /** The workspace root: relative tool paths and command words are taken from it. */
  readonly workspace: string;
  /** The home directory, for `~` and `$HOME`; `$HOME` by default. */
  readonly home?: string;
}

/** Which tool calls touch amber's config directory. */
export class ProtectedPaths {
  readonly #configDir: string;
  readonly #workspace: string;
  readonly #home: string | undefined;

  /** Protects `options.configDir` against tool calls made in `options.workspace`. */
  constructor(options: ProtectedPathsOptions) {
    this.#configDir = resolve(options.configDir);
    this.#workspace = resolve(options.workspace);
    this.#home = options.home ?? homeDir();
  }

  /**
   * The protected path that a call of tool `name` with `args` touches (the file itself for
   * `write` and `edit`, the protected directory or file a command names for `bash`), or
   * `undefined` when it touches none.
   */
  touchedBy(name: string, args: unknown): string | undefined {
    const value = (args as Record<string, unknown> | null | undefined)?.[
      PATH_TOOLS.has(name) ? "path" : COMMAND_TOOLS.has(name) ? "command" : ""
    ];
    if (typeof value !== "string" || value === "") return undefined;
    return PATH_TOOLS.has(name) ? this.pathTouched(value) : this.commandTouched(value);
  }

  /**
   * The real path of `path` (relative to the workspace, `~` expanded) when it lies in a
   * protected place, else `undefined`.
   */
  pathTouched(path: string): string | undefined {
    const real = realPath(this.#resolve(path));
    return this.#roots().some((root) => within(root, real)) ? real : undefined;
  }

  /** The protected place a command line names, else `undefined`. */
  commandTouched(command: string): string | undefined {
    const roots = this.#roots();
    for (const root of roots) {
      for (const spelling of this.#spellings(root)) {
        if (names(command, spelling)) return root;
      }
    }
    const words = command.split(/[\s;|&<>()`"'=,]+/).filter((w) => w !== "" && !w.startsWith("-"))
      .slice(0, MAX_WORDS);
    for (const word of words) {
      const real = realPath(this.#resolve(word));
      const root = roots.find((candidate) => within(candidate, real));
      if (root !== undefined) return root;
    }
    return undefined;
  }

  // The protected places, as real paths: the config directory, or amber's entries in it when the
  // directory is the workspace or holds it. Worked out on each call: the directory may be
  // created (or re-linked) after the session starts.
  #roots(): string[] {
    const config = realPath(this.#configDir);
    const workspace = realPath(this.#workspace);
    if (!within(config, workspace)) return [config];
    return AMBER_STATE_ENTRIES.map((entry) => realPath(join(this.#configDir, entry)));
  }

  // How a command line may spell `root`: absolute (as given and real), relative to the workspace
  // (when inside it), and under the home directory.
  #spellings(root: string): string[] {
    const spellings = new Set<string>([root]);
    const logical = this.#logical(root);
    if (logical !== undefined) spellings.add(logical);
    for (const path of [...spellings]) {
      for (const base of [this.#workspace, realPath(this.#workspace)]) {
        if (within(base, path) && path !== base) spellings.add(relative(base, path));
      }
      if (this.#home !== undefined) {
        for (const home of [this.#home, realPath(this.#home)]) {
          if (!within(home, path) || path === home) continue;
          const rest = relative(home, path);
          spellings.add(`~/${rest}`).add(`$HOME/${rest}`).add(`\${HOME}/${rest}`);
        }
      }
    }
    return [...spellings];
  }

  // `root` as spelt through the config directory as given (before symlinks were followed).
  #logical(root: string): string | undefined {
    const config = realPath(this.#configDir);
    if (!within(config, root)) return undefined;
    return join(this.#configDir, relative(config, root));
  }

  #resolve(path: string): string {
    if (this.#home !== undefined && (path === "~" || path.startsWith("~/"))) {
      return resolve(this.#home, path.slice(2));
    }
    return resolve(this.#workspace, path);
  }
}

/** A host gate, as `RunOptions.hostGate` takes it. */
export type HostGate = (input: GateInput) => GateOutcome | Promise<GateOutcome>;

/** Options of {@linkcode protectedPathsGate}. */
export interface ProtectedGateOptions {
  /**
   * Why no one can confirm a call now (`--approve deny`, no terminal), or `undefined` when the
   * user can be asked.
   */
  readonly refusal: () => string | undefined;
  /** A gate consulted as well (the sub-agent's); its block wins. */
  readonly next?: HostGate;
}

/**
 * The host gate that puts every call touching a protected path to the user: a confirmation the
 * kernel must ask for whatever the policy, or a block naming the path when no one can answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProtectedPaths, protectedPathsGate } from "@amber/cli/session";
 * const workspace = await Deno.realPath(await Deno.makeTempDir());
 * const paths = new ProtectedPaths({ configDir: `${workspace}/.amber`, workspace });
 * const call = (args: unknown) => ({
 *   call: { id: "1", name: "write", arguments: JSON.stringify(args) },
 *   args,
 *   state: new Map(),
 * });
 * const asking = protectedPathsGate(paths, { refusal: () => undefined });
 * assert.equal((await asking(call({ path: ".amber/config.yaml" }))).kind, "requireConfirmation");
 * assert.equal((await asking(call({ path: "notes.md" }))).kind, "allow");
 * const denying = protectedPathsGate(paths, { refusal: () => "the approval policy is deny" });
 * const outcome = await denying(call({ path: ".amber/config.yaml" }));
 * assert.equal(outcome.kind, "block");
 * assert.match(outcome.kind === "block" ? outcome.reason : "", /\.amber\/config\.yaml/);
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export function protectedPathsGate(
  paths: ProtectedPaths,
  options: ProtectedGateOptions,
): HostGate {
  return async (input) => {
    const touched = paths.touchedBy(input.call.name, input.args);
    const next = options.next === undefined ? undefined : await options.next(input);
    if (next?.kind === "block" || touched === undefined) return next ?? { kind: "allow" };
    const refusal = options.refusal();
    if (refusal !== undefined) {
      return {
        kind: "block",
        reason: `'${input.call.name}' touches amber's config directory (${touched}), which ` +
          `always needs the user's confirmation, and ${refusal}`,
      };
    }
    return {
      kind: "requireConfirmation",
      correlationId: `amber-config:${touched}`,
      reason: `it touches amber's own configuration, ${touched}, so it is asked every time`,
    };
  };
}

/**
 * Where `path` really is: symlinks followed, including a dangling one, with a missing tail kept
 * as written (a file about to be created).
 */
function realPath(path: string, hops = 0): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    // Missing, dangling or unreadable: resolve the parent and keep this name.
  }
  const parent = dirname(path);
  if (parent === path) return path;
  if (hops < MAX_LINKS) {
    try {
      if (Deno.lstatSync(path).isSymlink) {
        return realPath(resolve(parent, Deno.readLinkSync(path)), hops + 1);
      }
    } catch {
      // Not there at all.
    }
  }
  return join(realPath(parent, hops), basename(path));
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

// Whether `command` spells `path` as a path of its own: not as part of a longer name.
function names(command: string, path: string): boolean {
  for (let at = command.indexOf(path); at !== -1; at = command.indexOf(path, at + 1)) {
    const before = at === 0 ? "" : command[at - 1];
    const after = command[at + path.length] ?? "";
    if (/^[\s"'=:(<>|&;`/]?$/.test(before) && /^[\s"'/;|&)<>*?[{}`]?$/.test(after)) return true;
  }
  return false;
}

function homeDir(): string | undefined {
  try {
    return Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE");
  } catch {
    return undefined;
  }
}
