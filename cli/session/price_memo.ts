/**
 * The price table's answers kept in amber's cache folder (`prices.json` in `$AMBER_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/amber`, else `~/.cache/amber`), so that a session whose model the models.dev
 * snapshot lacks (the presets' own defaults among them) does not load the 0.8 MB table at every
 * start: once a day per model is enough, as its prices change on dates. The answers depend on the
 * table's version and the day only, so every config directory shares them (`amber demo` and batch
 * jobs start from a fresh one each time).
 *
 * The file is a cache: a missing, unreadable or malformed one is read as empty and written anew,
 * what it holds is checked again by the catalog, and two processes writing at once lose at most
 * an entry (each write replaces the whole file, atomically). It holds a few scopes side by side, so
 * that two builds of amber on one machine (a clone and the single-file build, or two versions),
 * started in turn, do not each throw the other's answers away.
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import type { PriceMemo } from "@amber/providers/model-catalog";
import { writeTextAtomic } from "../atomic_file.ts";

/** The most models one scope keeps; past it, the oldest entries go. */
const MAX_ENTRIES = 200;

/** The most scopes the file keeps; past it, the one written longest ago goes. */
const MAX_SCOPES = 4;

/** A file larger than this is not read (4 scopes of 200 entries take some 160 KB). */
const MAX_BYTES = 1024 * 1024;

/** What the file holds: each scope's models, the scope written last at the end. */
type Kept = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/**
 * amber's cache folder: `$AMBER_CACHE_DIR`, else `$XDG_CACHE_HOME/amber`, else `~/.cache/amber`;
 * undefined when none of them is set.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cacheDir } from "./price_memo.ts";
 * const env = (vars: Record<string, string>) => (name: string) => vars[name];
 * assert.equal(cacheDir(env({ AMBER_CACHE_DIR: "/c", HOME: "/h" })), "/c");
 * assert.equal(cacheDir(env({ XDG_CACHE_HOME: "/x", HOME: "/h" })), "/x/amber");
 * assert.equal(cacheDir(env({ HOME: "/h" })), "/h/.cache/amber");
 * assert.equal(cacheDir(env({})), undefined);
 * ```
 */
export function cacheDir(env: (name: string) => string | undefined): string | undefined {
  const own = env("AMBER_CACHE_DIR");
  if (own) return own;
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return join(xdg, "amber");
  const home = env("HOME") || env("USERPROFILE");
  return home ? join(home, ".cache", "amber") : undefined;
}

/**
 * A {@linkcode PriceMemo} in `dir/prices.json`, read once and kept in memory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { filePriceMemo } from "./price_memo.ts";
 * const dir = await Deno.makeTempDir();
 * await filePriceMemo(dir).keep("v1 2026-12-02", "openai/m", null);
 * // Another process reads what this one kept, in the same scope only.
 * assert.equal(await filePriceMemo(dir).recall("v1 2026-12-02", "openai/m"), null);
 * assert.equal(await filePriceMemo(dir).recall("v1 2026-12-03", "openai/m"), undefined);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function filePriceMemo(dir: string): PriceMemo {
  const path = join(dir, "prices.json");
  let kept: Promise<Kept> | undefined;
  const read = () => kept ??= readKept(path);
  return {
    async recall(scope, key) {
      const now = await read();
      const models = Object.hasOwn(now, scope) ? now[scope] : undefined;
      return models !== undefined && Object.hasOwn(models, key) ? models[key] : undefined;
    },
    async keep(scope, key, value) {
      const now = await read();
      const earlier = Object.hasOwn(now, scope) ? Object.entries(now[scope]) : [];
      const models = Object.fromEntries(
        [...earlier.filter(([name]) => name !== key), [key, value] as const].slice(-MAX_ENTRIES),
      );
      const others = Object.entries(now).filter(([name]) => name !== scope);
      const next: Kept = Object.fromEntries(
        [...others, [scope, models] as const].slice(-MAX_SCOPES),
      );
      kept = Promise.resolve(next);
      try {
        await Deno.mkdir(dir, { recursive: true });
        await writeTextAtomic(path, `${JSON.stringify({ scopes: next })}\n`);
      } catch {
        // A cache that cannot be written costs the next start a lookup, nothing more.
      }
    },
  };
}

async function readKept(path: string): Promise<Kept> {
  let text: string;
  try {
    // Not a FIFO or a device left in its place, which would hold the start; nor a huge file.
    const info = await Deno.stat(path);
    if (!info.isFile || info.size > MAX_BYTES) return {};
    text = await Deno.readTextFile(path);
  } catch {
    return {};
  }
  let scopes: unknown;
  try {
    scopes = (JSON.parse(text) as { scopes?: unknown } | null)?.scopes;
  } catch {
    return {};
  }
  if (!isRecord(scopes)) return {};
  // A scope whose models are not an object is dropped; the others are kept.
  return Object.fromEntries(
    Object.entries(scopes).filter(([, models]) => isRecord(models)),
  ) as Kept;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Nothing is kept when there is no cache folder to keep it in.
const NO_MEMO: PriceMemo = {
  recall: () => Promise.resolve(undefined),
  keep: () => Promise.resolve(),
};

/**
 * The memo a session uses: in {@linkcode cacheDir} as the process's environment says (read
 * through `env`, `Deno.env.get` by default); one that keeps nothing when there is no cache
 * folder, when it is not an absolute path, or when the environment cannot be read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { priceMemoFor } from "./price_memo.ts";
 * const dir = await Deno.makeTempDir();
 * const memo = priceMemoFor((name) => name === "AMBER_CACHE_DIR" ? dir : undefined);
 * await memo.keep("v1 2026-12-02", "openai/m", null);
 * assert.equal(
 *   await Deno.readTextFile(`${dir}/prices.json`),
 *   '{"scopes":{"v1 2026-12-02":{"openai/m":null}}}\n',
 * );
 * // A relative folder (a reader that answers anything) keeps nothing.
 * const relative = priceMemoFor(() => "sk-not-a-folder");
 * await relative.keep("v1 2026-12-02", "openai/m", null);
 * assert.equal(await relative.recall("v1 2026-12-02", "openai/m"), undefined);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function priceMemoFor(
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): PriceMemo {
  let dir: string | undefined;
  try {
    dir = cacheDir(env);
  } catch {
    // No permission to read the environment: nothing is kept.
  }
  return dir === undefined || !isAbsolute(dir) ? NO_MEMO : filePriceMemo(dir);
}
