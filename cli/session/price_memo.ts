/**
 * The price table's answers kept in the config directory (`cache/prices.json`), so that a session
 * whose model the models.dev snapshot lacks (the presets' own defaults among them) does not load
 * the 0.8 MB table at every start: once a day per model is enough, as its prices change on dates.
 *
 * The file is a cache: a missing, unreadable or malformed one is read as empty and written anew,
 * what it holds is checked again by the catalog, and two processes writing at once lose at most
 * an entry (each write replaces the whole file, atomically).
 *
 * @module
 */

import { join } from "node:path";
import type { PriceMemo } from "@amber/providers/model-catalog";
import { writeTextAtomic } from "../atomic_file.ts";

/** The most models one scope keeps; past it, the oldest entries go. */
const MAX_ENTRIES = 200;

/** A file larger than this is not read (200 entries take some 40 KB). */
const MAX_BYTES = 1024 * 1024;

interface Kept {
  readonly scope: string;
  readonly models: Record<string, unknown>;
}

/**
 * A {@linkcode PriceMemo} in `<configDir>/cache/prices.json`, read once and kept in memory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { filePriceMemo } from "./price_memo.ts";
 * const configDir = await Deno.makeTempDir();
 * await filePriceMemo(configDir).keep("v1 2026-12-02", "openai/m", null);
 * // Another process reads what this one kept, in the same scope only.
 * assert.equal(await filePriceMemo(configDir).recall("v1 2026-12-02", "openai/m"), null);
 * assert.equal(await filePriceMemo(configDir).recall("v1 2026-12-03", "openai/m"), undefined);
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export function filePriceMemo(configDir: string): PriceMemo {
  const dir = join(configDir, "cache");
  const path = join(dir, "prices.json");
  let kept: Promise<Kept | undefined> | undefined;
  const read = () => kept ??= readKept(path);
  return {
    async recall(scope, key) {
      const now = await read();
      return now?.scope === scope && Object.hasOwn(now.models, key) ? now.models[key] : undefined;
    },
    async keep(scope, key, value) {
      const now = await read();
      const earlier = now?.scope === scope ? Object.entries(now.models) : [];
      const models = Object.fromEntries(
        [...earlier.filter(([name]) => name !== key), [key, value] as const].slice(-MAX_ENTRIES),
      );
      const next: Kept = { scope, models };
      kept = Promise.resolve(next);
      try {
        await Deno.mkdir(dir, { recursive: true });
        await writeTextAtomic(path, `${JSON.stringify(next)}\n`);
      } catch {
        // A cache that cannot be written costs the next start a lookup, nothing more.
      }
    },
  };
}

async function readKept(path: string): Promise<Kept | undefined> {
  let text: string;
  try {
    // Not a FIFO or a device left in its place, which would hold the start; nor a huge file.
    const info = await Deno.stat(path);
    if (!info.isFile || info.size > MAX_BYTES) return undefined;
    text = await Deno.readTextFile(path);
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null) return undefined;
    const { scope, models } = value as Record<string, unknown>;
    if (typeof scope !== "string") return undefined;
    if (typeof models !== "object" || models === null || Array.isArray(models)) return undefined;
    return { scope, models: models as Record<string, unknown> };
  } catch {
    return undefined;
  }
}
