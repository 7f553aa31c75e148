/**
 * Third-party plugins: `amber plugins add <spec>` loads a plugin from a local file, an npm
 * package or a JSR package, checks its shape, and records it in `plugins.lock.json` in the
 * config directory; every start loads the recorded plugins after the bundled ones.
 *
 * The lock file, `<config dir>/plugins.lock.json`:
 *
 * ```json
 * {
 *   "version": 1,
 *   "plugins": [{
 *     "id": "greeter", "name": "Greeter", "version": "0.1.0", "category": "tools",
 *     "spec": "/home/me/greeter/mod.ts", "kind": "file",
 *     "specifier": "file:///home/me/greeter/mod.ts", "resolved": "file:///home/me/greeter/mod.ts",
 *     "sha256": "<64 hex digits>", "addedAt": "2025-01-01T00:00:00.000Z"
 *   }]
 * }
 * ```
 *
 * `spec` is what `amber plugins add` takes again (a local path is stored as its absolute real
 * path, so it means the same from any directory); `specifier` is what is imported; `resolved`
 * is the file whose bytes `sha256` covers:
 *
 * - a local file: the file itself (the one given, or a directory's `deno.json` export / `mod.ts`);
 * - `npm:<pkg>[@range][/sub]`: the package's entry file as Deno resolves it (in `node_modules`
 *   or Deno's npm cache), not the rest of the package or its dependencies;
 * - `jsr:@scope/pkg[@range][/sub]`: the entry module of the version picked at add time, fetched
 *   from jsr.io; the version is pinned in `specifier`.
 *
 * Only that one file is hashed: modules it imports are not. The hash is checked before the
 * module is imported, so a changed file never runs; a changed file is refused (the plugin is
 * `failed`, naming the file and both hashes) until `amber plugins add <spec>` accepts it again.
 * The one exception is an npm package that Deno can only locate once it is loaded (no
 * `node_modules`, e.g. when running the bundle): it is imported, then hashed, and a changed one
 * is still never registered, but its top-level code has run.
 *
 * A plugin that cannot be loaded (missing file, syntax error, a module that throws, no default
 * export, not a plugin, a changed hash) is registered with `PluginRuntime.registerFailed`, so it
 * is listed as `failed` with a reason that names the file and the cause, and every other plugin
 * runs. One whose id a bundled plugin has taken cannot be listed under that id; it is reported
 * as a diagnostic on every start until `amber plugins remove <id>` drops it from the lock.
 *
 * @module
 */

import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  AmberError,
  createPluginHostApi,
  describeError,
  type Plugin,
  pluginFromExport,
  type PluginHostApi,
  type PluginRuntime,
} from "@amber/core";
import { UsageError } from "./args.ts";
import { VERSION } from "./version.ts";

/** The lock file's name in the config directory. */
export const PLUGIN_LOCK_FILE = "plugins.lock.json";

/** Where a third-party plugin comes from. */
export type PluginSourceKind = "file" | "npm" | "jsr";

/** One added plugin, as `plugins.lock.json` records it. */
export interface PluginLockEntry {
  /** The plugin's id when it was added. */
  readonly id: string;
  /** Its display name when it was added (listed even when it cannot be loaded). */
  readonly name: string;
  /** Its version when it was added. */
  readonly version: string;
  /** Its category when it was added. */
  readonly category?: string;
  /** Its description when it was added. */
  readonly description?: string;
  /** What `amber plugins add` takes again: an absolute path, `npm:...` or `jsr:...`. */
  readonly spec: string;
  /** Where it comes from. */
  readonly kind: PluginSourceKind;
  /** What is imported: a file URL, the npm specifier, or the JSR specifier pinned to a version. */
  readonly specifier: string;
  /** The URL of the file whose bytes `sha256` covers. */
  readonly resolved: string;
  /** The sha256 of that file, lowercase hex. */
  readonly sha256: string;
  /** When it was added or last accepted, ISO 8601. */
  readonly addedAt: string;
}

/** The contents of `plugins.lock.json`. */
export interface PluginLock {
  /** The format's version. */
  readonly version: 1;
  /** The added plugins, in the order they load. */
  readonly plugins: readonly PluginLockEntry[];
}

