/**
 * A third-party plugin's module graph, as its lock entry records it: every local file the
 * plugin imports (directly or not) with its sha256, and every npm package it resolves to, with
 * the version and, when Deno's npm cache has it, the registry's integrity.
 *
 * Computing a graph runs `deno info --json` once, at `amber plugins add` and `update`; without
 * leave to run Deno, or from a compiled amber, the local files are found by reading their static
 * imports, and no npm packages are recorded. Checking one, at every start, only hashes the
 * recorded files (side by side), so it needs no subprocess. A file inside the plugin's folder is
 * recorded relative to that folder (the lock stays readable); one outside by its absolute path.
 *
 * @module
 */

import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describeError } from "@amber/core";
import { ThirdPartyPluginError } from "./third_party_error.ts";

/** One local file of a plugin's graph. */
export interface GraphFile {
  /** Its path: relative to the plugin's folder (with `/`), or absolute when outside it. */
  readonly path: string;
  /** Its sha256, lowercase hex. */
  readonly sha256: string;
}

/** One npm package of a plugin's graph. */
export interface GraphPackage {
  /** The package name. */
  readonly name: string;
  /** The version Deno resolved. */
  readonly version: string;
  /** The registry's integrity string (`sha512-...`), when Deno's npm cache has it. */
  readonly integrity?: string;
  /** The packages it depends on, as `name@version`, when it has any. */
  readonly dependencies?: readonly string[];
}

/** What a lock entry records of a plugin's module graph. */
export interface ModuleGraph {
  /** The format's version. */
  readonly version: 1;
  /** The local files, sorted by path. */
  readonly files: readonly GraphFile[];
  /** The npm packages, sorted by name then version. */
  readonly packages: readonly GraphPackage[];
  /**
   * The `npm:` specifiers its modules import, each with the version Deno resolved it to: what
   * the plugin's process is held to at start (a per-plugin lock file), so that a range cannot
   * resolve to another version than the one accepted. Absent when it imports no npm package.
   */
  readonly npm?: { readonly [specifier: string]: string };
}

/** A recorded file that no longer has its recorded bytes. */
export interface GraphProblem {
  /** The file as recorded (see {@linkcode GraphFile.path}). */
  readonly path: string;
  /** Its absolute path now. */
  readonly file: string;
  /** `changed`: other bytes; `missing`: it cannot be read. */
  readonly state: "changed" | "missing";
}

/** What differs between two graphs of the same plugin. */
export interface GraphDiff {
  /** Files in the new graph only. */
  readonly added: readonly string[];
  /** Files in the old graph only. */
  readonly removed: readonly string[];
  /** Files in both with other hashes. */
  readonly changed: readonly string[];
  /** Packages (`name@version`) in the new graph only. */
  readonly packagesAdded: readonly string[];
  /** Packages (`name@version`) in the old graph only. */
  readonly packagesRemoved: readonly string[];
}

interface DenoInfoModule {
  readonly specifier?: string;
  readonly error?: string;
  readonly npmPackage?: string;
}

interface DenoInfoPackage {
  readonly name?: string;
  readonly version?: string;
  readonly dependencies?: readonly string[];
  readonly registryUrl?: string;
  readonly localPath?: string;
}

interface DenoInfo {
  readonly redirects?: { readonly [from: string]: string };
  readonly modules?: readonly DenoInfoModule[];
  readonly npmPackages?: { readonly [id: string]: DenoInfoPackage };
}

// `npmPackages` lists the whole workspace's resolution; the plugin's are those its modules
// name, and what those depend on.
function reachablePackages(info: DenoInfo): DenoInfoPackage[] {
  const all = info.npmPackages ?? {};
  const queue = (info.modules ?? []).flatMap((module) =>
    module.npmPackage === undefined ? [] : [module.npmPackage]
  );
  const seen = new Set<string>();
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    if (seen.has(id) || all[id] === undefined) continue;
    seen.add(id);
    queue.push(...(all[id].dependencies ?? []));
  }
  return [...seen].map((id) => all[id]);
}

