/**
 * `amber models [--provider P] [--json]`: the model catalog's figures for the provider in use
 * (context window, output limit, prices, abilities, and where each came from), with the model in
 * use marked. The snapshot shipped with amber and `config.yaml`'s `models:` are merged with what
 * the provider's `/models` answers, when it can be asked.
 *
 * @module
 */

import type { AmberConfig, ModelInfo } from "@amber/core";
import { modelCatalog, resolveModelInfo } from "@amber/providers/model-catalog";
import { ProviderClient, ProviderError } from "@amber/providers/client";
import { explainRejectedKey, keySourceOf } from "../rejected_key.ts";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import type { ResolvedProvider } from "../provider_settings.ts";
import { resolveProviderFor } from "../session/provider.ts";
import { table } from "../text_table.ts";

// `amber models` is a quick look: a provider slower than this is reported, not waited for.
const LISTING_DEADLINE_MS = 5_000;

/** `amber models`. */
export const modelsCommand: CliCommand = {
  name: "models",
  usage:
    `  models [--json]                 the provider's models: context window, output limit, prices
                                  in $ per million tokens, abilities (snapshot, provider, config)`,
  options: ["provider", "model", "base-url"],
  flags: ["json"],
  run: models,
};

/** What `amber models --json` prints. */
export interface ModelsReport {
  /** The preset in use. */
  readonly provider: string;
  /** Where it is reached. */
  readonly baseUrl: string;
  /** The model in use. */
  readonly model: string;
  /** Every model the catalog has for the provider, sorted by id. */
  readonly models: readonly ModelInfo[];
  /** Why the provider's own listing is missing, when it is. */
  readonly warnings: readonly string[];
}

async function models(context: CommandContext): Promise<number> {
  const { io, words, overrides } = context;
  if (words.length > 0) throw new UsageError("models takes no arguments");
  const host = await context.host();
  const resolution = resolveProviderFor(host, overrides);
  // An unknown preset exits 2, anything else 1: main's to report, as for every command.
  if (!resolution.ok) throw resolution.error;
  const resolved = resolution.resolved;
  const report = await catalogReport(resolved, host.config.models);
  if (context.parsed.switches.has("json")) {
    io.out(JSON.stringify(report, null, 2));
  } else {
    io.out(report.models.length === 0 ? "(no models)" : modelsTable(report));
  }
  for (const warning of report.warnings) io.err(`amber: ${warning}`);
  return 0;
}

// The snapshot describes the preset's own service. At another base URL (a proxy, a server of
// one's own) only the models that server lists are shown, with the figures the catalog has for
// them; if it cannot be asked there is nothing to show, which is an error, not a warning.
async function catalogReport(
  resolved: ResolvedProvider,
  overrides: AmberConfig["models"],
): Promise<ModelsReport> {
  const { preset, settings, model } = resolved;
  const ownService = settings.baseUrl === preset.baseUrl.replace(/\/+$/, "");
  const snapshotShown = ownService && preset.catalog !== undefined;
  const warnings: string[] = [];
  let listed: ModelInfo[] | undefined;
  if (settings.apiKey !== undefined || !preset.requiresKey || !ownService) {
    const client = new ProviderClient(resolved.flavor.dialect(), settings, {
      timeoutMs: LISTING_DEADLINE_MS,
      retry: { maxAttempts: 1 },
    });
    try {
      listed = await client.listModelFacts();
    } catch (caught) {
      // A refused key names its variable, also when the snapshot is shown instead.
      const error = explainRejectedKey(caught, keySourceOf(resolved));
      if (!snapshotShown || !(caught instanceof ProviderError)) throw error;
      warnings.push(`${(error as Error).message}; the snapshot's figures are shown`);
    }
  } else {
    const why = resolved.keyEnv === undefined
      ? `${preset.name} needs a key`
      : `${resolved.keyEnv} is not set`;
    const shown = snapshotShown ? "; the snapshot's figures are shown" : "";
    warnings.push(`${why}, so ${preset.name} was not asked${shown}`);
  }
  let catalog = await modelCatalog(preset, { overrides, listed });
  if (!snapshotShown) {
    const kept = new Set([
      ...(listed ?? []).map((info) => info.id),
      ...Object.keys(overrides ?? {}),
    ]);
    catalog = catalog.filter((info) => kept.has(info.id));
  }
  if (!catalog.some((info) => info.id === model)) {
    const inUse = await resolveModelInfo(preset, model, { overrides });
    catalog = [...catalog, inUse].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }
  return { provider: preset.name, baseUrl: settings.baseUrl, model, models: catalog, warnings };
}

function modelsTable(report: ModelsReport): string {
  return table(
    [
      "model",
      "context",
      "max output",
      "$/M input",
      "output",
      "cache read",
      "cache write",
      "abilities",
      "source",
    ],
    report.models.map((info) => [
      info.id === report.model ? `${info.id} (in use)` : info.id,
      tokens(info.contextWindow),
      tokens(info.maxOutput),
      dollars(info.prices?.input),
      dollars(info.prices?.output),
      dollars(info.prices?.cacheRead),
      dollars(info.prices?.cacheWrite),
      abilities(info),
      info.sources.length === 0 ? "-" : info.sources.join("+"),
    ]),
  );
}

function tokens(count: number | undefined): string {
  return count === undefined ? "-" : count.toLocaleString("en-US");
}

// Four significant digits show every real price exactly ($0.075, $3, $18.75) without float noise.
function dollars(price: number | undefined): string {
  return price === undefined ? "-" : String(Number(price.toPrecision(4)));
}

function abilities(info: ModelInfo): string {
  const { tools, reasoning, images } = info.abilities ?? {};
  const names = [tools && "tools", reasoning && "reasoning", images && "images"].filter(Boolean);
  return names.length === 0 ? "-" : names.join(",");
}