/**
 * A third-party plugin could not be added, loaded or removed. The message names the spec or
 * file and the cause; `cause` keeps the underlying error.
 *
 * @example
 * ```ts
 * import { ThirdPartyPluginError } from "@amber/cli/third-party";
 * const error = new ThirdPartyPluginError("npm:nope", "npm:nope: cannot be imported: not found");
 * console.log(error.name, error.spec); // ThirdPartyPluginError npm:nope
 * ```
 */
export class ThirdPartyPluginError extends AmberError {
  /** The spec (or lock file) concerned. */
  readonly spec: string;
  /** Creates the error. */
  constructor(spec: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ThirdPartyPluginError";
    this.spec = spec;
  }
}

/**
 * A recorded plugin's source no longer has the hash it was added with.
 *
 * @example
 * ```ts
 * import { PluginHashMismatchError } from "@amber/cli/third-party";
 * const error = new PluginHashMismatchError("/p/mod.ts", "/p/mod.ts", "aa", "bb");
 * console.log(error.message.includes("run `amber plugins add /p/mod.ts` again")); // true
 * ```
 */
export class PluginHashMismatchError extends ThirdPartyPluginError {
  /** The file whose bytes changed. */
  readonly file: string;
  /** The hash recorded when it was added. */
  readonly expected: string;
  /** The hash of the file now. */
  readonly actual: string;
  /** Creates the error. */
  constructor(spec: string, file: string, expected: string, actual: string) {
    super(
      spec,
      `${file}: refused: its sha256 changed since it was added (expected ${expected}, found ${actual}); run \`amber plugins add ${spec}\` again to accept it`,
    );
    this.name = "PluginHashMismatchError";
    this.file = file;
    this.expected = expected;
    this.actual = actual;
  }
}

/** A loaded third-party plugin and what its lock entry records. */
export interface LoadedPlugin {
  /** The plugin (a factory's product, when the default export is a factory). */
  readonly plugin: Plugin;
  /** Where it comes from. */
  readonly kind: PluginSourceKind;
  /** The spec to record. */
  readonly spec: string;
  /** What was imported. */
  readonly specifier: string;
  /** The URL of the hashed file. */
  readonly resolved: string;
  /** The hashed file, as shown in messages (a path for a file URL). */
  readonly file: string;
  /** Its sha256. */
  readonly sha256: string;
}

/**
 * The path of `plugins.lock.json` in `configDir`.
 *
 * @example
 * ```ts
 * import { pluginLockPath } from "@amber/cli/third-party";
 * console.log(pluginLockPath("/cfg")); // "/cfg/plugins.lock.json"
 * ```
 */
export function pluginLockPath(configDir: string): string {
  return join(configDir, PLUGIN_LOCK_FILE);
}

/**
 * Reads the lock; a missing file is an empty lock. A file that is not a valid lock is an error
 * naming it (and is never overwritten: `add` and `remove` refuse until it is fixed or deleted).
 *
 * @example
 * ```ts
 * import { readPluginLock } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * console.log((await readPluginLock(dir)).plugins); // []
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readPluginLock(configDir: string): Promise<PluginLock> {
  const path = pluginLockPath(configDir);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { version: 1, plugins: [] };
    throw new ThirdPartyPluginError(path, `${path}: cannot be read: ${describeError(error)}`, {
      cause: error,
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ThirdPartyPluginError(path, `${path}: not valid JSON: ${describeError(error)}`, {
      cause: error,
    });
  }
  const problem = lockProblem(data);
  if (problem !== undefined) {
    throw new ThirdPartyPluginError(
      path,
      `${path}: ${problem}; fix it, or delete it and add the plugins again`,
    );
  }
  return data as PluginLock;
}

/**
 * Writes the lock atomically (a temporary file, then a rename) and returns its path.
 *
 * @example
 * ```ts
 * import { writePluginLock } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * const path = await writePluginLock(dir, { version: 1, plugins: [] });
 * console.log(path.endsWith("plugins.lock.json")); // true
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writePluginLock(configDir: string, lock: PluginLock): Promise<string> {
  const path = pluginLockPath(configDir);
  await Deno.mkdir(configDir, { recursive: true });
  const temp = `${path}.tmp-${crypto.randomUUID()}`;
  try {
    await Deno.writeTextFile(temp, `${JSON.stringify(lock, null, 2)}\n`);
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw new ThirdPartyPluginError(path, `${path}: cannot be written: ${describeError(error)}`, {
      cause: error,
    });
  }
  return path;
}

/** Options of {@linkcode loadThirdPartyPlugin}. */
export interface LoadOptions {
  /** What a relative path is resolved against; the current directory by default. */
  readonly cwd?: string;
  /** The host API handed to a factory; amber's by default. */
  readonly api?: PluginHostApi;
  /** The recorded entry: its hash must match, and its pinned specifier is what is imported. */
  readonly expected?: Pick<PluginLockEntry, "sha256" | "specifier" | "resolved" | "spec">;
}