/**
 * Computes the graph of the module `specifier` (a file URL or an `npm:` specifier) with
 * `deno info --json` (run in the current directory, whose configuration the host's imports
 * use too); local files are recorded relative to `base`. Throws a
 * {@linkcode ThirdPartyPluginError} naming `specifier` when Deno cannot resolve it or one of its
 * modules.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { computeModuleGraph } from "./module_graph.ts";
 * const dir = await Deno.realPath(await Deno.makeTempDir());
 * await Deno.writeTextFile(`${dir}/mod.js`, "export * from './helper.js';");
 * await Deno.writeTextFile(`${dir}/helper.js`, "export const x = 1;");
 * const graph = await computeModuleGraph(`file://${dir}/mod.js`, dir);
 * assert.deepEqual(graph.files.map((file) => file.path), ["helper.js", "mod.js"]);
 * assert.deepEqual(graph.packages, []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function computeModuleGraph(specifier: string, base: string): Promise<ModuleGraph> {
  const deno = Deno.execPath();
  // Without leave to run Deno, or inside a compiled amber (whose own binary is not `deno`), the
  // local files are found by reading their static imports.
  if (
    Deno.build.standalone ||
    Deno.permissions.querySync({ name: "run", command: deno }).state !== "granted"
  ) {
    if (!specifier.startsWith("file:")) return { version: 1, files: [], packages: [] };
    const paths = await staticImports(fileURLToPath(specifier));
    const files = await Promise.all(paths.map(async (path) => ({
      path: recordedPath(base, path),
      sha256: await hashPath(specifier, path),
    })));
    return { version: 1, files: files.toSorted((a, b) => compare(a.path, b.path)), packages: [] };
  }
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(deno, {
      args: ["info", "--json", "--no-lock", specifier],
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (error) {
    throw new ThirdPartyPluginError(
      specifier,
      `${specifier}: cannot list its modules (deno info): ${describeError(error)}`,
      { cause: error },
    );
  }
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    const why = new TextDecoder().decode(output.stderr).trim().split("\n").at(-1) ?? "";
    throw new ThirdPartyPluginError(
      specifier,
      `${specifier}: cannot list its modules (deno info exited ${output.code}): ${why}`,
    );
  }
  const info = JSON.parse(text) as DenoInfo;
  const broken = info.modules?.find((module) => module.error !== undefined);
  if (broken !== undefined) {
    throw new ThirdPartyPluginError(
      specifier,
      `${specifier}: cannot list its modules: ${broken.specifier}: ${broken.error}`,
    );
  }
  const paths = (info.modules ?? [])
    .filter((module) => module.specifier?.startsWith("file:") === true)
    .map((module) => fileURLToPath(module.specifier!));
  const files = await Promise.all(
    paths.map(async (path) => ({
      path: recordedPath(base, path),
      sha256: await hashPath(specifier, path),
    })),
  );
  const packages = await Promise.all(
    reachablePackages(info)
      .filter((pkg) => typeof pkg.name === "string" && typeof pkg.version === "string")
      .map(async (pkg) => {
        const integrity = await cachedIntegrity(pkg.name!, pkg.version!, pkg);
        const dependencies = [...(pkg.dependencies ?? [])].sort(compare);
        return {
          name: pkg.name!,
          version: pkg.version!,
          ...(integrity !== undefined ? { integrity } : {}),
          ...(dependencies.length > 0 ? { dependencies } : {}),
        };
      }),
  );
  // `npm:x@^1` -> `npm:/x@1.2.3`: the version each import resolved to.
  const npm: { [specifier: string]: string } = {};
  for (const [from, to] of Object.entries(info.redirects ?? {})) {
    const resolved = /^npm:\/((?:@[^/]+\/)?[^/@]+)@([^/]+)/.exec(to);
    if (from.startsWith("npm:") && resolved !== null) npm[from] = resolved[2];
  }
  return {
    version: 1,
    files: files.toSorted((a, b) => compare(a.path, b.path)),
    packages: packages.toSorted((a, b) => compare(a.name, b.name) || compare(a.version, b.version)),
    ...(Object.keys(npm).length > 0 ? { npm } : {}),
  };
}

/**
 * Hashes every file of `graph` (side by side) and returns those whose bytes changed or that
 * are missing, in the graph's order; an empty list means the graph is as recorded.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { computeModuleGraph, verifyModuleGraph } from "./module_graph.ts";
 * const dir = await Deno.realPath(await Deno.makeTempDir());
 * await Deno.writeTextFile(`${dir}/mod.js`, "export * from './helper.js';");
 * await Deno.writeTextFile(`${dir}/helper.js`, "export const x = 1;");
 * const graph = await computeModuleGraph(`file://${dir}/mod.js`, dir);
 * assert.deepEqual(await verifyModuleGraph(graph, dir), []);
 * await Deno.writeTextFile(`${dir}/helper.js`, "export const x = 2;");
 * assert.deepEqual(await verifyModuleGraph(graph, dir), [
 *   { path: "helper.js", file: `${dir}/helper.js`, state: "changed" },
 * ]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function verifyModuleGraph(
  graph: ModuleGraph,
  base: string,
): Promise<GraphProblem[]> {
  const checks = await Promise.all(graph.files.map(async (recorded) => {
    const file = isAbsolute(recorded.path) ? recorded.path : join(base, recorded.path);
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(file);
    } catch {
      return { path: recorded.path, file, state: "missing" as const };
    }
    return await sha256Hex(bytes) === recorded.sha256
      ? undefined
      : { path: recorded.path, file, state: "changed" as const };
  }));
  return checks.filter((check) => check !== undefined);
}

/**
 * What differs between the graph recorded before and the one computed now.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diffModuleGraphs } from "./module_graph.ts";
 * const a = "a".repeat(64), b = "b".repeat(64);
 * const before = { version: 1 as const, files: [{ path: "mod.js", sha256: a }, { path: "old.js", sha256: a }], packages: [] };
 * const after = { version: 1 as const, files: [{ path: "mod.js", sha256: b }, { path: "new.js", sha256: a }], packages: [{ name: "ms", version: "2.1.3" }] };
 * assert.deepEqual(diffModuleGraphs(before, after), {
 *   added: ["new.js"], removed: ["old.js"], changed: ["mod.js"],
 *   packagesAdded: ["ms@2.1.3"], packagesRemoved: [],
 * });
 * ```
 */
