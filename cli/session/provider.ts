/**
 * The provider as a session holds it, and the account readouts a status bar shows for it. This
 * is the one place a provider is resolved from the command line and config.yaml: a session
 * resolves once when it opens and again only when it is switched; the host's own status
 * snapshot (`amber status`, with no session) asks here too.
 *
 * @module
 */

import {
  type AllowanceSnapshot,
  emptyStatusSnapshot,
  type PluginRuntime,
  type Registries,
  type StatusSnapshot,
} from "@amber/core";
import {
  accountSettings,
  type EnvReader,
  type ProviderHost,
  type ProviderOverrides,
  type ResolvedProvider,
  resolveProvider,
} from "../provider_settings.ts";

/** How resolving a provider went: the provider, or the error that says why not. */
export type ProviderResolution =
  | { readonly ok: true; readonly resolved: ResolvedProvider }
  | { readonly ok: false; readonly error: Error };

/**
 * Resolves the provider `overrides` and config.yaml name; a problem (an unknown preset, a plugin
 * that is off, a bad URL) is returned, not thrown, so that a session can still open and say so,
 * and a status bar can show no account instead of failing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { resolveProviderFor } from "./provider.ts";
 * const configDir = await Deno.makeTempDir();
 * const host = await openHost({ configDir, thirdParty: false });
 * const ollama = resolveProviderFor(host, { provider: "ollama" }, () => undefined);
 * assert.equal(ollama.ok && ollama.resolved.settings.baseUrl, "http://127.0.0.1:11434/v1");
 * assert.equal(resolveProviderFor(host, { provider: "nope" }).ok, false);
 * await host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export function resolveProviderFor(
  host: ProviderHost,
  overrides: ProviderOverrides,
  env?: EnvReader,
): ProviderResolution {
  try {
    return { ok: true, resolved: resolveProvider(host, overrides, env) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/**
 * The status snapshot for a provider: the model, the effort, and the cached wallet and
 * allowance readouts of its account (empty when the provider has no wallet, or no allowance was
 * ever recorded for it). Without a provider, only the model asked for.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRegistries } from "@amber/registries";
 * import { providerSnapshot } from "./provider.ts";
 * const snapshot = providerSnapshot(createRegistries(), undefined, "some-model");
 * assert.equal(snapshot.model, "some-model");
 * assert.equal(snapshot.wallet, "");
 * ```
 */
export function providerSnapshot(
  registries: Registries,
  resolved: ResolvedProvider | undefined,
  model: string,
): StatusSnapshot {
  const base = emptyStatusSnapshot();
  // A provider that cannot be used shows no account; what uses it says why.
  if (resolved === undefined) return { ...base, model, wallet: "", allowance: "" };
  const request = accountSettings(resolved);
  const { wallet, allowance } = registries;
  const hasWallet = wallet.entries().some((entry) => entry.id === request.provider);
  return {
    ...base,
    model: resolved.model,
    reasoningEffort: resolved.reasoningEffort ?? "",
    wallet: hasWallet ? wallet.readout(request) : "",
    allowance: allowance.snapshot(request) === undefined ? "" : allowance.readout(request),
  };
}

/** What reads an allowance from a response's headers (a `ProviderClient` does). */
export interface AllowanceReader {
  /** The allowance the headers tell of; a sandboxed plugin's dialect answers later. */
  allowanceFromHeaders(
    headers: Headers,
  ): AllowanceSnapshot | undefined | Promise<AllowanceSnapshot | undefined>;
}

/**
 * A run's `onResponse`: records the allowance each response's headers tell of for the
 * provider's account, where the status bar's readout finds it. A reader that fails is reported
 * as a diagnostic of `core`, the way the kernel reports a thrown one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { resolveProvider } from "../provider_settings.ts";
 * import { allowanceRecorder } from "./provider.ts";
 * const configDir = await Deno.makeTempDir();
 * const host = await openHost({ configDir });
 * const resolved = resolveProvider(host, { provider: "ollama" }, () => undefined);
 * const snapshot = { windows: [] };
 * allowanceRecorder(host, resolved, { allowanceFromHeaders: () => snapshot })(200, new Headers());
 * const request = { provider: "ollama", baseUrl: resolved.settings.baseUrl };
 * assert.deepEqual(host.registries.allowance.snapshot(request), snapshot);
 * await host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export function allowanceRecorder(
  host: { readonly registries: Registries; readonly runtime: PluginRuntime },
  resolved: ResolvedProvider,
  reader: AllowanceReader,
): (status: number, headers: Headers) => void {
  const record = (snapshot: AllowanceSnapshot | undefined): void => {
    if (snapshot !== undefined) {
      host.registries.allowance.record(accountSettings(resolved), snapshot);
    }
  };
  return (_status, headers) => {
    const snapshot = reader.allowanceFromHeaders(headers);
    if (snapshot instanceof Promise) {
      snapshot.then(record, (error: Error) =>
        host.runtime.report({
          pluginId: "core",
          where: "reading the response headers",
          message: error.message,
          error,
        }));
    } else record(snapshot);
  };
}
