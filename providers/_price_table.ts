/**
 * The second snapshot of the model catalog: Pydantic's genai-prices table (the npm package
 * `@pydantic/genai-prices`), which prices models newer than the models.dev snapshot knows. It
 * gives a context window and prices, no output limit and no abilities, so it sits under the
 * models.dev snapshot and fills in only what that one lacks. Private to the package.
 *
 * The package is one 0.8 MB module (about 40 ms to load); it is loaded by a computed specifier,
 * only when a model is missing from the models.dev snapshot or a whole catalog is listed. What it
 * says of one model can be kept between processes in a {@linkcode PriceMemo}, so that a session
 * with a model the snapshot lacks loads it once a day, not at every start.
 *
 * @module
 */

import type { ModelInfo, ModelPrices } from "@amber/core";
import { count, defined, isRecord } from "./model_facts.ts";

/** Imports the price table's module. */
export type PriceTableLoader = () => Promise<unknown>;

/** What the catalog uses of the package: its two lookups. */
interface PriceTable {
  findProvider(options: { providerId: string }): unknown;
  calcPrice(usage: Record<string, number>, model: string, options: PriceOptions): unknown;
}

interface PriceOptions {
  providerId: string;
  timestamp: Date;
}

/**
 * Keeps the price table's answer for one model between processes. `scope` names the table's
 * version and the day (the table's prices change on dates), so an answer is used again only
 * within the day and the version it came from. What it recalls is checked again: it may come
 * from a file anyone could have edited.
 */
export interface PriceMemo {
  /** What was kept under `key` in `scope`: the answer, `null` for "no such model", or undefined. */
  recall(scope: string, key: string): Promise<unknown>;
  /** Keeps `value` under `key` in `scope`; what other scopes kept may be dropped. */
  keep(scope: string, key: string, value: unknown): Promise<void>;
}

let provided: PriceTableLoader | undefined;
// What names the provided table's version for a memo; none: its answers are not kept.
let providedVersion: string | undefined;
let table: Promise<PriceTable | undefined> | undefined;

/**
 * Registers a literal import of the price table. A single-file build (a bundle, `deno compile`)
 * cannot follow the computed specifier the catalog loads it by, so its entry hands over
 * `() => import("@pydantic/genai-prices")`, with the build's `version`: a {@linkcode PriceMemo}
 * keeps the table's answers only under a version (without one, as for a stand-in table in a
 * test, nothing is kept or recalled).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { providePriceTable, resolveModelInfo } from "@amber/providers/model-catalog";
 * providePriceTable(() => import("@pydantic/genai-prices"));
 * const info = await resolveModelInfo({ name: "gemini", catalog: "google" }, "gemini-3.5-flash");
 * assert.deepEqual(info.sources, ["price-table"]);
 * assert.equal(info.prices?.output, 9);
 * ```
 */
export function providePriceTable(loader: PriceTableLoader, version?: string): void {
  provided = loader;
  providedVersion = version;
  table = undefined;
}

function priceTable(): Promise<PriceTable | undefined> {
  table ??= loadTable();
  return table;
}

async function loadTable(): Promise<PriceTable | undefined> {
  try {
    const module: unknown = provided === undefined
      ? await import(import.meta.resolve("@pydantic/genai-prices"))
      : await provided();
    if (
      isRecord(module) && typeof module.findProvider === "function" &&
      typeof module.calcPrice === "function"
    ) return module as unknown as PriceTable;
  } catch {
    // Without the table the catalog has one layer fewer, never an error.
  }
  return undefined;
}

/** The table's provider `catalog` (a models.dev id, which the table shares), if it has it. */
function providerOf(priced: PriceTable, catalog: string): Record<string, unknown> | undefined {
  const provider = priced.findProvider({ providerId: catalog });
  // The table falls back to other providers for ids it lacks; only an exact one describes it.
  return isRecord(provider) && provider.id === catalog && Array.isArray(provider.models)
    ? provider
    : undefined;
}

/**
 * What the table says of `model` at `catalog`, by the table's own matching (dated and aliased
 * ids find their model), with the prices in force `at`; undefined when it has no such model.
 */
export async function priceTableModel(
  catalog: string,
  model: string,
  at: Date = new Date(),
  memo?: PriceMemo,
): Promise<ModelInfo | undefined> {
  const scope = memo === undefined ? undefined : memoScope(at);
  const key = `${catalog}/${model}`;
  if (memo !== undefined && scope !== undefined) {
    const kept = await memo.recall(scope, key).catch(() => undefined);
    if (kept === null) return undefined;
    const info = keptInfo(kept, model);
    if (info !== undefined) return info;
  }
  const priced = await priceTable();
  if (priced === undefined) return undefined;
  const info = providerOf(priced, catalog) === undefined
    ? undefined
    : lookUp(priced, catalog, model, at)?.info;
  if (memo !== undefined && scope !== undefined) {
    await memo.keep(scope, key, info ?? null).catch(() => {});
  }
  return info;
}

