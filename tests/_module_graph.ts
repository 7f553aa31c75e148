// The module graph `deno info --json` reports for an entry, walked the way `deno run` loads it:
// type-only imports are erased, and a dynamic import with a computed specifier is not followed.
// Shared by the tests that keep modules off the start-up path.

import { strictEqual } from "node:assert/strict";
import { ROOT, runDeno } from "./cli/_subprocess.ts";

/** What `deno info` found from one entry. */
export interface ModuleGraph {
  /** Every module `deno info` lists, dynamic imports with literal specifiers included. */
  readonly listed: readonly string[];
  /** The modules reached from the root by code imports (dynamic ones only when asked). */
  readonly reached: ReadonlySet<string>;
}

/**
 * Runs `deno info --json entry` from the repository's root and walks its code imports; a dynamic
 * import (which `deno info` lists but marks) is followed only when `dynamic` is true.
 */
export async function moduleGraph(
  entry: string,
  { dynamic = false }: { readonly dynamic?: boolean } = {},
): Promise<ModuleGraph> {
  const result = await runDeno(["info", "--json", entry], { cwd: ROOT });
  strictEqual(result.code, 0, result.err);
  interface Info {
    roots: string[];
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
    }[];
  }
  const info = JSON.parse(result.out) as Info;
  const byId = new Map(info.modules.map((module) => [module.specifier, module]));
  const reached = new Set<string>();
  const stack = [...info.roots];
  while (stack.length > 0) {
    const specifier = stack.pop()!;
    if (reached.has(specifier)) continue;
    reached.add(specifier);
    for (const dependency of byId.get(specifier)?.dependencies ?? []) {
      if (dependency.code === undefined) continue;
      if (dependency.isDynamic === true && !dynamic) continue;
      stack.push(dependency.code.specifier);
    }
  }
  return { listed: info.modules.map((module) => module.specifier), reached };
}