/**
 * Loads a plugin from `spec` (a path to a .ts/.js file or a directory, `npm:...`, `jsr:...`):
 * hashes its source, imports it, and turns its default export into a plugin. Throws a
 * {@linkcode ThirdPartyPluginError} naming the file and the cause, or a
 * {@linkcode PluginHashMismatchError} when `options.expected` has another hash.
 *
 * @example
 * ```ts
 * import { loadThirdPartyPlugin } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/mod.js`,
 *   "export default (api) => ({ id: 'tiny', version: '1.0.0', name: 'Tiny', " +
 *     "bound: { tools: api.exact() }, initialize: () => true, shutdown() {}, capabilities: () => [] });",
 * );
 * const loaded = await loadThirdPartyPlugin(`${dir}/mod.js`);
 * console.log(loaded.plugin.id, loaded.kind, loaded.sha256.length); // tiny file 64
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadThirdPartyPlugin(
  spec: string,
  options: LoadOptions = {},
): Promise<LoadedPlugin> {
  const api = options.api ?? createPluginHostApi(VERSION);
  const source = spec.startsWith("npm:")
    ? await locateNpm(spec)
    : spec.startsWith("jsr:")
    ? await locateJsr(spec, options.expected)
    : await locateFile(spec, options.cwd ?? Deno.cwd());
  if (options.expected !== undefined && source.sha256 !== options.expected.sha256) {
    throw new PluginHashMismatchError(
      options.expected.spec,
      source.file,
      options.expected.sha256,
      source.sha256,
    );
  }
  const module = source.module ?? await importModule(source.specifier, source.file);
  let plugin: Plugin;
  try {
    plugin = await pluginFromExport(module.default, api);
  } catch (error) {
    throw new ThirdPartyPluginError(source.spec, `${source.file}: ${oneLine(error)}`, {
      cause: error,
    });
  }
  return {
    plugin,
    kind: source.kind,
    spec: source.spec,
    specifier: source.specifier,
    resolved: source.resolved,
    file: source.file,
    sha256: source.sha256,
  };
}

/** What {@linkcode addThirdPartyPlugin} did. */
export interface AddResult {
  /** The entry recorded. */
  readonly entry: PluginLockEntry;
  /** The entry it replaced (the same plugin added again), if any. */
  readonly previous?: PluginLockEntry;
  /** The lock file written. */
  readonly path: string;
}

/** Options of {@linkcode addThirdPartyPlugin}. */
export interface AddOptions {
  /** What a relative path is resolved against. */
  readonly cwd?: string;
  /** The ids of the plugins built into the host, which a third-party plugin may not take. */
  readonly bundledIds: readonly string[];
}

