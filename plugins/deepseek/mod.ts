/**
 * The DeepSeek provider: the `deepseek` preset (OpenAI-compatible, so no dialect) and a wallet
 * that reads the account balance, in the currency DeepSeek reports it in.
 *
 * @module
 */

import { type AccountRequest, exact, type Plugin, type WalletCapability } from "@amber/core";
import {
  at,
  currencyOf,
  decimalOf,
  getAccountJson,
  joinUrl,
  providerPlugin,
} from "../_provider.ts";

/** A DeepSeek balance: the amount and its ISO 4217 currency. */
export interface DeepseekBalance {
  /** The total balance. */
  readonly amount: number;
  /** `CNY` or `USD`. */
  readonly currency: string;
}

/**
 * Reads the balance: `GET {baseUrl}/user/balance` answers `{is_available, balance_infos:
 * [{currency, total_balance: "110.00", ...}]}`, amounts as strings. The first entry counts.
 * Undefined without a key, on any failure, and when the amount or its currency cannot be read
 * (an amount in an unknown currency has no honest label).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fetchDeepseekBalance } from "@amber/plugins/deepseek";
 * const signal = new AbortController().signal;
 * const request = { provider: "deepseek", baseUrl: "http://127.0.0.1:1", apiKey: "sk", signal };
 * assert.equal(await fetchDeepseekBalance(request), undefined); // nothing listens there
 * ```
 */
export async function fetchDeepseekBalance(
  request: AccountRequest,
): Promise<DeepseekBalance | undefined> {
  const body = await getAccountJson(request, joinUrl(request.baseUrl, "/user/balance"));
  const info = at(body, "balance_infos", 0);
  const amount = decimalOf(at(info, "total_balance"));
  const currency = currencyOf(at(info, "currency"));
  return amount === undefined || currency === undefined ? undefined : { amount, currency };
}

/**
 * Creates the deepseek plugin.
 *
 * The wallet's `currency` is the one of the last balance read: the registry renders a cached
 * amount with its capability's currency, and it only ever shows the latest poll's amount, so the
 * two always belong together.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createDeepseekPlugin } from "@amber/plugins/deepseek";
 * const wallet = createDeepseekPlugin().capabilities().find((c) => c.kind === "wallet");
 * assert.ok(wallet?.kind === "wallet");
 * assert.equal(wallet.currency, "CNY");
 * ```
 */
export function createDeepseekPlugin(): Plugin {
  let currency = "CNY";
  const wallet: WalletCapability = {
    kind: "wallet",
    name: "balance",
    provider: "deepseek",
    get currency(): string {
      return currency;
    },
    async fetch(request: AccountRequest): Promise<number | undefined> {
      const balance = await fetchDeepseekBalance(request);
      if (balance === undefined) return undefined;
      currency = balance.currency;
      return balance.amount;
    },
  };
  return providerPlugin({
    id: "deepseek",
    name: "DeepSeek",
    description: "DeepSeek's OpenAI-compatible API, with the account balance.",
    bound: { presets: exact("deepseek"), wallets: exact("deepseek") },
    capabilities: [
      {
        kind: "provider",
        name: "deepseek",
        flavor: "openai",
        presets: [{
          name: "deepseek",
          flavor: "openai",
          baseUrl: "https://api.deepseek.com",
          defaultModel: "deepseek-chat",
          requiresKey: true,
          keyEnv: "DEEPSEEK_API_KEY",
          catalog: "deepseek",
        }],
      },
      wallet,
    ],
  });
}
