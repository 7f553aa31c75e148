/**
 * Finds import cycles between the project's own modules. The module graph comes from
 * `deno info --json`, so it is the graph Deno itself resolves (workspace names, import maps),
 * and a type-only import is an edge like any other: a cycle of types still ties the files
 * together. Exits 1 and prints each cycle as `a.ts -> b.ts -> a.ts`, or exits 0 and prints
 * `no import cycles (N modules)`.
 *
 * Run: `deno run --allow-read --allow-run --allow-env .ci/cycles.ts [root]`
 *
 * @module
 */

import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The members whose modules are checked, relative to the project root. */
export const MEMBERS: readonly string[] = [
  "core",
  "registries",
  "providers",
  "plugins",
  "cli",
  "mcp",
];

/** A module graph: every module's path, and the paths it imports (all of them in the graph). */
export type ModuleGraph = ReadonlyMap<string, readonly string[]>;

/** How many elementary cycles are listed before the rest is summed up in one line. */
const MAX_CYCLES = 200;

/** The graph tool failed: `deno info` exited non-zero or printed something unreadable. */
export class ModuleGraphError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ModuleGraphError";
  }
}

/**
 * Every `.ts` file under `dirs` (relative to `root`), skipping `node_modules`, sorted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { projectModules } from "./cycles.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.mkdir(`${root}/core`);
 * await Deno.writeTextFile(`${root}/core/a.ts`, "");
 * assert.deepEqual(await projectModules(root, ["core"]), [`${root}/core/a.ts`]);
 * ```
 */
export async function projectModules(root: string, dirs: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  async function visit(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory && entry.name !== "node_modules") await visit(path);
      else if (entry.isFile && entry.name.endsWith(".ts")) found.push(path);
    }
  }
  for (const dir of dirs) {
    try {
      await visit(join(root, dir));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return found.sort();
}

interface InfoDependency {
  readonly code?: { readonly specifier?: string };
  readonly type?: { readonly specifier?: string };
}

interface InfoModule {
  readonly specifier: string;
  readonly dependencies?: readonly InfoDependency[];
  readonly typesDependency?: { readonly dependency?: { readonly specifier?: string } };
}

/**
 * The import graph between `files`, as `deno info --json` reports it for one entry module that
 * imports them all (a `data:` URL, so nothing is written anywhere). Code, type-only and dynamic
 * imports are all edges; imports of anything outside `files` are dropped. `config` is the
 * deno.json that resolves the files' bare specifiers.
 */
export async function moduleGraph(
  files: readonly string[],
  config: string,
): Promise<ModuleGraph> {
  // File URLs percent-encode anything outside ASCII, so the source is ASCII and btoa takes it.
  const source = files.map((file) => `import ${JSON.stringify(pathToFileURL(file).href)};\n`);
  const entry = `data:application/typescript;base64,${btoa(source.join(""))}`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", config, entry],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  if (!output.success) {
    const stderr = new TextDecoder().decode(output.stderr).trim();
    throw new ModuleGraphError(`deno info failed: ${stderr}`);
  }
  let info: { readonly modules: readonly InfoModule[] };
  try {
    info = JSON.parse(new TextDecoder().decode(output.stdout));
  } catch (error) {
    throw new ModuleGraphError("deno info printed no JSON", { cause: error });
  }
  const wanted = new Set(files);
  const graph = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const module of info.modules) {
    const from = pathOf(module.specifier);
    const edges = from === undefined ? undefined : graph.get(from);
    if (edges === undefined) continue;
    const targets = (module.dependencies ?? []).flatMap((d) => [
      d.code?.specifier,
      d.type?.specifier,
    ]);
    targets.push(module.typesDependency?.dependency?.specifier);
    for (const target of targets) {
      const to = target === undefined ? undefined : pathOf(target);
      if (to !== undefined && wanted.has(to) && !edges.includes(to)) edges.push(to);
    }
  }
  for (const edges of graph.values()) edges.sort();
  return graph;
}

function pathOf(specifier: string): string | undefined {
  return specifier.startsWith("file:") ? fileURLToPath(specifier) : undefined;
}

/**
 * The strongly connected components of `graph` with a cycle in them (more than one module, or
 * one that imports itself), each sorted, in order of their first module (Tarjan's algorithm,
 * iterative so a deep graph cannot overflow the stack).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tangles } from "./cycles.ts";
 * const graph = new Map([["a", ["b"]], ["b", ["a", "c"]], ["c", []]]);
 * assert.deepEqual(tangles(graph), [["a", "b"]]);
 * ```
 */
export function tangles(graph: ModuleGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++];
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      const selfLoop = (graph.get(frame.node) ?? []).includes(frame.node);
      if (component.length > 1 || selfLoop) found.push(component.sort());
    }
  }
  return found.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * The elementary import cycles of `graph`, each as a path whose first module is its smallest
 * and whose last repeats the first (`["a", "b", "a"]`), at most `limit` of them. Each tangle is
 * searched on its own, and a cycle is only followed from its smallest module, so every cycle
 * is listed once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findCycles } from "./cycles.ts";
 * const graph = new Map([["a.ts", ["b.ts"]], ["b.ts", ["a.ts"]], ["c.ts", ["a.ts"]]]);
 * assert.deepEqual(findCycles(graph), [["a.ts", "b.ts", "a.ts"]]);
 * assert.deepEqual(findCycles(new Map([["a.ts", ["b.ts"]], ["b.ts", []]])), []);
 * ```
 */
export function findCycles(graph: ModuleGraph, limit: number = MAX_CYCLES): string[][] {
  const cycles: string[][] = [];
  for (const component of tangles(graph)) {
    const members = new Set(component);
    for (const start of component) {
      // Only modules after `start` may appear, so each cycle is found from its smallest module.
      const allowed = (node: string) => members.has(node) && node >= start;
      const path = [start];
      const onPath = new Set(path);
      const walk = (node: string): boolean => {
        for (const to of graph.get(node) ?? []) {
          if (to === start) {
            cycles.push([...path, start]);
            if (cycles.length >= limit) return false;
          } else if (allowed(to) && !onPath.has(to)) {
            path.push(to);
            onPath.add(to);
            const more = walk(to);
            path.pop();
            onPath.delete(to);
            if (!more) return false;
          }
        }
        return true;
      };
      if (!walk(start)) return cycles;
    }
  }
  return cycles;
}

/** One cycle as the line the script prints, with paths relative to `root`. */
export function formatCycle(cycle: readonly string[], root: string): string {
  return cycle.map((path) => relative(root, path)).join(" -> ");
}

async function main(root: string): Promise<number> {
  const files = await projectModules(root, MEMBERS);
  const graph = await moduleGraph(files, join(root, "deno.json"));
  const cycles = findCycles(graph);
  if (cycles.length === 0) {
    console.log(`no import cycles (${graph.size} modules)`);
    return 0;
  }
  for (const cycle of cycles) console.log(formatCycle(cycle, root));
  const tangled = tangles(graph);
  const modules = tangled.reduce((sum, component) => sum + component.length, 0);
  const more = cycles.length >= MAX_CYCLES ? ` (listing stopped at ${MAX_CYCLES})` : "";
  console.log(
    `${cycles.length} import cycle(s)${more} through ${modules} of ${graph.size} modules`,
  );
  return 1;
}

if (import.meta.main) {
  const root = Deno.args[0] ?? fileURLToPath(new URL("..", import.meta.url));
  Deno.exit(await main(root));
}
