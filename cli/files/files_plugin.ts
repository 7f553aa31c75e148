/**
 * The plugins amber realizes for a session from markdown folders (`files.commands`,
 * `files.skills-claude`..., see `sources.ts`): each reads its folders at activation and
 * contributes what they define; a file added, changed or removed while it runs is picked up at
 * the next step boundary, through the runtime's live refresh. A file that cannot be read is a
 * diagnostic naming its path and line; the others load.
 *
 * Watching costs, at each step boundary, a listing of each folder and a `stat` per file (a folder
 * that does not exist: one `stat` of its nearest ancestor, see `folder_watch.ts`). A source with
 * no folder at all has no plugin (see `presentFileSources` in `sources.ts`). The YAML parser and what builds
 * a kind's contributions load at activation, in the background unless a file is already there.
 *
 * @module
 */

import {
  any,
  type CapabilityBound,
  type Diagnostic,
  type Plugin,
  PluginCategory,
  type PluginRuntime,
} from "@amber/core";
import type { HostServices } from "@amber/core";
import type { AgentCatalog } from "./agent_catalog.ts";
import { agentBound, skillBound } from "./file_bounds.ts";
import {
  type AgentFile,
  type DefinitionKind,
  type DefinitionOf,
  type FileProblem,
  type FilesBuilder,
  type FilesContext,
  type FolderScan,
  readScanned,
  type SkillFile,
} from "./definitions.ts";
import { FolderWatch } from "./folder_watch.ts";
import { frontmatterReader, frontmatterReaderNow } from "./frontmatter.ts";
import { loadModule } from "../lazy_modules.ts";
import type { FileSource } from "./sources.ts";

/** Options of {@linkcode createFilesPlugin}. */
export interface FilesPluginOptions<K extends DefinitionKind> {
  /** Its folders. */
  readonly source: FileSource & { readonly kind: K };
  /** Loads the builder of the source's kind; called once, at activation. */
  readonly builder: () => Promise<FilesBuilder<K>>;
  /** Its bound (what its contributions may be). */
  readonly bound?: CapabilityBound;
  /** Receives each problem once (again only after it was gone). */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
}

/** A markdown folder plugin, with what it read for tests and listings. */
export interface FilesPlugin extends Plugin {
  /** The definitions in force. */
  definitions(): readonly { readonly name: string; readonly path: string }[];
  /** The problems of the last read and build. */
  problems(): readonly FileProblem[];
  /** Settles once the parser and the builder, if their loading started, are loaded (or failed). */
  settled(): Promise<void>;
}