export function diffModuleGraphs(before: ModuleGraph, after: ModuleGraph): GraphDiff {
  const old = new Map(before.files.map((file) => [file.path, file.sha256]));
  const now = new Map(after.files.map((file) => [file.path, file.sha256]));
  const oldPackages = new Set(before.packages.map((pkg) => `${pkg.name}@${pkg.version}`));
  const newPackages = new Set(after.packages.map((pkg) => `${pkg.name}@${pkg.version}`));
  return {
    added: [...now.keys()].filter((path) => !old.has(path)),
    removed: [...old.keys()].filter((path) => !now.has(path)),
    changed: [...now].filter(([path, hash]) => old.has(path) && old.get(path) !== hash)
      .map(([path]) => path),
    packagesAdded: [...newPackages].filter((pkg) => !oldPackages.has(pkg)),
    packagesRemoved: [...oldPackages].filter((pkg) => !newPackages.has(pkg)),
  };
}

/**
 * Why `graph` (a lock entry's `graph` field, as read from JSON) is not a valid graph, or
 * `undefined` when it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { moduleGraphProblem } from "./module_graph.ts";
 * assert.equal(moduleGraphProblem({ version: 1, files: [], packages: [] }), undefined);
 * assert.equal(moduleGraphProblem({ version: 1, files: [{ path: "a.js" }], packages: [] }), "files[0].sha256 is not 64 hex digits");
 * ```
 */
export function moduleGraphProblem(graph: unknown): string | undefined {
  if (typeof graph !== "object" || graph === null) return "not an object";
  const { version, files, packages } = graph as { [key: string]: unknown };
  if (version !== 1) return `unknown version ${JSON.stringify(version)} (expected 1)`;
  if (!Array.isArray(files)) return "files is not a list";
  if (!Array.isArray(packages)) return "packages is not a list";
  for (let i = 0; i < files.length; i++) {
    const file = files[i] as { [key: string]: unknown } | null;
    if (typeof file?.path !== "string") return `files[${i}].path is not a string`;
    if (typeof file.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(file.sha256)) {
      return `files[${i}].sha256 is not 64 hex digits`;
    }
  }
  for (let i = 0; i < packages.length; i++) {
    const pkg = packages[i] as { [key: string]: unknown } | null;
    if (typeof pkg?.name !== "string") return `packages[${i}].name is not a string`;
    if (typeof pkg.version !== "string") return `packages[${i}].version is not a string`;
    if (pkg.integrity !== undefined && typeof pkg.integrity !== "string") {
      return `packages[${i}].integrity is not a string`;
    }
    const deps = pkg.dependencies;
    if (deps !== undefined && (!Array.isArray(deps) || deps.some((d) => typeof d !== "string"))) {
      return `packages[${i}].dependencies is not a list of strings`;
    }
  }
  const { npm } = graph as { npm?: unknown };
  if (npm !== undefined) {
    if (typeof npm !== "object" || npm === null || Array.isArray(npm)) {
      return "npm is not an object";
    }
    for (const [specifier, version] of Object.entries(npm)) {
      if (typeof version !== "string") return `npm['${specifier}'] is not a version`;
    }
  }
  return undefined;
}

