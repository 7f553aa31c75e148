/**
 * What the bundled provider plugins share: the plugin shell (a provider plugin has no state of
 * its own, only capabilities) and the few careful readers its account fetches need. Private to
 * `@amber/plugins`.
 *
 * @module
 */

import {
  type AccountRequest,
  type Capability,
  type CapabilityBound,
  type Plugin,
  PluginCategory,
} from "@amber/core";
// The subpath, not the package's main module: that one brings every dialect with it.
import { getJsonWithBearer } from "@amber/providers/http-get";

/** What differs between two bundled provider plugins. */
export interface ProviderPluginSpec {
  /** The plugin id. */
  readonly id: string;
  /** The display name. */
  readonly name: string;
  /** One line for the plugin list. */
  readonly description: string;
  /** Exactly the presets, flavors and wallets it contributes. */
  readonly bound: CapabilityBound;
  /** Its capabilities; the same list at every activation. */
  readonly capabilities: readonly Capability[];
}

/**
 * A provider plugin: category `provider`, on by default, nothing to set up or release.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exact } from "@amber/core";
 * import { providerPlugin } from "./_provider.ts";
 * const plugin = providerPlugin({
 *   id: "acme",
 *   name: "Acme",
 *   description: "Acme's OpenAI-compatible API.",
 *   bound: { presets: exact("acme") },
 *   capabilities: [{
 *     kind: "provider",
 *     name: "acme",
 *     flavor: "openai",
 *     presets: [{
 *       name: "acme",
 *       flavor: "openai",
 *       baseUrl: "https://api.acme.test/v1",
 *       defaultModel: "acme-1",
 *       requiresKey: true,
 *       keyEnv: "ACME_API_KEY",
 *     }],
 *   }],
 * });
 * assert.equal(plugin.category, "provider");
 * assert.equal(plugin.capabilities().length, 1);
 * ```
 */
export function providerPlugin(spec: ProviderPluginSpec): Plugin {
  const capabilities = Object.freeze([...spec.capabilities]);
  return {
    id: spec.id,
    version: "0.1.0",
    name: spec.name,
    description: spec.description,
    category: PluginCategory.Provider,
    bound: spec.bound,
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => capabilities,
  };
}

/**
 * `path` appended to a base URL, whatever trailing slashes the base URL has.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { joinUrl } from "./_provider.ts";
 * assert.equal(joinUrl("https://openrouter.ai/api/v1/", "/key"), "https://openrouter.ai/api/v1/key");
 * ```
 */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, "")}${path}`;
}

/**
 * The key of an account request, or undefined when there is none worth sending.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyOf } from "./_provider.ts";
 * const signal = new AbortController().signal;
 * assert.equal(keyOf({ provider: "p", baseUrl: "http://x", apiKey: "  ", signal }), undefined);
 * assert.equal(keyOf({ provider: "p", baseUrl: "http://x", apiKey: " sk-1 ", signal }), "sk-1");
 * ```
 */
export function keyOf(request: AccountRequest): string | undefined {
  const key = typeof request?.apiKey === "string" ? request.apiKey.trim() : "";
  return key === "" ? undefined : key;
}

/**
 * GETs an account endpoint as JSON with the request's key and signal, through the core-owned
 * client: undefined without a key, and on any failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { getAccountJson } from "./_provider.ts";
 * const signal = new AbortController().signal;
 * // Without a key nothing is sent.
 * const request = { provider: "p", baseUrl: "http://127.0.0.1:1", signal };
 * assert.equal(await getAccountJson(request, "http://127.0.0.1:1/key"), undefined);
 * ```
 */
export async function getAccountJson(
  request: AccountRequest,
  url: string,
): Promise<unknown> {
  const key = keyOf(request);
  if (key === undefined) return undefined;
  return await getJsonWithBearer(url, key, { signal: request.signal });
}

/**
 * The value at `path` inside parsed JSON, or undefined when any step is missing or not an
 * object (array indices are numbers).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { at } from "./_provider.ts";
 * assert.equal(at({ data: { items: [{ n: 3 }] } }, "data", "items", 0, "n"), 3);
 * assert.equal(at("text", "data"), undefined);
 * ```
 */
export function at(value: unknown, ...path: readonly (string | number)[]): unknown {
  let current = value;
  for (const step of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}

/**
 * A JSON number that is an amount: finite, else undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { numberOf } from "./_provider.ts";
 * assert.deepEqual(
 *   [numberOf(12.5), numberOf(0), numberOf("12.5"), numberOf(null)],
 *   [12.5, 0, undefined, undefined],
 * );
 * ```
 */
export function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

// A plain decimal, as account APIs write amounts in strings: no exponent, no hex, no blanks.
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * An amount sent as a decimal string (`"110.00"`), or as a number; undefined for anything else
 * (an empty string is not zero).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decimalOf } from "./_provider.ts";
 * assert.deepEqual(
 *   [decimalOf("110.00"), decimalOf(" 0.5 "), decimalOf(""), decimalOf("1e3")],
 *   [110, 0.5, undefined, undefined],
 * );
 * ```
 */
export function decimalOf(value: unknown): number | undefined {
  if (typeof value === "number") return numberOf(value);
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  return DECIMAL.test(text) ? Number(text) : undefined;
}

// ISO 4217 codes are three letters.
const CURRENCY = /^[A-Za-z]{3}$/;

/**
 * An ISO 4217 currency code in upper case, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { currencyOf } from "./_provider.ts";
 * assert.deepEqual([currencyOf("cny"), currencyOf("dollars")], ["CNY", undefined]);
 * ```
 */
export function currencyOf(value: unknown): string | undefined {
  return typeof value === "string" && CURRENCY.test(value.trim())
    ? value.trim().toUpperCase()
    : undefined;
}
