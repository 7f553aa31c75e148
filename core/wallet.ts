/**
 * Wallets: a provider's account balance. The plugin supplies the fetch; the runtime owns
 * polling, caching and rendering.
 *
 * @module
 */

import type { OwnedRegistry } from "./registry.ts";

/**
 * What a wallet or allowance fetch receives: the live provider settings at the time of the poll.
 */
export interface AccountRequest {
  /** The preset in use. */
  readonly provider: string;
  /** The base URL in use. */
  readonly baseUrl: string;
  /** The key, when one is set. Never cached, logged or rendered. */
  readonly apiKey?: string;
  /** Aborted when the registry is disposed. */
  readonly signal: AbortSignal;
}

/**
 * A wallet capability. `fetch` returns the balance, or undefined when there is nothing honest to
 * report; it may reject, which reads as undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { WalletCapability } from "@amber/core";
 * const wallet: WalletCapability = {
 *   kind: "wallet",
 *   name: "balance",
 *   provider: "deepseek",
 *   currency: "USD",
 *   fetch: (request) => Promise.resolve(request.apiKey ? 12.34 : undefined),
 * };
 * const signal = new AbortController().signal;
 * const request = { provider: "deepseek", baseUrl: "https://api.deepseek.com", signal };
 * assert.equal(await wallet.fetch(request), undefined);
 * assert.equal(await wallet.fetch({ ...request, apiKey: "sk-1" }), 12.34);
 * ```
 */
export interface WalletCapability {
  /** The dispatch key. */
  readonly kind: "wallet";
  /** Unique within the plugin. */
  readonly name: string;
  /** The preset whose account this reads. */
  readonly provider: string;
  /** ISO 4217 code of the amount; USD when absent. */
  readonly currency?: string;
  /** Reads the balance. */
  fetch(request: AccountRequest): Promise<number | undefined>;
}

/**
 * The wallet registry contract.
 */
export interface WalletRegistry extends OwnedRegistry<WalletCapability> {
  /**
   * Polls the wallet of `request.provider` unless a poll is already in flight; the host calls
   * it at turn boundaries. Resolves when that poll settles.
   */
  refresh(request: Omit<AccountRequest, "signal">): Promise<void>;
  /** The balance for these settings as text: `$12.34`, or `-` when unknown. Pure. */
  readout(request: Omit<AccountRequest, "signal">): string;
  /** The cached balance for these settings, if any. */
  amount(request: Omit<AccountRequest, "signal">): number | undefined;
  /** Stops: polls still in flight are aborted and their results dropped. */
  dispose(): void;
}
