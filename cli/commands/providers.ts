/**
 * `amber providers` and `amber wallet` (`amber models` is `models.ts`).
 *
 * @module
 */

import type { AllowanceWindow } from "@amber/core";
import { ProviderClient } from "@amber/providers/client";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import type { Host } from "../host.ts";
import { describeState } from "../plugin_console.ts";
import { accountSettings, type ResolvedProvider } from "../provider_settings.ts";
import { explainRejectedKey, keySourceOf, RejectedKeyError } from "../rejected_key.ts";
import { resolveProviderFor } from "../session/provider.ts";
import { table } from "../text_table.ts";

const PROVIDER_OPTIONS = ["provider", "model", "base-url"];
// How long `amber wallet` waits to learn whether an unreadable balance means a refused key.
const REFUSAL_PROBE_MS = 5_000;

/** `amber providers`. */
export const providersCommand: CliCommand = {
  name: "providers",
  usage: `  providers                       every provider preset (flavor, plugin, base URL, default
                                  model, key variable and whether it is set) and every flavor`,
  options: PROVIDER_OPTIONS,
  run: providers,
};

/** `amber wallet`. */
export const walletCommand: CliCommand = {
  name: "wallet",
  usage: `  wallet                          the provider's account balance and quota windows`,
  options: PROVIDER_OPTIONS,
  run: wallet,
};

async function providers(context: CommandContext): Promise<number> {
  const { io, words, overrides } = context;
  const host = await context.host();
  if (words.length > 0) throw new UsageError("providers takes no arguments");
  const providers = host.registries.provider;
  // config.yaml's apiKeyEnv names the key of config.yaml's provider, so that row shows it.
  const configured = host.config.provider?.trim() || "openai";
  const configKeyEnv = host.config.apiKeyEnv?.trim() || undefined;
  const rows = providers.presets().map((preset) => {
    const keyEnv = (preset.name === configured ? configKeyEnv : undefined) ?? preset.keyEnv;
    // Only whether the variable holds something is shown, never its value.
    const set = keyEnv !== undefined && (Deno.env.get(keyEnv)?.trim() ?? "") !== "";
    const key = keyEnv === undefined
      ? (preset.requiresKey ? "needs apiKeyEnv" : "no key needed")
      : set
      ? "set"
      : preset.requiresKey
      ? "not set"
      : "not set (optional)";
    return [
      preset.name,
      preset.flavor,
      preset.owner,
      preset.baseUrl,
      preset.defaultModel || "-",
      keyEnv ?? "-",
      key,
    ];
  });
  const lines = [
    rows.length === 0 ? "(no providers)" : table(
      ["preset", "flavor", "plugin", "base URL", "default model", "key env", "key"],
      rows,
    ),
    "",
    table(["flavor", "plugin"], flavorRows(host)),
  ];
  const inUse = resolveProviderFor(host, overrides);
  lines.push(
    "",
    inUse.ok
      ? `in use: ${inUse.resolved.preset.name}, model ${inUse.resolved.model}, ${inUse.resolved.settings.baseUrl}`
      : `in use: ${inUse.error.message}`,
  );
  io.out(lines.join("\n"));
  return 0;
}

// The live flavors, then those a plugin that is not active declares: they fail loudly until it
// is switched back on.
function flavorRows(host: Host): string[][] {
  const live = host.registries.provider.flavors();
  const rows = live.map((entry) => [entry.flavor, entry.owner]);
  const seen = new Set(live.map((entry) => entry.flavor));
  for (const view of host.runtime.list()) {
    const bound = view.plugin.bound?.flavors;
    if (bound?.kind !== "exact" || view.state.status === "active") continue;
    for (const flavor of bound.ids) {
      if (seen.has(flavor)) continue;
      seen.add(flavor);
      rows.push([flavor, `${view.plugin.id} (${describeState(view.state)})`]);
    }
  }
  return rows;
}

async function wallet(context: CommandContext): Promise<number> {
  const { io, words, overrides } = context;
  const host = await context.host();
  if (words.length > 0) throw new UsageError("wallet takes no arguments");
  const resolved = providerOrThrow(host, overrides);
  const request = accountSettings(resolved);
  const { wallet: wallets, allowance } = host.registries;
  await Promise.all([wallets.refresh(request), allowance.refresh(request)]);
  const balance = wallets.readout(request);
  const lines = [
    `provider: ${request.provider} (${request.baseUrl})`,
    `balance: ${balance}`,
  ];
  const snapshot = allowance.snapshot(request);
  if (snapshot?.plan) lines.push(`plan: ${snapshot.plan}`);
  if (snapshot?.creditsBalance !== undefined) {
    const unit = snapshot.currency ?? snapshot.unit;
    lines.push(`credits: ${snapshot.creditsBalance}${unit ? ` ${unit}` : ""}`);
  }
  if (snapshot === undefined || snapshot.windows.length === 0) {
    lines.push("windows: -");
  } else {
    for (const window of snapshot.windows) lines.push(describeWindow(window, snapshot.unit));
  }
  io.out(lines.join("\n"));
  if (!resolved.keySet && resolved.preset.requiresKey && resolved.keyEnv !== undefined) {
    io.err(`amber: ${resolved.keyEnv} is not set, so there is no account to read`);
  } else if (balance === "-" && wallets.entries().some((e) => e.id === request.provider)) {
    const refused = await refusedKey(resolved);
    if (refused !== undefined) io.err(`amber: ${refused}`);
  }
  return 0;
}

// A wallet that could not be read says nothing of why. One listing request tells a refused key
// (the usual cause) from the rest, so the user learns which variable to fix.
async function refusedKey(resolved: ResolvedProvider): Promise<string | undefined> {
  const client = new ProviderClient(resolved.flavor.dialect(), resolved.settings, {
    timeoutMs: REFUSAL_PROBE_MS,
    retry: { maxAttempts: 1 },
  });
  try {
    await client.models();
    return undefined;
  } catch (error) {
    const explained = explainRejectedKey(error, keySourceOf(resolved));
    return explained instanceof RejectedKeyError ? explained.message : undefined;
  }
}

function describeWindow(window: AllowanceWindow, unit: string | undefined): string {
  const parts = [
    window.percentUsed === undefined ? "use unknown" : `${Math.round(window.percentUsed)}% used`,
  ];
  if (window.remaining !== undefined) {
    const of = window.entitlement === undefined ? "" : ` of ${window.entitlement}`;
    parts.push(`${window.remaining}${of}${unit ? ` ${unit}` : ""} left`);
  }
  if (window.resetsAt) parts.push(`resets ${window.resetsAt}`);
  return `${window.label}: ${parts.join(", ")}`;
}

// The provider the command line and config.yaml name, resolved where every session resolves it;
// a problem (an unknown preset: exit 2, anything else: exit 1) is main's to report.
function providerOrThrow(host: Host, overrides: CommandContext["overrides"]): ResolvedProvider {
  const resolution = resolveProviderFor(host, overrides);
  if (!resolution.ok) throw resolution.error;
  return resolution.resolved;
}