/**
 * The plugin of one source's folders.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createFilesPlugin } from "./files_plugin.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/hi.md`, "Say hi");
 * const plugin = createFilesPlugin({
 *   source: { pluginId: "files.commands", kind: "commands", origin: "amber", folders: [dir] },
 *   builder: () => Promise.resolve((items) => ({ capabilities: [], problems: [] })),
 * });
 * const version = plugin.liveVersion!();
 * assert.equal(await plugin.initialize({} as never), true);
 * assert.deepEqual(plugin.definitions().map((d) => d.name), ["hi"]);
 * await Deno.writeTextFile(`${dir}/bye.md`, "Say bye");
 * assert.notEqual(plugin.liveVersion!(), version);
 * assert.deepEqual(plugin.definitions().map((d) => d.name), ["bye", "hi"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function createFilesPlugin<K extends DefinitionKind>(
  options: FilesPluginOptions<K>,
): FilesPlugin {
  const { source } = options;
  const label = source.origin === "claude" ? "Claude Code" : "amber";
  let version = 0;
  let fingerprint: string | undefined;
  let items: readonly DefinitionOf[K][] = [];
  let readProblems: readonly FileProblem[] = [];
  let builtProblems: readonly FileProblem[] = [];
  let builder: FilesBuilder<K> | undefined;
  let loading: Promise<unknown> | undefined;
  let reported = new Set<string>();

  const watches = source.folders.map((dir) => new FolderWatch(source.kind, dir));
  const scan = (): FolderScan[] => watches.map((watch) => watch.poll());
  const fingerprintOf = (scans: readonly FolderScan[]) =>
    scans.map((s) => s.fingerprint).join("\n\0");

  const report = (): void => {
    const now = new Set<string>();
    for (const problem of [...readProblems, ...builtProblems]) {
      const where = problem.line === undefined ? problem.path : `${problem.path}:${problem.line}`;
      const key = `${where}: ${problem.message}`;
      now.add(key);
      if (!reported.has(key)) {
        options.onDiagnostic?.({ pluginId: source.pluginId, where: "files", message: key });
      }
    }
    reported = now;
  };

  // Reads the scanned folders with the loaded parser; the first folder wins a name.
  const take = (
    scans: readonly FolderScan[],
    read: NonNullable<ReturnType<typeof frontmatterReaderNow>>,
  ) => {
    const seen = new Map<string, string>();
    const kept: DefinitionOf[K][] = [];
    const problems: FileProblem[] = [];
    for (const scanned of scans) {
      const loaded = readScanned(source.kind, scanned, read);
      problems.push(...loaded.problems);
      for (const item of loaded.items) {
        const first = seen.get(item.name);
        if (first !== undefined) {
          problems.push({
            path: item.path,
            message: `'${item.name}' is also defined by ${first}, which wins`,
          });
          continue;
        }
        seen.set(item.name, item.path);
        kept.push(item);
      }
    }
    items = kept;
    readProblems = problems;
    fingerprint = fingerprintOf(scans);
  };

  // Without files, nothing is loaded; with some, the parser and the builder are, and the
  // refresh that found them waits for them (the next boundary picks them up).
  const ensureLoaded = (): boolean => {
    if (builder !== undefined && frontmatterReaderNow() !== undefined) return true;
    loading ??= Promise.all([frontmatterReader(), options.builder()]).then(
      ([, made]) => (builder = made),
      (error) => {
        // Not retried: the plugin keeps what it had, and the diagnostic says why.
        options.onDiagnostic?.({
          pluginId: source.pluginId,
          where: "files",
          message: `cannot load what reads these files: ${error}`,
          error,
        });
      },
    );
    return false;
  };

  const plugin: FilesPlugin = {
    id: source.pluginId,
    version: "1.0.0",
    name: `${source.kind[0].toUpperCase()}${source.kind.slice(1)} from ${label} markdown files`,
    description: `${source.kind} from ${source.folders.join(", ")}`,
    category: PluginCategory.Other,
    ...(options.bound !== undefined ? { bound: options.bound } : {}),
    liveVersion: () => {
      const scans = scan();
      const now = fingerprintOf(scans);
      if (now === fingerprint) return version;
      if (scans.every((s) => s.files.length === 0)) {
        items = [];
        readProblems = scans.flatMap((s) => s.problems);
        fingerprint = now;
        return ++version;
      }
      if (!ensureLoaded()) return version;
      take(scans, frontmatterReaderNow()!);
      return ++version;
    },
    initialize: async () => {
      const scans = scan();
      if (scans.some((s) => s.files.length > 0)) {
        ensureLoaded();
        await loading;
        const read = frontmatterReaderNow();
        if (builder === undefined || read === undefined) return false;
        take(scans, read);
      } else {
        items = [];
        readProblems = scans.flatMap((s) => s.problems);
        fingerprint = fingerprintOf(scans);
        // The plugin is there because a file may well be added (see `sources.ts`): the
        // parser loads in the background now, so the boundary after one appears can read it.
        ensureLoaded();
      }
      report();
      return true;
    },
    shutdown: () => {
      // Reported again if the plugin comes back on and they are still there.
      reported = new Set();
    },
    capabilities: () => {
      // Once loaded, the builder hears of an empty folder too (the agents' list must empty).
      if (builder === undefined) {
        builtProblems = [];
        report();
        return [];
      }
      const built = builder(items);
      builtProblems = built.problems ?? [];
      report();
      return built.capabilities;
    },
    definitions: () => items.map((item) => ({ name: item.name, path: item.path })),
    problems: () => [...readProblems, ...builtProblems],
    settled: () => Promise.resolve(loading).then(() => {}),
  };
  return plugin;
}

/** What {@linkcode registerFiles} needs of the host. */
export interface FilesPluginHost {
  /** amber's config directory. */
  readonly configDir: string;
  /** The workspace root. */
  readonly workspace: string;
  /** The host's services: `ui` asks about `` !`cmd` `` lines, `processes` gives their env. */
  readonly services: HostServices;
  /** The host's one list of defined agents, handed to the agents plugins. */
  readonly agents?: AgentCatalog;
  /** The command roots now, with their owners (the command registry's tree). */
  readonly commandRoots: () => readonly { readonly name: string; readonly owner: string }[];
  /** Where file problems go. */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
}

