/**
 * Where markdown commands, skills and agents come from, one plugin per kind and source:
 *
 * | plugin | folders (the first wins a name both have) |
 * | --- | --- |
 * | `files.commands`, `files.skills`, `files.agents` | `<workspace>/.amber/<kind>/`, `<config dir>/<kind>/` |
 * | `files.commands-claude`, `files.skills-claude`, `files.agents-claude` | `<workspace>/.claude/<kind>/`, `~/.claude/<kind>/` |
 *
 * The Claude Code folders are read unless `config.yaml` says `compat: {claude: false}`.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import type { AmberConfig } from "@amber/core";
import type { DefinitionKind } from "./definitions.ts";

/** One plugin's folders. */
export interface FileSource {
  /** The plugin's id: `files.commands`, `files.skills-claude`... */
  readonly pluginId: string;
  /** What its folders hold. */
  readonly kind: DefinitionKind;
  /** `amber` or `claude`. */
  readonly origin: "amber" | "claude";
  /** Its folders, the first winning a name two of them have. */
  readonly folders: readonly string[];
}

/** Where the folders are looked for. */
export interface SourcePlaces {
  /** amber's config directory. */
  readonly configDir: string;
  /** The workspace root. */
  readonly workspace: string;
  /** The home directory (for `~/.claude`); without one, only the workspace's is read. */
  readonly home?: string;
}

const KINDS: readonly DefinitionKind[] = ["commands", "skills", "agents"];

/**
 * Whether `config` reads Claude Code's files (`.claude/` folders and `CLAUDE.md`): unless
 * `compat.claude` is false.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readsClaudeFiles } from "./sources.ts";
 * assert.equal(readsClaudeFiles({ plugins: {} }), true);
 * assert.equal(readsClaudeFiles({ plugins: {}, compat: { claude: false } }), false);
 * ```
 */
export function readsClaudeFiles(config: AmberConfig): boolean {
  return config.compat?.claude !== false;
}

/**
 * The sources `config` asks for, in the order their plugins register (amber's first, so a name
 * both have is amber's).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fileSources } from "./sources.ts";
 * const places = { configDir: "/c", workspace: "/w", home: "/h" };
 * const sources = fileSources({ plugins: {} }, places);
 * assert.deepEqual(sources.map((s) => s.pluginId), [
 *   "files.commands", "files.skills", "files.agents",
 *   "files.commands-claude", "files.skills-claude", "files.agents-claude",
 * ]);
 * assert.deepEqual(sources[3].folders, ["/w/.claude/commands", "/h/.claude/commands"]);
 * const off = fileSources({ plugins: {}, compat: { claude: false } }, places);
 * assert.equal(off.length, 3);
 * ```
 */
export function fileSources(config: AmberConfig, places: SourcePlaces): FileSource[] {
  const sources: FileSource[] = KINDS.map((kind) => ({
    pluginId: `files.${kind}`,
    kind,
    origin: "amber",
    folders: [join(places.workspace, ".amber", kind), join(places.configDir, kind)],
  }));
  if (!readsClaudeFiles(config)) return sources;
  for (const kind of KINDS) {
    const folders = [join(places.workspace, ".claude", kind)];
    const user = places.home === undefined ? undefined : join(places.home, ".claude", kind);
    // A workspace that is the home directory has one `.claude` folder, read once.
    if (user !== undefined && user !== folders[0]) folders.push(user);
    sources.push({ pluginId: `files.${kind}-claude`, kind, origin: "claude", folders });
  }
  return sources;
}

/**
 * The sources of {@linkcode fileSources} that have a folder, or whose folder would be in a dot
 * folder of the workspace that exists (`.amber/`, `.claude/`): those get a plugin. With none, the
 * host loads nothing of `cli/files` and no step pays for watching; a folder created during such a
 * session counts from the next one. `places.home` defaults to `$HOME`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { presentFileSources } from "./sources.ts";
 * const workspace = await Deno.makeTempDir();
 * const configDir = await Deno.makeTempDir();
 * const home = await Deno.makeTempDir();
 * const places = { configDir, workspace, home };
 * assert.deepEqual(presentFileSources({ plugins: {} }, places), []);
 * await Deno.mkdir(`${workspace}/.amber`);
 * assert.deepEqual(
 *   presentFileSources({ plugins: {} }, places).map((s) => s.pluginId),
 *   ["files.commands", "files.skills", "files.agents"],
 * );
 * for (const dir of [workspace, configDir, home]) await Deno.remove(dir, { recursive: true });
 * ```
 */
export function presentFileSources(config: AmberConfig, places: SourcePlaces): FileSource[] {
  const home = places.home ?? Deno.env.get("HOME");
  const all = fileSources(config, { ...places, ...(home ? { home } : {}) });
  const likelyHome = likelyHomes(places.workspace);
  return all.filter((source) => source.folders.some(likelyHome));
}

// Whether a folder may hold definitions now or soon: it exists, or its parent is a dot folder
// (`.amber`, `.claude`) of the workspace that does (`~/.claude` alone, which Claude Code keeps
// for its own state, is not enough). Asked of folder listings, each read once: a `stat` of a
// missing path throws, and at start-up a dozen of those cost a millisecond.
function likelyHomes(workspace: string): (folder: string) => boolean {
  const listings = new Map<string, ReadonlySet<string>>();
  const has = (dir: string, name: string): boolean => {
    let names = listings.get(dir);
    if (names === undefined) {
      const found = new Set<string>();
      try {
        for (const entry of Deno.readDirSync(dir)) {
          if (entry.isDirectory || entry.isSymlink) found.add(entry.name);
        }
      } catch {
        // Not there: holds nothing.
      }
      listings.set(dir, names = found);
    }
    return names.has(name);
  };
  const exists = (path: string): boolean => {
    const parent = dirname(path);
    if (parent === path) return true;
    // The workspace's dot folders are looked for in its listing, so a missing one costs nothing.
    if (dirname(parent) === workspace && !has(workspace, basename(parent))) return false;
    return has(parent, basename(path));
  };
  return (folder) => {
    const parent = dirname(folder);
    const dotted = basename(parent).startsWith(".") && dirname(parent) === workspace;
    return exists(folder) || (dotted && exists(parent));
  };
}
