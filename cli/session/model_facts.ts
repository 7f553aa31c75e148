/**
 * What a session knows of the models it used: the catalog's figures (window, prices,
 * abilities) of each provider and model, learned once each and kept, so that switching back and
 * forth costs nothing and the provider's `/models` is asked at most once per model, in the
 * background.
 *
 * @module
 */

import type { AmberConfig, ModelInfo } from "@amber/core";
import {
  type CatalogPreset,
  type PriceMemo,
  resolveModelInfo,
  type ResolveModelOptions as ResolveOptions,
} from "@amber/providers/model-catalog";

/** How long the provider's `/models` answer is waited for, ms: as long as `amber models` does. */
const LIST_TIMEOUT_MS = 5_000;

/** What {@linkcode ModelFacts.learn} asks the provider for: its models with their figures. */
export interface ModelLister {
  /** The provider's models as the catalog reads them (a `ProviderClient` is one). */
  listModelFacts(signal?: AbortSignal): Promise<readonly ModelInfo[]>;
}

/**
 * The catalog's figures of the models a session used, by provider and model.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ModelFacts } from "./model_facts.ts";
 * const facts = new ModelFacts();
 * const listed = Promise.withResolvers<void>();
 * const lister = {
 *   listModelFacts: async () => {
 *     await listed.promise;
 *     return [{ id: "m", contextWindow: 32768, sources: ["provider" as const] }];
 *   },
 * };
 * assert.deepEqual(facts.known("local", "m"), { id: "m", sources: [] });
 * // What the snapshot and config say comes at once; the listing is not waited for.
 * const overrides = { m: { input: 0, output: 0 } };
 * const info = await facts.learn({ name: "local" }, "m", lister, { overrides });
 * assert.equal(info.contextWindow, undefined);
 * listed.resolve();
 * await facts.settled();
 * assert.equal(facts.known("local", "m").contextWindow, 32768);
 * // Asked again, it answers with what the listing said.
 * assert.equal((await facts.learn({ name: "local" }, "m", lister)).contextWindow, 32768);
 * ```
 */
/** Where {@linkcode ModelFacts.learn} finds what the catalog cannot say by itself. */
export interface LearnOptions {
  /** config.yaml's `models:` section. */
  readonly overrides?: AmberConfig["models"];
  /** Where the price table's answers are kept between processes. */
  readonly priceMemo?: PriceMemo;
}

export class ModelFacts {
  readonly #pending = new Map<string, Promise<void>>();
  readonly #listing = new Set<Promise<void>>();
  readonly #known = new Map<string, ModelInfo>();

  /**
   * What the shipped snapshot and `options.overrides` (config.yaml's `models:`) say of `model`
   * under `preset`. When neither knows its window, the provider is asked (`lister`, at most 5 s)
   * without waiting: what it answers replaces what {@linkcode ModelFacts.known} says once it
   * arrives, so a turn never waits for a cloud API's model list; a later call answers with it.
   * Never rejects: a model nobody describes has only its id.
   */
  learn(
    preset: CatalogPreset,
    model: string,
    lister: ModelLister,
    learn: LearnOptions = {},
  ): Promise<ModelInfo> {
    const key = keyOf(preset.name, model);
    let pending = this.#pending.get(key);
    if (pending === undefined) {
      const options = {
        ...(learn.overrides === undefined ? {} : { overrides: learn.overrides }),
        ...(learn.priceMemo === undefined ? {} : { priceMemo: learn.priceMemo }),
      };
      pending = resolveModelInfo(preset, model, options).then((info) => {
        this.#known.set(key, info);
        if (info.contextWindow === undefined) this.#list(key, preset, model, lister, options);
      });
      this.#pending.set(key, pending);
    }
    // What is known once the snapshot was read: the listing's answer too, when it came since.
    return pending.then(() => this.known(preset.name, model));
  }

  /** What is known of `model` under the preset `provider` now; only its id before that. */
  known(provider: string, model: string): ModelInfo {
    return this.#known.get(keyOf(provider, model)) ?? { id: model, sources: [] };
  }

  /** Resolves once every listing asked for so far has answered (or failed). */
  async settled(): Promise<void> {
    while (this.#listing.size > 0) await Promise.all(this.#listing);
  }

  #list(
    key: string,
    preset: CatalogPreset,
    model: string,
    lister: ModelLister,
    options: ResolveOptions,
  ): void {
    const listing = resolveModelInfo(preset, model, {
      ...options,
      list: () => lister.listModelFacts(AbortSignal.timeout(LIST_TIMEOUT_MS)),
    }).then((info) => {
      this.#known.set(key, info);
    }).finally(() => this.#listing.delete(listing));
    this.#listing.add(listing);
  }
}

function keyOf(provider: string, model: string): string {
  return `${provider}\n${model}`;
}