/**
 * `amber plugins add`: loads the plugin (which must load cleanly: nothing is recorded
 * otherwise), refuses an id a bundled plugin has or another spec already recorded, and records
 * it, or accepts it again (a new hash) when the same spec is added once more.
 *
 * @example
 * ```ts
 * import { addThirdPartyPlugin } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/mod.js`,
 *   "export default { id: 'tiny', version: '1.0.0', name: 'Tiny', initialize: () => true, " +
 *     "shutdown() {}, capabilities: () => [] };",
 * );
 * const { entry } = await addThirdPartyPlugin(dir, `${dir}/mod.js`, { bundledIds: ["hello"] });
 * console.log(entry.id, entry.kind); // tiny file
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function addThirdPartyPlugin(
  configDir: string,
  spec: string,
  options: AddOptions,
): Promise<AddResult> {
  const lock = await readPluginLock(configDir);
  const loaded = await loadThirdPartyPlugin(spec, { cwd: options.cwd });
  const { plugin } = loaded;
  if (options.bundledIds.includes(plugin.id)) {
    throw new ThirdPartyPluginError(
      loaded.spec,
      `${loaded.file}: its id '${plugin.id}' is taken by a bundled plugin; a third-party plugin needs an id of its own`,
    );
  }
  const previous = lock.plugins.find((entry) => entry.id === plugin.id);
  if (previous !== undefined && previous.spec !== loaded.spec) {
    throw new ThirdPartyPluginError(
      loaded.spec,
      `${loaded.file}: plugin id '${plugin.id}' is already added from ${previous.spec}; run \`amber plugins remove ${plugin.id}\` first`,
    );
  }
  const entry: PluginLockEntry = {
    id: plugin.id,
    name: plugin.name,
    version: plugin.version,
    ...(plugin.category !== undefined ? { category: plugin.category } : {}),
    ...(plugin.description !== undefined ? { description: plugin.description } : {}),
    spec: loaded.spec,
    kind: loaded.kind,
    specifier: loaded.specifier,
    resolved: loaded.resolved,
    sha256: loaded.sha256,
    addedAt: new Date().toISOString(),
  };
  // The same spec under another id (the plugin renamed itself) replaces its old entry.
  const others = lock.plugins.filter((e) => e.id !== plugin.id && e.spec !== loaded.spec);
  const at = lock.plugins.findIndex((e) => e.id === plugin.id || e.spec === loaded.spec);
  const plugins = [...others];
  plugins.splice(at < 0 ? plugins.length : Math.min(at, plugins.length), 0, entry);
  const path = await writePluginLock(configDir, { version: 1, plugins });
  return { entry, path, ...(previous !== undefined ? { previous } : {}) };
}

/** What {@linkcode removeThirdPartyPlugin} did. */
export interface RemoveResult {
  /** The entry removed. */
  readonly entry: PluginLockEntry;
  /** The lock file written. */
  readonly path: string;
}

