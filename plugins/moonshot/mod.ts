/**
 * The Moonshot provider: the `moonshot` preset (Kimi, OpenAI-compatible, so no dialect) and a
 * wallet that reads the available balance.
 *
 * @module
 */

import { type AccountRequest, exact, type Plugin, type WalletCapability } from "@amber/core";
import { at, getAccountJson, joinUrl, numberOf, providerPlugin } from "../_provider.ts";

/**
 * Reads the available balance: `GET {baseUrl}/users/me/balance` answers `{data:
 * {available_balance, voucher_balance, cash_balance}}`. Undefined without a key or on any
 * failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fetchMoonshotBalance } from "@amber/plugins/moonshot";
 * const signal = new AbortController().signal;
 * const request = { provider: "moonshot", baseUrl: "https://api.moonshot.ai/v1", signal };
 * assert.equal(await fetchMoonshotBalance(request), undefined); // no key: nothing is asked
 * ```
 */
export async function fetchMoonshotBalance(
  request: AccountRequest,
): Promise<number | undefined> {
  const body = await getAccountJson(request, joinUrl(request.baseUrl, "/users/me/balance"));
  return numberOf(at(body, "data", "available_balance"));
}

/**
 * The currency a Moonshot platform bills in: yuan on the Chinese one (`api.moonshot.cn`), US
 * dollars on the international one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { moonshotCurrency } from "@amber/plugins/moonshot";
 * assert.equal(moonshotCurrency("https://api.moonshot.cn/v1"), "CNY");
 * assert.equal(moonshotCurrency("https://api.moonshot.ai/v1"), "USD");
 * ```
 */
export function moonshotCurrency(baseUrl: string): string {
  const host = URL.canParse(baseUrl) ? new URL(baseUrl).hostname : "";
  return host === "moonshot.cn" || host.endsWith(".moonshot.cn") ? "CNY" : "USD";
}

/**
 * Creates the moonshot plugin. The wallet's `currency` follows the base URL of the last balance
 * read, which is the only amount the registry shows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMoonshotPlugin } from "@amber/plugins/moonshot";
 * const kinds = createMoonshotPlugin().capabilities().map((c) => c.kind);
 * assert.deepEqual(kinds, ["provider", "wallet"]);
 * ```
 */
export function createMoonshotPlugin(): Plugin {
  let currency = "USD";
  const wallet: WalletCapability = {
    kind: "wallet",
    name: "balance",
    provider: "moonshot",
    get currency(): string {
      return currency;
    },
    async fetch(request: AccountRequest): Promise<number | undefined> {
      const amount = await fetchMoonshotBalance(request);
      if (amount !== undefined) currency = moonshotCurrency(request.baseUrl);
      return amount;
    },
  };
  return providerPlugin({
    id: "moonshot",
    name: "Moonshot",
    description: "Moonshot AI's Kimi API (OpenAI-compatible), with the account balance.",
    bound: { presets: exact("moonshot"), wallets: exact("moonshot") },
    capabilities: [
      {
        kind: "provider",
        name: "moonshot",
        flavor: "openai",
        presets: [{
          name: "moonshot",
          flavor: "openai",
          baseUrl: "https://api.moonshot.ai/v1",
          defaultModel: "kimi-k2.6",
          requiresKey: true,
          keyEnv: "MOONSHOT_API_KEY",
          catalog: "moonshotai",
        }],
      },
      wallet,
    ],
  });
}
