/**
 * Reading what a provider's `/models` answer says of each model beyond its id: the context
 * window, the output limit, prices and abilities, in whichever of the common shapes the server
 * speaks (OpenAI-compatible servers and gateways, Gemini, Anthropic).
 *
 * @module
 */

import type { ModelAbilities, ModelInfo, ModelPrices } from "@amber/core";

/**
 * The models a `/models` body lists, each with the figures it gives: OpenAI-compatible bodies
 * (`data[].id`, with `context_length`, `context_window`, `max_context_length`, `max_model_len`
 * or llama.cpp's `meta.n_ctx_train` for the window, `top_provider.max_completion_tokens` or
 * `max_completion_tokens` for the output limit, and OpenRouter's per-token `pricing` strings,
 * turned into dollars per million), Gemini's (`models[].name` without `models/`,
 * `inputTokenLimit`, `outputTokenLimit`) and Anthropic's (`data[].id`, `max_input_tokens`,
 * `max_tokens`). Figures that are missing, not numbers or not positive are left unknown; every
 * model has the source `provider`.
 *
 * @throws {SyntaxError} when the body is not JSON.
 * @throws {TypeError} when it holds neither `data` nor `models` as a list.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseModelFacts } from "@amber/providers/model-catalog";
 * const body = JSON.stringify({
 *   data: [{
 *     id: "vendor/coder",
 *     context_length: 131072,
 *     pricing: { prompt: "0.0000004", completion: "0.0000016" },
 *   }],
 * });
 * assert.deepEqual(parseModelFacts(body), [{
 *   id: "vendor/coder",
 *   contextWindow: 131072,
 *   prices: { input: 0.4, output: 1.6 },
 *   sources: ["provider"],
 * }]);
 * ```
 */
export function parseModelFacts(body: string): ModelInfo[] {
  const parsed: unknown = JSON.parse(body);
  if (!isRecord(parsed)) throw new TypeError("the models listing is not a JSON object");
  if (Array.isArray(parsed.models)) return parsed.models.flatMap(geminiModel);
  if (Array.isArray(parsed.data)) return parsed.data.flatMap(listedModel);
  throw new TypeError("the models listing has neither `data` nor `models`");
}

// Gemini: `models/gemini-2.5-pro`, limits as numbers, `thinking` for reasoning models.
function geminiModel(entry: unknown): ModelInfo[] {
  if (!isRecord(entry) || typeof entry.name !== "string") return [];
  const methods = entry.supportedGenerationMethods;
  // Embedding models and the like cannot chat; the dialect's plain listing leaves them out too.
  if (Array.isArray(methods) && !methods.includes("generateContent")) return [];
  const id = entry.name.replace(/^models\//, "");
  if (id === "") return [];
  return [info(id, {
    name: text(entry.displayName),
    contextWindow: count(entry.inputTokenLimit),
    maxOutput: count(entry.outputTokenLimit),
    abilities: { reasoning: typeof entry.thinking === "boolean" ? entry.thinking : undefined },
  })];
}

// One `data[]` entry: an OpenAI-compatible server's, a gateway's, or Anthropic's.
function listedModel(entry: unknown): ModelInfo[] {
  if (!isRecord(entry) || typeof entry.id !== "string" || entry.id === "") return [];
  const meta = isRecord(entry.meta) ? entry.meta : {};
  const top = isRecord(entry.top_provider) ? entry.top_provider : {};
  const contextWindow = count(entry.context_length) ?? count(entry.context_window) ??
    count(entry.max_context_length) ?? count(entry.max_model_len) ??
    count(entry.max_input_tokens) ?? count(meta.n_ctx_train) ?? count(top.context_length);
  const maxOutput = count(top.max_completion_tokens) ?? count(entry.max_completion_tokens) ??
    count(entry.max_tokens);
  return [info(entry.id, {
    name: text(entry.display_name) ?? text(entry.name),
    contextWindow,
    maxOutput,
    prices: isRecord(entry.pricing) ? perMillion(entry.pricing) : undefined,
    abilities: abilitiesOf(entry),
  })];
}

// OpenRouter lists `supported_parameters` and `architecture.input_modalities`; Mistral says
// `capabilities: {function_calling, vision}`. Anything else says nothing of abilities.
function abilitiesOf(entry: Record<string, unknown>): ModelAbilities | undefined {
  const parameters = Array.isArray(entry.supported_parameters)
    ? entry.supported_parameters
    : undefined;
  const architecture = isRecord(entry.architecture) ? entry.architecture : {};
  const inputs = Array.isArray(architecture.input_modalities)
    ? architecture.input_modalities
    : undefined;
  const capabilities = isRecord(entry.capabilities) ? entry.capabilities : {};
  return {
    tools: parameters?.includes("tools") ?? flag(capabilities.function_calling),
    reasoning: parameters?.includes("reasoning") ?? flag(capabilities.reasoning),
    images: inputs?.includes("image") ?? flag(capabilities.vision),
  };
}

// OpenRouter prices tokens in dollars per token, as decimal strings ("0.000003"); a negative
// price marks a router whose price depends on the model it picks, which is no price.
function perMillion(pricing: Record<string, unknown>): ModelPrices {
  const price = (value: unknown): number | undefined => {
    const perToken = typeof value === "string" && value.trim() !== ""
      ? Number(value)
      : typeof value === "number"
      ? value
      : NaN;
    if (!Number.isFinite(perToken) || perToken < 0) return undefined;
    // Twelve significant digits drop the binary noise of the multiplication (3e-6 * 1e6).
    return Number((perToken * 1_000_000).toPrecision(12));
  };
  return {
    input: price(pricing.prompt),
    output: price(pricing.completion),
    cacheRead: price(pricing.input_cache_read),
    cacheWrite: price(pricing.input_cache_write),
  };
}

interface Figures {
  readonly name?: string | undefined;
  readonly contextWindow?: number | undefined;
  readonly maxOutput?: number | undefined;
  readonly prices?: ModelPrices | undefined;
  readonly abilities?: ModelAbilities | undefined;
}

// A ModelInfo without the figures that are unknown, so that a merge never overwrites a known
// figure with an absent one.
function info(id: string, figures: Figures): ModelInfo {
  const prices = defined(figures.prices);
  const abilities = defined(figures.abilities);
  return {
    id,
    ...(figures.name === undefined ? {} : { name: figures.name }),
    ...(figures.contextWindow === undefined ? {} : { contextWindow: figures.contextWindow }),
    ...(figures.maxOutput === undefined ? {} : { maxOutput: figures.maxOutput }),
    ...(prices === undefined ? {} : { prices }),
    ...(abilities === undefined ? {} : { abilities }),
    sources: ["provider"],
  };
}

/** `value` without its undefined fields, or undefined when none is left. */
export function defined<T extends object>(value: T | undefined): T | undefined {
  if (value === undefined) return undefined;
  const kept = Object.entries(value).filter(([, field]) => field !== undefined);
  return kept.length === 0 ? undefined : Object.fromEntries(kept) as T;
}

/** A positive whole number of tokens, or undefined. */
export function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/** A boolean, or undefined. */
export function flag(value: unknown): boolean | undefined {
  return typeof value === "boolean" ? value : undefined;
}

/** Whether `value` is a JSON object (not null, not a list). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