/**
 * `amber plugins remove`: drops the plugin's lock entry. Its `plugins/<id>/plugin.conf` is left
 * as it is, like every plugin's state. A bundled plugin cannot be removed (a
 * {@linkcode ThirdPartyPluginError} says to disable it instead); an id that is neither throws a
 * `UsageError` listing the added plugins.
 *
 * @example
 * ```ts
 * import { removeThirdPartyPlugin } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * await removeThirdPartyPlugin(dir, "hello", ["hello"]).catch((e) => console.log(e.name));
 * // ThirdPartyPluginError
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function removeThirdPartyPlugin(
  configDir: string,
  id: string,
  bundledIds: readonly string[],
): Promise<RemoveResult> {
  const lock = await readPluginLock(configDir);
  const entry = lock.plugins.find((e) => e.id === id);
  if (entry === undefined) {
    if (bundledIds.includes(id)) {
      throw new ThirdPartyPluginError(
        id,
        `'${id}' is bundled with amber and cannot be removed; switch it off with \`amber plugins disable ${id}\``,
      );
    }
    const added = lock.plugins.map((e) => e.id).join(", ") || "(none)";
    throw new UsageError(`'${id}' is not an added plugin; added plugins: ${added}`);
  }
  const path = await writePluginLock(configDir, {
    version: 1,
    plugins: lock.plugins.filter((e) => e !== entry),
  });
  return { entry, path };
}

/**
 * Loads every plugin recorded in `configDir`'s lock and registers it with `runtime`, after the
 * plugins already registered (the bundled ones); one that cannot be loaded is registered as
 * failed with the reason. Never throws: a bad lock file or an id a bundled plugin has taken is
 * reported through `runtime.report`. Resolves to the plugins registered.
 *
 * @example
 * ```ts
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { registerThirdPartyPlugins } from "@amber/cli/third-party";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * const dir = await Deno.makeTempDir();
 * console.log(await registerThirdPartyPlugins(runtime, dir)); // []
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function registerThirdPartyPlugins(
  runtime: PluginRuntime,
  configDir: string,
): Promise<Plugin[]> {
  let lock: PluginLock;
  try {
    lock = await readPluginLock(configDir);
  } catch (error) {
    runtime.report({ pluginId: "core", where: PLUGIN_LOCK_FILE, message: oneLine(error), error });
    return [];
  }
  if (lock.plugins.length === 0) return [];
  const api = createPluginHostApi(VERSION);
  // Loaded side by side, registered in lock order, so the order never depends on timing.
  const outcomes = await Promise.all(
    lock.plugins.map((entry) =>
      loadThirdPartyPlugin(entry.spec, { api, expected: entry }).then(
        (loaded) => ({ loaded, error: undefined }),
        (error: unknown) => ({ loaded: undefined, error }),
      )
    ),
  );
  const registered: Plugin[] = [];
  for (let i = 0; i < lock.plugins.length; i++) {
    const entry = lock.plugins[i];
    const { loaded, error } = outcomes[i];
    if (runtime.ids().includes(entry.id)) {
      runtime.report({
        pluginId: entry.id,
        where: "load",
        message:
          `${entry.spec}: not loaded: its id '${entry.id}' is taken by a bundled plugin; run \`amber plugins remove ${entry.id}\` to drop it`,
      });
      continue;
    }
    let reason: string | undefined;
    if (loaded === undefined) reason = oneLine(error);
    else if (loaded.plugin.id !== entry.id) {
      reason =
        `${loaded.file}: its id is now '${loaded.plugin.id}', but it was added as '${entry.id}'; run \`amber plugins add ${entry.spec}\` again`;
    } else {
      try {
        runtime.register(loaded.plugin, { source: entry.spec });
        registered.push(loaded.plugin);
        continue;
      } catch (thrown) {
        reason = `${loaded.file}: ${oneLine(thrown)}`;
      }
    }
    try {
      runtime.registerFailed({
        id: entry.id,
        reason,
        source: entry.spec,
        name: entry.name,
        version: entry.version,
        ...(entry.category !== undefined ? { category: entry.category } : {}),
        ...(entry.description !== undefined ? { description: entry.description } : {}),
      });
    } catch (thrown) {
      runtime.report({ pluginId: "core", where: PLUGIN_LOCK_FILE, message: oneLine(thrown) });
    }
  }
  return registered;
}

// ---------------------------------------------------------------------------------------------
// Locating and hashing a source.

interface LocatedSource {
  readonly kind: PluginSourceKind;
  readonly spec: string;
  readonly specifier: string;
  readonly resolved: string;
  readonly file: string;
  readonly sha256: string;
  // Set when the module had to be imported to be located (an npm package outside node_modules).
  readonly module?: { readonly default?: unknown };
}

const PLUGIN_FILE = /\.(?:ts|js|mts|mjs)$/;

async function locateFile(spec: string, cwd: string): Promise<LocatedSource> {
  const given = spec.startsWith("file:") ? fileURLToPath(spec) : resolve(cwd, spec);
  let path = await realPath(spec, given);
  if ((await Deno.stat(path)).isDirectory) path = await realPath(spec, await entryOf(spec, path));
  if (!PLUGIN_FILE.test(path)) {
    throw new ThirdPartyPluginError(
      spec,
      `${path}: a plugin is a .ts or .js file (or .mts, .mjs), or a directory with one`,
    );
  }
  const url = pathToFileURL(path).href;
  return {
    kind: "file",
    spec: path,
    specifier: url,
    resolved: url,
    file: path,
    sha256: await hashFile(spec, path),
  };
}

async function realPath(spec: string, path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? "no such file or directory"
      : describeError(error);
    throw new ThirdPartyPluginError(spec, `${path}: ${why}`, { cause: error });
  }
}

// A directory's plugin: its deno.json's main export, else its mod.ts.
async function entryOf(spec: string, dir: string): Promise<string> {
  let manifest: { exports?: string | { [key: string]: string } } | undefined;
  try {
    manifest = JSON.parse(await Deno.readTextFile(join(dir, "deno.json")));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new ThirdPartyPluginError(
        spec,
        `${join(dir, "deno.json")}: ${describeError(error)}`,
        { cause: error },
      );
    }
  }
  const exported = typeof manifest?.exports === "string"
    ? manifest.exports
    : manifest?.exports?.["."];
  if (typeof exported === "string") return join(dir, exported);
  return join(dir, "mod.ts");
}

const NPM_SPEC = /^npm:(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(?:@[^/\s]+)?(?:\/\S*)?$/i;

async function locateNpm(spec: string): Promise<LocatedSource> {
  if (!NPM_SPEC.test(spec)) {
    throw new ThirdPartyPluginError(spec, `${spec}: not an npm specifier (npm:<package>[@range])`);
  }
  let resolved = resolveSpecifier(spec);
  let module: { default?: unknown } | undefined;
  if (!resolved.startsWith("file:")) {
    // Deno can only say where a package it has not loaded yet lives by loading it.
    module = await importModule(spec, spec);
    resolved = resolveSpecifier(spec);
  }
  if (!resolved.startsWith("file:")) {
    throw new ThirdPartyPluginError(
      spec,
      `${spec}: cannot locate the package's entry file to hash it (it resolves to ${resolved})`,
    );
  }
  const path = fileURLToPath(resolved);
  const sha256 = await hashFile(spec, path);
  const file = `${spec} (${path})`;
  return {
    kind: "npm",
    spec,
    specifier: spec,
    resolved,
    file,
    sha256,
    ...(module !== undefined ? { module } : {}),
  };
}

function resolveSpecifier(specifier: string): string {
  try {
    return import.meta.resolve(specifier);
  } catch {
    return specifier;
  }
}

const JSR_SPEC = /^jsr:(@[a-z0-9-]+\/[a-z0-9-]+)(?:@([^/\s]+))?(\/\S*)?$/;
const JSR_TIMEOUT_MS = 15_000;

async function locateJsr(
  spec: string,
  expected: LoadOptions["expected"],
): Promise<LocatedSource> {
  const match = JSR_SPEC.exec(spec);
  if (match === null) {
    throw new ThirdPartyPluginError(spec, `${spec}: not a JSR specifier (jsr:@scope/package)`);
  }
  const [, name, range, subpath = ""] = match;
  let version: string;
  let resolved: string;
  if (expected !== undefined) {
    // Loading what was added: the version pinned then, the file hashed then.
    version = /^jsr:@[^/]+\/[^@/]+@([^/]+)/.exec(expected.specifier)?.[1] ?? "";
    resolved = expected.resolved;
  } else {
    const meta = await fetchJson(spec, `https://jsr.io/${name}/meta.json`) as {
      latest?: string;
      versions?: { [version: string]: { yanked?: boolean } };
    };
    version = await pickVersion(spec, meta, range);
    const versionMeta = await fetchJson(spec, `https://jsr.io/${name}/${version}_meta.json`) as {
      exports?: { [key: string]: string };
    };
    const entry = versionMeta.exports?.[`.${subpath}`];
    if (typeof entry !== "string") {
      throw new ThirdPartyPluginError(spec, `${spec}: ${name}@${version} exports no '.${subpath}'`);
    }
    resolved = `https://jsr.io/${name}/${version}/${entry.replace(/^\.\//, "")}`;
  }
  const bytes = await fetchBytes(spec, resolved);
  return {
    kind: "jsr",
    spec,
    specifier: `jsr:${name}@${version}${subpath}`,
    resolved,
    file: resolved,
    sha256: await sha256Hex(bytes),
  };
}

async function pickVersion(
  spec: string,
  meta: { latest?: string; versions?: { [version: string]: { yanked?: boolean } } },
  range: string | undefined,
): Promise<string> {
  const versions = Object.entries(meta.versions ?? {})
    .filter(([, info]) => !info.yanked)
    .map(([version]) => version);
  if (range === undefined && meta.latest) return meta.latest;
  if (range !== undefined) {
    if (versions.includes(range)) return range;
    const semver = await import("semver");
    const best = semver.maxSatisfying(versions, range);
    if (best) return best;
  }
  throw new ThirdPartyPluginError(
    spec,
    `${spec}: no version matches (versions: ${versions.join(", ") || "none"})`,
  );
}

async function fetchJson(spec: string, url: string): Promise<unknown> {
  const bytes = await fetchBytes(spec, url);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new ThirdPartyPluginError(spec, `${spec}: ${url} is not JSON`, { cause: error });
  }
}

async function fetchBytes(spec: string, url: string): Promise<Uint8Array> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(JSR_TIMEOUT_MS) });
  } catch (error) {
    throw new ThirdPartyPluginError(spec, `${spec}: cannot fetch ${url}: ${oneLine(error)}`, {
      cause: error,
    });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new ThirdPartyPluginError(spec, `${spec}: ${url} answered ${response.status}`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

async function hashFile(spec: string, path: string): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    throw new ThirdPartyPluginError(spec, `${path}: cannot be read: ${describeError(error)}`, {
      cause: error,
    });
  }
  return await sha256Hex(bytes);
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function importModule(specifier: string, file: string): Promise<{ default?: unknown }> {
  try {
    return await import(specifier);
  } catch (error) {
    throw new ThirdPartyPluginError(file, `${file}: cannot be imported: ${oneLine(error)}`, {
      cause: error,
    });
  }
}

// Deno's import errors run over several lines with colours (a code frame, then `at file:line`);
// a plugin list wants one line: the message, and where, when Deno said. Our own errors already
// name the file, so their class name would only be noise.
function oneLine(error: unknown): string {
  const described = error instanceof AmberError ? error.message : error instanceof Error
    // Deno wraps a module that does not parse in a TypeError whose message names the real one.
    ? (/^[A-Z]\w*Error: /.test(error.message) ? error.message : `${error.name}: ${error.message}`)
    : String(error);
  // fetch says only "fetch failed"; the reason (DNS, refused, TLS) is in its cause.
  const cause = error instanceof Error && error.cause instanceof Error &&
      !described.includes(error.cause.message)
    ? `: ${error.cause.message}`
    : "";
  // deno-lint-ignore no-control-regex
  const text = `${described}${cause}`.replace(/\x1b\[[0-9;]*m/g, "");
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "");
  const where = lines.slice(1).find((line) => line.startsWith("at "));
  return where === undefined ? lines[0] ?? "" : `${lines[0]} (${where})`;
}

function lockProblem(data: unknown): string | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return "not an object";
  const lock = data as { version?: unknown; plugins?: unknown };
  if (lock.version !== 1) return `unknown version ${JSON.stringify(lock.version)} (expected 1)`;
  if (!Array.isArray(lock.plugins)) return "plugins is not a list";
  const strings = ["id", "name", "version", "spec", "specifier", "resolved", "addedAt"] as const;
  for (let i = 0; i < lock.plugins.length; i++) {
    const entry = lock.plugins[i] as { [key: string]: unknown } | null;
    if (typeof entry !== "object" || entry === null) return `plugins[${i}] is not an object`;
    for (const key of strings) {
      if (typeof entry[key] !== "string") return `plugins[${i}].${key} is not a string`;
    }
    if (entry.kind !== "file" && entry.kind !== "npm" && entry.kind !== "jsr") {
      return `plugins[${i}].kind is not file, npm or jsr`;
    }
    if (typeof entry.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(entry.sha256)) {
      return `plugins[${i}].sha256 is not 64 hex digits`;
    }
    if (entry.kind === "file" && !isAbsolute(entry.spec as string)) {
      return `plugins[${i}].spec is not an absolute path`;
    }
  }
  const ids = lock.plugins.map((entry) => (entry as { id: string }).id);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) return `plugin id '${repeated}' appears twice`;
  return undefined;
}
