/**
 * The allowance registry: subscription and quota windows (rolling 5-hour sessions, weekly caps,
 * monthly credits). Same model as wallets: the plugin supplies the fetch, this registry polls,
 * caches and renders.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createAllowanceRegistry } from "@amber/registries/allowances";
 *
 * const allowances = createAllowanceRegistry();
 * const settings = { provider: "opencode_go", baseUrl: "https://opencode.ai/zen/go/v1" };
 * assert.equal(allowances.readout(settings), "-");
 * allowances.dispose();
 * ```
 *
 * @module
 */

import type {
  AllowanceCapability,
  AllowanceRegistry,
  AllowanceSnapshot,
  AllowanceWindow,
  InstallResult,
  PluginServices,
  RegistryEntry,
} from "@amber/core";
import { AccountBook, type AccountSettings } from "./_account.ts";

/**
 * Options of {@linkcode createAllowanceRegistry}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   type AllowanceRegistryOptions,
 *   createAllowanceRegistry,
 * } from "@amber/registries/allowances";
 * import { EventBus, type PluginServices } from "@amber/core";
 *
 * const options: AllowanceRegistryOptions = { pollTimeoutMs: 20 };
 * const allowances = createAllowanceRegistry(options);
 * const services: PluginServices = {
 *   owner: "stuck",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * let aborted = false;
 * allowances.install("stuck", {
 *   kind: "allowance",
 *   name: "usage",
 *   provider: "stuck",
 *   // Never settles: after 20 ms the poll reads as nothing to report and its signal aborts.
 *   fetch: (request) =>
 *     new Promise(() => request.signal.addEventListener("abort", () => aborted = true)),
 * }, services);
 * const settings = { provider: "stuck", baseUrl: "http://127.0.0.1:1" };
 * await allowances.refresh(settings);
 * assert.equal(allowances.readout(settings), "-");
 * assert.equal(aborted, true);
 * allowances.dispose();
 * ```
 */
export interface AllowanceRegistryOptions {
  /**
   * How long a poll may take before it reads as "nothing to report" and its signal is aborted;
   * 30 s by default.
   */
  readonly pollTimeoutMs?: number;
}

function finite(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function optionalString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

// Keeps what can be shown honestly: windows without a label are dropped, and a percentage that
// is not a finite number of at least 0 becomes unknown rather than a guess.
function acceptWindow(raw: unknown): AllowanceWindow | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const window = raw as Record<string, unknown>;
  const label = window.label;
  if (typeof label !== "string" || label === "") return undefined;
  const percentUsed = window.percentUsed;
  const resetsAt = optionalString(window.resetsAt);
  return Object.freeze({
    label,
    ...(finite(percentUsed) && percentUsed >= 0 ? { percentUsed } : {}),
    ...(resetsAt === undefined ? {} : { resetsAt }),
    ...(finite(window.remaining) ? { remaining: window.remaining } : {}),
    ...(finite(window.entitlement) ? { entitlement: window.entitlement } : {}),
  });
}

function accept(raw: unknown): AllowanceSnapshot | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const snapshot = raw as Record<string, unknown>;
  if (!Array.isArray(snapshot.windows)) return undefined;
  const windows: AllowanceWindow[] = [];
  for (const item of snapshot.windows) {
    const window = acceptWindow(item);
    if (window !== undefined) windows.push(window);
  }
  const plan = optionalString(snapshot.plan);
  const unit = optionalString(snapshot.unit);
  const currency = optionalString(snapshot.currency);
  return Object.freeze({
    ...(plan === undefined ? {} : { plan }),
    windows: Object.freeze(windows),
    ...(finite(snapshot.creditsBalance) ? { creditsBalance: snapshot.creditsBalance } : {}),
    ...(unit === undefined ? {} : { unit }),
    ...(currency === undefined ? {} : { currency }),
  });
}

