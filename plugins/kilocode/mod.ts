/**
 * The Kilo Code provider: the `kilocode` preset (Kilo's OpenRouter-compatible gateway, so the
 * shared `openai` protocol) and a wallet that reads the account balance.
 *
 * @module
 */

import { type AccountRequest, exact, type Plugin } from "@amber/core";
import { at, getAccountJson, numberOf, providerPlugin } from "../_provider.ts";

/**
 * Where the balance of the account behind `baseUrl` lives: the gateway sits at
 * `https://api.kilo.ai/api/openrouter` and the balance at `https://api.kilo.ai/api/profile/balance`,
 * so it is the base URL's origin plus `/api/profile/balance` (which also keeps a self-hosted or
 * test gateway pointing at itself). Undefined for a base URL that is not an http(s) URL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { kilocodeBalanceUrl } from "@amber/plugins/kilocode";
 * assert.equal(
 *   kilocodeBalanceUrl("https://api.kilo.ai/api/openrouter"),
 *   "https://api.kilo.ai/api/profile/balance",
 * );
 * ```
 */
export function kilocodeBalanceUrl(baseUrl: string): string | undefined {
  if (typeof baseUrl !== "string" || !URL.canParse(baseUrl)) return undefined;
  const url = new URL(baseUrl);
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  return `${url.origin}/api/profile/balance`;
}

/**
 * Reads the balance: `GET {origin}/api/profile/balance` answers `{balance}`. Undefined without a
 * key or on any failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fetchKilocodeBalance } from "@amber/plugins/kilocode";
 * const signal = new AbortController().signal;
 * const request = { provider: "kilocode", baseUrl: "https://api.kilo.ai/api/openrouter", signal };
 * assert.equal(await fetchKilocodeBalance(request), undefined); // no key: nothing is asked
 * ```
 */
export async function fetchKilocodeBalance(
  request: AccountRequest,
): Promise<number | undefined> {
  const url = kilocodeBalanceUrl(request.baseUrl);
  if (url === undefined) return undefined;
  return numberOf(at(await getAccountJson(request, url), "balance"));
}

/**
 * Creates the kilocode plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createKilocodePlugin } from "@amber/plugins/kilocode";
 * const kinds = createKilocodePlugin().capabilities().map((c) => c.kind);
 * assert.deepEqual(kinds, ["provider", "wallet"]);
 * ```
 */
export function createKilocodePlugin(): Plugin {
  return providerPlugin({
    id: "kilocode",
    name: "Kilo Code",
    description: "Kilo Code's OpenRouter-compatible gateway, with the account balance.",
    bound: { presets: exact("kilocode"), wallets: exact("kilocode") },
    capabilities: [
      {
        kind: "provider",
        name: "kilocode",
        flavor: "openai",
        presets: [{
          name: "kilocode",
          flavor: "openai",
          baseUrl: "https://api.kilo.ai/api/openrouter",
          defaultModel: "anthropic/claude-sonnet-4.6",
          requiresKey: true,
          keyEnv: "KILOCODE_API_KEY",
          // Its gateway takes OpenRouter's model ids, at OpenRouter's prices.
          catalog: "openrouter",
        }],
      },
      {
        kind: "wallet",
        name: "balance",
        provider: "kilocode",
        currency: "USD",
        fetch: fetchKilocodeBalance,
      },
    ],
  });
}