// The table's version and the day in UTC; undefined when the version cannot be named (then
// nothing is kept). The package's path names its version (`.../@pydantic+genai-prices@0.1.8/...`
// in a node_modules folder, `.../genai-prices/0.1.8/...` in Deno's cache), so every copy of amber
// with the same table (a clone, the installed command) shares one scope.
function memoScope(at: Date): string | undefined {
  let version: string;
  try {
    if (provided !== undefined && providedVersion === undefined) return undefined;
    version = providedVersion ?? tableVersion(import.meta.resolve("@pydantic/genai-prices"));
  } catch {
    return undefined;
  }
  return `${version} ${at.toISOString().slice(0, 10)}`;
}

function tableVersion(url: string): string {
  const version = /genai-prices[@/](\d+\.\d+\.\d+[\w.+-]*)\//.exec(url)?.[1];
  return version === undefined ? url : `genai-prices@${version}`;
}

// A kept answer, if it has the shape `lookUp` gives; anything else is looked up again.
function keptInfo(kept: unknown, model: string): ModelInfo | undefined {
  if (!isRecord(kept) || !Array.isArray(kept.sources)) return undefined;
  const contextWindow = count(kept.contextWindow);
  const prices = isRecord(kept.prices) ? modelPrices(kept.prices, KEPT_NAMES) : undefined;
  return {
    id: model,
    ...(typeof kept.name === "string" && kept.name !== "" ? { name: kept.name } : {}),
    ...(contextWindow === undefined ? {} : { contextWindow }),
    ...(prices === undefined ? {} : { prices }),
    sources: ["price-table"],
  };
}

/**
 * The table's figures for a whole catalog, sorted by id: for each of `known` (the models.dev
 * snapshot's ids) the table's entry that matches it, under that id, and then every entry none of
 * them matched, under the table's own id; a model is listed once, whichever way it is spelled.
 * Prices are those in force `at`.
 */
export async function priceTableModels(
  catalog: string,
  known: readonly string[] = [],
  at: Date = new Date(),
): Promise<readonly ModelInfo[]> {
  const priced = await priceTable();
  const provider = priced === undefined ? undefined : providerOf(priced, catalog);
  if (priced === undefined || provider === undefined) return [];
  const models: ModelInfo[] = [];
  const covered = new Set<string>();
  for (const id of known) {
    const found = lookUp(priced, catalog, id, at);
    if (found === undefined) continue;
    covered.add(found.entry);
    models.push(found.info);
  }
  const listed = new Set(known);
  for (const entry of provider.models as unknown[]) {
    if (!isRecord(entry) || typeof entry.id !== "string") continue;
    if (covered.has(entry.id) || listed.has(entry.id)) continue;
    const found = lookUp(priced, catalog, entry.id, at);
    // An entry whose id another entry's pattern catches first is priced as that one.
    if (found !== undefined && !covered.has(found.entry)) {
      covered.add(found.entry);
      models.push({ ...found.info, id: entry.id });
    }
  }
  return models.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

// The table's figures for `model`, and the id of the table's entry that matched it.
function lookUp(
  priced: PriceTable,
  catalog: string,
  model: string,
  at: Date,
): { info: ModelInfo; entry: string } | undefined {
  let result: unknown;
  try {
    result = priced.calcPrice({}, model, { providerId: catalog, timestamp: at });
  } catch {
    return undefined;
  }
  if (!isRecord(result) || !isRecord(result.model)) return undefined;
  const found = result.model;
  const prices = isRecord(result.model_price) ? modelPrices(result.model_price) : undefined;
  const contextWindow = count(found.context_window);
  const info: ModelInfo = {
    id: model,
    ...(typeof found.name === "string" && found.name !== "" ? { name: found.name } : {}),
    ...(contextWindow === undefined ? {} : { contextWindow }),
    ...(prices === undefined ? {} : { prices }),
    sources: ["price-table"],
  };
  return { info, entry: typeof found.id === "string" ? found.id : model };
}

// The table's names for the four prices, and ours (what a memo keeps).
const TABLE_NAMES = {
  input: "input_mtok",
  output: "output_mtok",
  cacheRead: "cache_read_mtok",
  cacheWrite: "cache_write_mtok",
} as const;
const KEPT_NAMES = {
  input: "input",
  output: "output",
  cacheRead: "cacheRead",
  cacheWrite: "cacheWrite",
} as const;

// Dollars per million tokens, each field read under `names`. A tiered price (more per token past
// a prompt size) is its first tier: amber prices a model at one rate.
function modelPrices(
  price: Record<string, unknown>,
  names: Record<keyof ModelPrices, string> = TABLE_NAMES,
): ModelPrices | undefined {
  return defined({
    input: rate(price[names.input]),
    output: rate(price[names.output]),
    cacheRead: rate(price[names.cacheRead]),
    cacheWrite: rate(price[names.cacheWrite]),
  });
}

function rate(value: unknown): number | undefined {
  const base = isRecord(value) ? value.base : value;
  return typeof base === "number" && Number.isFinite(base) && base >= 0 ? base : undefined;
}
