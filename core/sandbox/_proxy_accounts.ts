// A sandboxed plugin's wallets and allowances: each fetch crosses to the plugin process
// (`wallet.fetch`, `allowance.fetch`) under the `wallet` deadline, with the registry's abort as
// a cancel. The key in use crosses with the request only to the plugin whose provider it is (a
// preset of its own by that name), since its fetch needs it to read that account; a wallet for
// another plugin's provider is asked without it, or any plugin could name `openai` and be handed
// the user's OpenAI key. It is never kept here. "Nothing honest to report" crosses as null and is
// `undefined` again here, as is an answer of the wrong shape, so the bar shows `-`.

import type { AllowanceCapability, AllowanceSnapshot } from "../allowance.ts";
import type { AccountRequest, WalletCapability } from "../wallet.ts";
import type { ProxyLink } from "./_proxy_link.ts";
import { type AccountFetchParams, type CapabilityDescriptor, Method } from "./protocol.ts";

type Descriptor<K extends CapabilityDescriptor["kind"]> = Extract<
  CapabilityDescriptor,
  { readonly kind: K }
>;

/** The host's wallet for a `wallet` descriptor. */
export function proxyWallet(
  descriptor: Descriptor<"wallet">,
  link: ProxyLink,
  ownsProvider: (provider: string) => boolean,
): WalletCapability {
  const { name, provider, currency } = descriptor;
  const what = `wallet '${name}' of plugin '${link.pluginId}'`;
  return {
    kind: "wallet",
    name,
    provider,
    ...(currency === undefined ? {} : { currency }),
    fetch: async (request) => {
      const asked = params(name, request, ownsProvider);
      const amount = await link.call(Method.walletFetch, asked, "wallet", what, {
        signal: request.signal,
      });
      return typeof amount === "number" && Number.isFinite(amount) ? amount : undefined;
    },
  };
}

/** The host's allowance for an `allowance` descriptor. */
export function proxyAllowance(
  descriptor: Descriptor<"allowance">,
  link: ProxyLink,
  ownsProvider: (provider: string) => boolean,
): AllowanceCapability {
  const { name, provider } = descriptor;
  const what = `allowance '${name}' of plugin '${link.pluginId}'`;
  return {
    kind: "allowance",
    name,
    provider,
    fetch: async (request) => {
      const method = Method.allowanceFetch;
      const asked = params(name, request, ownsProvider);
      const snapshot = await link.call(method, asked, "wallet", what, {
        signal: request.signal,
      });
      return isSnapshot(snapshot) ? snapshot : undefined;
    },
  };
}

function params(
  name: string,
  request: AccountRequest,
  ownsProvider: (provider: string) => boolean,
): AccountFetchParams {
  const { provider, baseUrl, apiKey } = request;
  const key = apiKey !== undefined && ownsProvider(provider) ? { apiKey } : {};
  return { name, request: { provider, baseUrl, ...key } };
}

function isSnapshot(value: unknown): value is AllowanceSnapshot {
  return typeof value === "object" && value !== null &&
    Array.isArray((value as { windows?: unknown }).windows);
}