/**
 * Registers one plugin per source of `sources` (see `presentFileSources` in `sources.ts`) whose
 * kind is one of `kinds`. Commands are registered after the other plugins, so a command name
 * amber or a plugin has stays theirs. Agents are registered before them, so that in each refresh
 * pass they fill the agent list before the `task` tool reads it.
 */
export function registerFiles(
  runtime: PluginRuntime,
  sources: readonly FileSource[],
  host: FilesPluginHost,
  kinds: readonly DefinitionKind[] = ["commands", "skills", "agents"],
): FilesPlugin[] {
  const plugins: FilesPlugin[] = [];
  for (const source of sources) {
    if (!kinds.includes(source.kind)) continue;
    const context: FilesContext = {
      pluginId: source.pluginId,
      workspace: host.workspace,
      configDir: host.configDir,
      ...(host.agents !== undefined ? { agents: host.agents } : {}),
    };
    const plugin = createFilesPlugin({
      source,
      builder: builderFor(source.kind, context, runtime, host) as () => Promise<
        FilesBuilder<typeof source.kind>
      >,
      bound: boundFor(source),
      ...(host.onDiagnostic !== undefined ? { onDiagnostic: host.onDiagnostic } : {}),
    });
    // No `source`: that names where an added plugin's code comes from; the folders are in its
    // description.
    runtime.register(plugin);
    plugins.push(plugin);
  }
  return plugins;
}

function boundFor(source: FileSource): CapabilityBound {
  if (source.kind === "commands") return { commands: any() };
  if (source.kind === "skills") return skillBound(source.pluginId);
  return agentBound(source.pluginId);
}

function builderFor(
  kind: DefinitionKind,
  context: FilesContext,
  runtime: PluginRuntime,
  host: FilesPluginHost,
): () => Promise<FilesBuilder<DefinitionKind>> {
  if (kind === "skills") {
    return async () => {
      const { skillCapabilities } = await loadModule<typeof import("./skills.ts")>(
        "./files/skills.ts",
      );
      return ((items: readonly SkillFile[]) => ({
        capabilities: skillCapabilities(items, context),
      })) as FilesBuilder<DefinitionKind>;
    };
  }
  if (kind === "agents") {
    return async () => {
      const { agentCapabilities } = await loadModule<typeof import("./agents.ts")>(
        "./files/agents.ts",
      );
      return ((items: readonly AgentFile[]) => ({
        capabilities: agentCapabilities(items, context),
      })) as FilesBuilder<DefinitionKind>;
    };
  }
  return async () => {
    const { commandBuilder } = await loadModule<typeof import("./command_host.ts")>(
      "./files/command_host.ts",
    );
    return commandBuilder(context, runtime, host) as FilesBuilder<DefinitionKind>;
  };
}
