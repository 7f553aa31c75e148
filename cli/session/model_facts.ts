/**
 * What a session knows of the models it used: the catalog's figures (window, prices,
 * abilities) of each provider and model, learned once each and kept, so that switching back and
 * forth costs nothing and the provider's `/models` is asked at most once per model.
 *
 * @module
 */

import type { AmberConfig, ModelInfo } from "@amber/core";
import { type CatalogPreset, resolveModelInfo } from "@amber/providers/model-catalog";

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
 * const lister = { listModelFacts: () => Promise.reject(new Error("offline")) };
 * assert.deepEqual(facts.known("local", "m"), { id: "m", sources: [] });
 * const info = await facts.learn({ name: "local" }, "m", lister, { m: { contextWindow: 8192 } });
 * assert.equal(info.contextWindow, 8192);
 * assert.equal(facts.known("local", "m").contextWindow, 8192);
 * ```
 */
export class ModelFacts {
  readonly #pending = new Map<string, Promise<ModelInfo>>();
  readonly #known = new Map<string, ModelInfo>();

  /**
   * What the catalog says of `model` under `preset`: the shipped snapshot, `overrides`
   * (config.yaml's `models:`) and, when neither knows the window, what `lister` answers (waited
   * for at most 5 s). Never rejects: a model nobody describes has only its id.
   */
  async learn(
    preset: CatalogPreset,
    model: string,
    lister: ModelLister,
    overrides: AmberConfig["models"],
  ): Promise<ModelInfo> {
    const key = keyOf(preset.name, model);
    let pending = this.#pending.get(key);
    if (pending === undefined) {
      pending = resolveModelInfo(preset, model, {
        ...(overrides === undefined ? {} : { overrides }),
        list: () => lister.listModelFacts(AbortSignal.timeout(LIST_TIMEOUT_MS)),
      });
      this.#pending.set(key, pending);
    }
    const info = await pending;
    this.#known.set(key, info);
    return info;
  }

  /** What was learned of `model` under the preset `provider`; only its id before that. */
  known(provider: string, model: string): ModelInfo {
    return this.#known.get(keyOf(provider, model)) ?? { id: model, sources: [] };
  }
}

function keyOf(provider: string, model: string): string {
  return `${provider}\n${model}`;
}
