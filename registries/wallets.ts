/**
 * The wallet registry: each provider's account balance. A plugin supplies only the fetch; this
 * registry decides when it runs, caches what it returned, and renders it the same way for every
 * provider.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createWalletRegistry } from "@amber/registries/wallets";
 *
 * const wallets = createWalletRegistry();
 * const settings = { provider: "deepseek", baseUrl: "https://api.deepseek.com" };
 * assert.equal(wallets.readout(settings), "-");
 * wallets.dispose();
 * ```
 *
 * @module
 */

import type {
  InstallResult,
  PluginServices,
  RegistryEntry,
  WalletCapability,
  WalletRegistry,
} from "@amber/core";
import { AccountBook, type AccountSettings } from "./_account.ts";

/**
 * Options of {@linkcode createWalletRegistry}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createWalletRegistry, type WalletRegistryOptions } from "@amber/registries/wallets";
 * import { EventBus, type PluginServices } from "@amber/core";
 *
 * const options: WalletRegistryOptions = { pollTimeoutMs: 20 };
 * const wallets = createWalletRegistry(options);
 * const services: PluginServices = {
 *   owner: "stuck",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * let aborted = false;
 * wallets.install("stuck", {
 *   kind: "wallet",
 *   name: "balance",
 *   provider: "stuck",
 *   // Never settles: after 20 ms the poll reads as nothing to report and its signal aborts.
 *   fetch: (request) =>
 *     new Promise(() => request.signal.addEventListener("abort", () => aborted = true)),
 * }, services);
 * const settings = { provider: "stuck", baseUrl: "http://127.0.0.1:1" };
 * await wallets.refresh(settings);
 * assert.equal(wallets.readout(settings), "-");
 * assert.equal(aborted, true);
 * wallets.dispose();
 * ```
 */
export interface WalletRegistryOptions {
  /**
   * How long a poll may take before it reads as "nothing to report" and its signal is aborted;
   * 30 s by default. It keeps a fetch that never settles from blocking every later poll.
   */
  readonly pollTimeoutMs?: number;
}

const CURRENCY = /^[A-Za-z]{3}$/;

function check(capability: WalletCapability): string | undefined {
  const currency = capability.currency;
  if (currency === undefined || (typeof currency === "string" && CURRENCY.test(currency))) {
    return undefined;
  }
  return `has currency ${JSON.stringify(currency)}, which is not an ISO 4217 code`;
}

// Only a finite, non-negative number is a balance; anything else has nothing honest to show.
function accept(raw: unknown): number | undefined {
  return typeof raw === "number" && Number.isFinite(raw) && raw >= 0 ? raw : undefined;
}

function format(amount: number, currency: string | undefined): string {
  const code = (currency ?? "USD").toUpperCase();
  const digits = amount.toFixed(2);
  if (code === "USD") return `$${digits}`;
  if (code === "CNY") return `¥${digits}`;
  return `${digits} ${code}`;
}

/**
 * Creates a wallet registry.
 *
 * One wallet per provider: a second one for the same provider fails and names both plugins.
 * `refresh(settings)` polls the wallet of `settings.provider` (nothing happens when there is
 * none); while a poll for that provider is in flight, refresh returns that poll's promise
 * instead of starting another. The result is cached for the provider, base URL and a salted
 * fingerprint of the key it was fetched with (the key itself is never kept), and `readout` and
 * `amount` show it only while the settings asked about are exactly those: a balance fetched for
 * a previous provider, base URL or key is never shown. A fetch that resolves to undefined, a
 * negative or non-finite number or a non-number, rejects, throws or outlives the poll timeout
 * reads as `-`, never as a made-up zero; a real zero reads `$0.00`. Amounts render as `$12.34`
 * in US dollars (the default currency), `¥12.34` in yuan, and `12.34 EUR` in any other currency.
 * Removing a wallet drops its cache and stops its poll. `dispose()` aborts every poll in flight
 * (the fetch's `signal`), and whatever such a fetch resolves to afterwards changes nothing.
 * `version` moves when wallets are installed or removed, not when a balance arrives: the host
 * learns of that when the `refresh` promise settles.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createWalletRegistry } from "@amber/registries/wallets";
 * import { EventBus, type PluginServices } from "@amber/core";
 *
 * const services: PluginServices = {
 *   owner: "deepseek",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * const wallets = createWalletRegistry();
 * wallets.install("deepseek", {
 *   kind: "wallet",
 *   name: "balance",
 *   provider: "deepseek",
 *   fetch: (request) => Promise.resolve(request.apiKey ? 12.34 : undefined),
 * }, services);
 * const settings = { provider: "deepseek", baseUrl: "https://api.deepseek.com", apiKey: "sk-1" };
 * await wallets.refresh(settings);
 * assert.equal(wallets.readout(settings), "$12.34");
 * assert.equal(wallets.readout({ ...settings, apiKey: "sk-2" }), "-");
 * wallets.dispose();
 * ```
 */
export function createWalletRegistry(options: WalletRegistryOptions = {}): WalletRegistry {
  const book = new AccountBook<WalletCapability, number>(
    { kind: "wallet", check, accept },
    options.pollTimeoutMs,
  );
  return {
    install(owner: string, capability: WalletCapability, services: PluginServices): InstallResult {
      return book.install(owner, capability, services);
    },
    entries(): readonly RegistryEntry[] {
      return book.entries();
    },
    purge(owner: string): readonly string[] {
      return book.purge(owner);
    },
    get version(): number {
      return book.version;
    },
    refresh(settings: AccountSettings): Promise<void> {
      return book.refresh(settings);
    },
    readout(settings: AccountSettings): string {
      const hit = book.lookup(settings);
      return hit === undefined ? "-" : format(hit.value, hit.capability.currency);
    },
    amount(settings: AccountSettings): number | undefined {
      return book.lookup(settings)?.value;
    },
    dispose(): void {
      book.dispose();
    },
  };
}