// The window closest to stopping the user: the most used, and of equally used ones the shortest
// label, which is the shortest window ("5h" before "weekly").
function closest(snapshot: AllowanceSnapshot): AllowanceWindow | undefined {
  let best: AllowanceWindow | undefined;
  for (const window of snapshot.windows) {
    if (window.percentUsed === undefined) continue;
    if (
      best === undefined || window.percentUsed > best.percentUsed! ||
      (window.percentUsed === best.percentUsed && window.label.length < best.label.length)
    ) {
      best = window;
    }
  }
  return best;
}

/**
 * Creates an allowance registry.
 *
 * One allowance per provider: a second one for the same provider fails and names both plugins.
 * Polling, the one-poll-in-flight rule, the cache keyed by provider, base URL and a salted key
 * fingerprint, `dispose()` and removal behave exactly as in the wallet registry. The snapshot a
 * fetch returns is checked: anything without a `windows` list reads as unknown, windows without
 * a label are dropped, and a `percentUsed` that is not a finite number of at least 0 is treated
 * as unknown. `readout` shows the closest affecting window, the one with the highest
 * `percentUsed` (ties go to the shortest label), as `5h 42%` with the percentage rounded;
 * windows with no known percentage are not candidates, and when none is left, or nothing honest
 * was fetched, it shows `-`.
 *
 * `record(settings, snapshot)` feeds in what a model response said about the account (the
 * kernel passes `dialect.allowanceFromHeaders(response.headers)`, such as Anthropic's unified
 * 5h/7d utilization headers). It is checked like a fetched snapshot and cached under the same
 * key (provider, base URL, key fingerprint), so `readout` and `snapshot` show it for exactly
 * those settings, also for a provider that has no allowance capability. An undefined or
 * unusable snapshot changes nothing; a later poll replaces it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createAllowanceRegistry } from "@amber/registries/allowances";
 * import { EventBus, type PluginServices } from "@amber/core";
 *
 * const services: PluginServices = {
 *   owner: "opencode_go",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * const allowances = createAllowanceRegistry();
 * allowances.install("opencode_go", {
 *   kind: "allowance",
 *   name: "usage",
 *   provider: "opencode_go",
 *   fetch: () =>
 *     Promise.resolve({
 *       windows: [{ label: "weekly", percentUsed: 30 }, { label: "5h", percentUsed: 41.6 }],
 *     }),
 * }, services);
 * const settings = { provider: "opencode_go", baseUrl: "https://opencode.ai/zen/go/v1" };
 * await allowances.refresh(settings);
 * assert.equal(allowances.readout(settings), "5h 42%");
 *
 * // Learnt from a response's headers, for a provider with no allowance capability.
 * const claude = { provider: "anthropic", baseUrl: "https://api.anthropic.com", apiKey: "sk-a" };
 * allowances.record(claude, {
 *   windows: [{ label: "5h", percentUsed: 12 }, { label: "7d", percentUsed: 30 }],
 * });
 * assert.equal(allowances.readout(claude), "7d 30%");
 * allowances.dispose();
 * ```
 */
export function createAllowanceRegistry(
  options: AllowanceRegistryOptions = {},
): AllowanceRegistry {
  const book = new AccountBook<AllowanceCapability, AllowanceSnapshot>(
    { kind: "allowance", accept },
    options.pollTimeoutMs,
  );
  return {
    install(
      owner: string,
      capability: AllowanceCapability,
      services: PluginServices,
    ): InstallResult {
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
      const value = book.peek(settings);
      const window = value === undefined ? undefined : closest(value);
      return window === undefined ? "-" : `${window.label} ${Math.round(window.percentUsed!)}%`;
    },
    snapshot(settings: AccountSettings): AllowanceSnapshot | undefined {
      return book.peek(settings);
    },
    record(settings: AccountSettings, snapshot: AllowanceSnapshot | undefined): void {
      book.record(settings, snapshot);
    },
    dispose(): void {
      book.dispose();
    },
  };
}
