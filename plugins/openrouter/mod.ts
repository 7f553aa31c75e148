/**
 * The OpenRouter provider: the `openrouter` preset (OpenAI-compatible, so no dialect) and a
 * wallet that reads what is left of the key's credit limit.
 *
 * @module
 */

import { type AccountRequest, exact, type Plugin } from "@amber/core";
import { at, getAccountJson, joinUrl, numberOf, providerPlugin } from "../_provider.ts";

/**
 * Reads the remaining credit limit of the key: `GET {baseUrl}/key` answers
 * `{data: {limit, limit_remaining, usage, ...}}`. A key without a limit has `limit_remaining:
 * null`: it can spend without bound, which is no balance to show, so that reads as undefined,
 * as does a missing key or any failure. A real 0 is 0.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fetchOpenrouterBalance } from "@amber/plugins/openrouter";
 * const signal = new AbortController().signal;
 * const request = { provider: "openrouter", baseUrl: "https://openrouter.ai/api/v1", signal };
 * assert.equal(await fetchOpenrouterBalance(request), undefined); // no key: nothing is asked
 * ```
 */
export async function fetchOpenrouterBalance(
  request: AccountRequest,
): Promise<number | undefined> {
  const body = await getAccountJson(request, joinUrl(request.baseUrl, "/key"));
  return numberOf(at(body, "data", "limit_remaining"));
}

/**
 * Creates the openrouter plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createOpenrouterPlugin } from "@amber/plugins/openrouter";
 * const kinds = createOpenrouterPlugin().capabilities().map((c) => c.kind);
 * assert.deepEqual(kinds, ["provider", "wallet"]);
 * ```
 */
export function createOpenrouterPlugin(): Plugin {
  return providerPlugin({
    id: "openrouter",
    name: "OpenRouter",
    description: "OpenRouter's OpenAI-compatible gateway, with the key's remaining credit.",
    bound: { presets: exact("openrouter"), wallets: exact("openrouter") },
    capabilities: [
      {
        kind: "provider",
        name: "openrouter",
        flavor: "openai",
        presets: [{
          name: "openrouter",
          flavor: "openai",
          baseUrl: "https://openrouter.ai/api/v1",
          defaultModel: "openai/gpt-5.5",
          requiresKey: true,
          keyEnv: "OPENROUTER_API_KEY",
          catalog: "openrouter",
          images: true,
        }],
      },
      {
        kind: "wallet",
        name: "balance",
        provider: "openrouter",
        currency: "USD",
        fetch: fetchOpenrouterBalance,
      },
    ],
  });
}
