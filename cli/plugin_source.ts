/**
 * Locating, hashing and loading a third-party plugin's source: a local file or directory, an
 * npm package or a JSR package. `resolved` is the one file whose bytes `sha256` covers:
 *
 * - a local file: the file itself (the one given, or a directory's `deno.json` export / `mod.ts`);
 * - `npm:<pkg>[@range][/sub]`: the package's entry file as Deno resolves it (in `node_modules`
 *   or Deno's npm cache), not the rest of the package or its dependencies;
 * - `jsr:@scope/pkg[@range][/sub]`: the entry module of the version picked at add time, fetched
 *   from jsr.io; the version is pinned in `specifier`.
 *
 * With `expected`, every local file of the recorded module graph (`module_graph.ts`) is hashed
 * too, before the module is imported, so a changed file never runs. {@linkcode locatePluginSource}
 * does all of that and imports nothing: a sandboxed plugin is imported by its own process.
 * {@linkcode loadThirdPartyPlugin} imports it into amber (a trusted plugin); its one exception
 * is an npm package that Deno can only locate once it is loaded (no `node_modules`, e.g. when
 * running the bundle): it is imported, then hashed, and a changed one is still never
 * registered, but its top-level code has run.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  createPluginHostApi,
  describeError,
  type Plugin,
  pluginFromExport,
  type PluginHostApi,
} from "@amber/core";
import { graphFolder, verifyModuleGraph } from "./module_graph.ts";
import type { PluginLockEntry, PluginSourceKind } from "./plugin_lock.ts";
import {
  describeLoadError,
  PluginGraphChangedError,
  PluginHashMismatchError,
  ThirdPartyPluginError,
} from "./third_party_error.ts";
import { VERSION } from "./version.ts";

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

/** Options of {@linkcode loadThirdPartyPlugin}. */
export interface LoadOptions {
  /** What a relative path is resolved against; the current directory by default. */
  readonly cwd?: string;
  /** The host API handed to a factory; amber's by default. */
  readonly api?: PluginHostApi;
  /**
   * The recorded entry: its hash and every file of its graph must match, and its pinned
   * specifier is what is imported.
   */
  readonly expected?: Pick<PluginLockEntry, "sha256" | "specifier" | "resolved" | "spec"> & {
    readonly id?: string;
    readonly graph?: PluginLockEntry["graph"];
  };
}

/**
 * Loads a plugin from `spec` (a path to a .ts/.js file or a directory, `npm:...`, `jsr:...`):
 * hashes its source, imports it, and turns its default export into a plugin. Throws a
 * {@linkcode ThirdPartyPluginError} naming the file and the cause, or a
 * {@linkcode PluginHashMismatchError} when `options.expected` has another hash.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadThirdPartyPlugin } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/mod.js`,
 *   "export default (api) => ({ id: 'tiny', version: '1.0.0', name: 'Tiny', " +
 *     "bound: { tools: api.exact() }, initialize: () => true, shutdown() {}, capabilities: () => [] });",
 * );
 * const loaded = await loadThirdPartyPlugin(`${dir}/mod.js`);
 * assert.equal(loaded.plugin.id, "tiny");
 * assert.equal(loaded.kind, "file");
 * assert.match(loaded.sha256, /^[0-9a-f]{64}$/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadThirdPartyPlugin(
  spec: string,
  options: LoadOptions = {},
): Promise<LoadedPlugin> {
  const api = options.api ?? createPluginHostApi(VERSION);
  const source = await locate(spec, options, true);
  const module = source.module ?? await importModule(source.specifier, source.file);
  let plugin: Plugin;
  try {
    plugin = await pluginFromExport(module.default, api);
  } catch (error) {
    throw new ThirdPartyPluginError(source.spec, `${source.file}: ${describeLoadError(error)}`, {
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

/** A third-party plugin's source, located and hashed, none of its code run. */
export type PluginSource = Omit<LoadedPlugin, "plugin">;

/**
 * Locates and hashes the plugin `spec` names without running any of its code, for a plugin that
 * runs in a process of its own; with `options.expected`, its entry file and every file of its
 * recorded graph must still have their recorded hashes. Throws what
 * {@linkcode loadThirdPartyPlugin} throws, and a {@linkcode ThirdPartyPluginError} for an npm
 * package that Deno could only locate by loading it into amber (no `node_modules` that holds
 * it, e.g. the bundle): that one can only be added `--trusted`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { locatePluginSource } from "@amber/cli/third-party";
 * const dir = await Deno.realPath(await Deno.makeTempDir());
 * // A module that would throw if it ran: locating it runs nothing.
 * await Deno.writeTextFile(`${dir}/mod.js`, "throw new Error('ran');");
 * const source = await locatePluginSource(`${dir}/mod.js`);
 * assert.equal(source.specifier, `file://${dir}/mod.js`);
 * assert.match(source.sha256, /^[0-9a-f]{64}$/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function locatePluginSource(
  spec: string,
  options: Omit<LoadOptions, "api"> = {},
): Promise<PluginSource> {
  const { module: _, ...source } = await locate(spec, options, false);
  return source;
}

// Locates `spec` and checks it against what was recorded. Only with `mayImport` may an npm
// package Deno cannot locate otherwise be imported here (then it is checked after it ran).
async function locate(
  spec: string,
  options: Omit<LoadOptions, "api">,
  mayImport: boolean,
): Promise<LocatedSource> {
  const source = spec.startsWith("npm:")
    ? await locateNpm(spec, mayImport)
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
  const folder = graphFolder(source.resolved);
  if (options.expected?.graph !== undefined && folder !== undefined) {
    const [problem] = await verifyModuleGraph(options.expected.graph, folder);
    if (problem !== undefined) {
      throw new PluginGraphChangedError(
        options.expected.spec,
        options.expected.id ?? source.spec,
        problem.file,
        problem.state,
      );
    }
  }
  return source;
}

// A lock entry's `sha256`: lowercase hex, by WebCrypto.
async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

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

async function locateNpm(spec: string, mayImport: boolean): Promise<LocatedSource> {
  if (!NPM_SPEC.test(spec)) {
    throw new ThirdPartyPluginError(spec, `${spec}: not an npm specifier (npm:<package>[@range])`);
  }
  let resolved = resolveSpecifier(spec);
  let module: { default?: unknown } | undefined;
  if (!resolved.startsWith("file:") && !mayImport) {
    throw new ThirdPartyPluginError(
      spec,
      `${spec}: cannot locate the package's entry file to hash it without running it inside ` +
        `amber (it resolves to ${resolved}); install it where amber runs, or add it --trusted`,
    );
  }
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
    throw new ThirdPartyPluginError(
      spec,
      `${spec}: cannot fetch ${url}: ${describeLoadError(error)}`,
      {
        cause: error,
      },
    );
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

async function importModule(specifier: string, file: string): Promise<{ default?: unknown }> {
  try {
    return await import(specifier);
  } catch (error) {
    throw new ThirdPartyPluginError(
      file,
      `${file}: cannot be imported: ${describeLoadError(error)}`,
      {
        cause: error,
      },
    );
  }
}