/**
 * The folder a plugin's graph files are recorded relative to: the folder of the file its lock
 * entry hashes (`resolved`), or `undefined` for a remote one (a JSR module), whose graph is not
 * recorded.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { graphFolder } from "./module_graph.ts";
 * assert.equal(graphFolder("file:///p/greeter/mod.ts"), "/p/greeter");
 * assert.equal(graphFolder("https://jsr.io/@a/b/1.0.0/mod.ts"), undefined);
 * ```
 */
export function graphFolder(resolved: string): string | undefined {
  return resolved.startsWith("file:") ? dirname(fileURLToPath(resolved)) : undefined;
}

// A module's static and literal dynamic imports of local files, found by reading the text; a
// string that looks like an import in a comment only adds a file that exists to what is hashed.
const IMPORT = /(?:\b(?:import|export)\b[^'"`;]*?\bfrom\s*|\bimport\s*\(?\s*)(['"])([^'"\n]+)\1/g;

async function staticImports(entry: string): Promise<string[]> {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch {
      continue;
    }
    for (const [, , target] of text.matchAll(IMPORT)) {
      if (!/^(?:\.{1,2}\/|\/|file:)/.test(target)) continue;
      const next = target.startsWith("file:")
        ? fileURLToPath(target)
        : join(dirname(path), target.split(/[?#]/)[0]);
      if (seen.has(next)) continue;
      try {
        if (!(await Deno.stat(next)).isFile) continue;
      } catch {
        continue;
      }
      seen.add(next);
      queue.push(next);
    }
  }
  return [...seen];
}

function recordedPath(base: string, path: string): string {
  const inside = relative(base, path);
  if (inside === "" || inside.startsWith("..") || isAbsolute(inside)) return path;
  return inside.split(sep).join("/");
}

// Deno's npm cache keeps each package's registry document beside its versions; with a
// `node_modules` folder the package is read from there, and the document from the cache.
async function cachedIntegrity(
  name: string,
  version: string,
  pkg: DenoInfoPackage,
): Promise<string | undefined> {
  const places: string[] = [];
  if (pkg.localPath !== undefined) places.push(join(dirname(pkg.localPath), "registry.json"));
  const cache = denoDir();
  if (cache !== undefined && pkg.registryUrl !== undefined) {
    try {
      const host = new URL(pkg.registryUrl).host;
      places.push(join(cache, "npm", host, ...name.split("/"), "registry.json"));
    } catch {
      // An unparsable registry URL: only the place beside the package is tried.
    }
  }
  for (const place of places) {
    try {
      const document = JSON.parse(await Deno.readTextFile(place)) as {
        name?: string;
        versions?: { [v: string]: { dist?: { integrity?: unknown } } };
      };
      if (document.name !== undefined && document.name !== name) continue;
      const integrity = document.versions?.[version]?.dist?.integrity;
      if (typeof integrity === "string") return integrity;
    } catch {
      // Not there: the next place.
    }
  }
  return undefined;
}

function denoDir(): string | undefined {
  try {
    const explicit = Deno.env.get("DENO_DIR");
    if (explicit) return explicit;
    const home = Deno.env.get("HOME");
    if (!home) return undefined;
    if (Deno.build.os === "darwin") return join(home, "Library", "Caches", "deno");
    return join(Deno.env.get("XDG_CACHE_HOME") || join(home, ".cache"), "deno");
  } catch {
    return undefined;
  }
}

async function hashPath(specifier: string, path: string): Promise<string> {
  try {
    return await sha256Hex(await Deno.readFile(path));
  } catch (error) {
    throw new ThirdPartyPluginError(specifier, `${path}: cannot be read: ${describeError(error)}`, {
      cause: error,
    });
  }
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
