/**
 * Allowances: subscription and quota windows. Same model as wallets: the plugin supplies the
 * fetch, the runtime polls, caches and renders.
 *
 * @module
 */

import type { OwnedRegistry } from "./registry.ts";
import type { AccountRequest } from "./wallet.ts";

/**
 * One quota window.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { AllowanceWindow } from "@amber/core";
 * const window: AllowanceWindow = { label: "5h", percentUsed: 42, resetsAt: "2026-11-30T09:00:00Z" };
 * assert.equal(window.percentUsed, 42);
 * ```
 */
export interface AllowanceWindow {
  /** "5h", "7d", "monthly". */
  readonly label: string;
  /** 0 to 100; absent when unknown. */
  readonly percentUsed?: number;
  /** ISO 8601, when known. */
  readonly resetsAt?: string;
  /** Count or credits left, when known. */
  readonly remaining?: number;
  /** The window's size in the same unit, when known. */
  readonly entitlement?: number;
}

/** An account's windows. */
export interface AllowanceSnapshot {
  /** The plan's name, when known. */
  readonly plan?: string;
  /** The windows. */
  readonly windows: readonly AllowanceWindow[];
  /** A credits balance, when the plan has one. */
  readonly creditsBalance?: number;
  /** The unit of `remaining` and `entitlement`. */
  readonly unit?: string;
  /** The currency of `creditsBalance`. */
  readonly currency?: string;
}

/**
 * An allowance capability.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { AllowanceCapability } from "@amber/core";
 * const allowance: AllowanceCapability = {
 *   kind: "allowance",
 *   name: "usage",
 *   provider: "opencode_go",
 *   fetch: () => Promise.resolve({ windows: [{ label: "5h", percentUsed: 12 }] }),
 * };
 * const snapshot = await allowance.fetch({
 *   provider: "opencode_go",
 *   baseUrl: "https://example.invalid",
 *   signal: new AbortController().signal,
 * });
 * assert.deepEqual(snapshot, { windows: [{ label: "5h", percentUsed: 12 }] });
 * ```
 */
export interface AllowanceCapability {
  /** The dispatch key. */
  readonly kind: "allowance";
  /** Unique within the plugin. */
  readonly name: string;
  /** The preset whose account this reads. */
  readonly provider: string;
  /** Reads the windows; undefined (or a rejection) when there is nothing honest to report. */
  fetch(request: AccountRequest): Promise<AllowanceSnapshot | undefined>;
}

/**
 * The allowance registry contract.
 */
export interface AllowanceRegistry extends OwnedRegistry<AllowanceCapability> {
  /** Polls unless a poll is in flight; the host calls it at turn boundaries. */
  refresh(request: Omit<AccountRequest, "signal">): Promise<void>;
  /** The closest affecting window as text (`5h 42%`), or `-`. Pure. */
  readout(request: Omit<AccountRequest, "signal">): string;
  /** The cached snapshot for these settings, if any. */
  snapshot(request: Omit<AccountRequest, "signal">): AllowanceSnapshot | undefined;
  /**
   * Stores a snapshot learnt passively (a dialect's `allowanceFromHeaders` on a model response)
   * as if a poll for these settings had returned it, whether or not the provider has an
   * allowance capability. An undefined or unusable snapshot changes nothing: a response without
   * the headers says nothing new.
   */
  record(
    request: Omit<AccountRequest, "signal">,
    snapshot: AllowanceSnapshot | undefined,
  ): void;
  /** Stops: polls in flight are aborted and their results dropped. */
  dispose(): void;
}
