/**
 * What the pickers and the argument completion of `/model`, `/provider` and `/resume` offer: the
 * provider's models (its own listing merged with the model catalog, as `amber models` shows
 * them, each with its context window and price; the catalog's alone, and why, when the provider
 * cannot be asked), the provider presets (with whether their key is set), and the saved
 * sessions, newest first. Each list is a row per item for a picker and a value with a line of
 * help for the drawer.
 *
 * @module
 */

import type { AmberConfig, ModelInfo } from "@amber/core";
import { listSessions, type SessionSummary } from "@amber/core/kernel";
import { modelCatalog } from "@amber/providers/model-catalog";
import { ProviderClient, ProviderError } from "@amber/providers/client";
import type { ProviderHost, ProviderOverrides } from "../provider_settings.ts";
import { dollars } from "../session/figures.ts";
import { resolveProviderFor } from "../session/provider.ts";
import type { ArgumentEntry } from "./drawer.ts";
import type { PickerItem } from "./picker.ts";

// A picker is a quick look: a provider slower than this is reported, not waited for.
const LISTING_DEADLINE_MS = 5_000;

/** One list, as a picker shows it and as the drawer completes from it. */
export interface PickList {
  /** The picker's rows, in order. */
  readonly items: readonly PickerItem[];
  /** The drawer's values, in the same order. */
  readonly values: readonly ArgumentEntry[];
  /** What is missing from it, and why (the provider could not be asked...). */
  readonly notes: readonly string[];
}

/** What the model list needs of the session. */
export interface ModelSource {
  /** The host: presets, flavors and `config.yaml`'s `models:`. */
  readonly host: ProviderHost & { readonly config: Pick<AmberConfig, "models"> };
  /** The provider and model the session was switched to. */
  readonly overrides: ProviderOverrides;
  /** The model in use. */
  readonly model: string;
}

/** The picker's column titles for models. */
export const MODEL_HEADER: readonly string[] = ["model", "context", "$/M in", "$/M out"];

/**
 * The models of the session's provider: what its `/models` lists (within a few seconds),
 * merged with the model catalog; the catalog's models alone, with a note saying why, when the
 * provider has no key or cannot be reached. The model in use is marked.
 */
export async function modelList(source: ModelSource): Promise<PickList> {
  const resolution = resolveProviderFor(source.host, source.overrides);
  if (!resolution.ok) return { items: [], values: [], notes: [resolution.error.message] };
  const { preset, settings, keyEnv } = resolution.resolved;
  const notes: string[] = [];
  let listed: ModelInfo[] | undefined;
  const ownService = settings.baseUrl === preset.baseUrl.replace(/\/+$/, "");
  if (settings.apiKey !== undefined || !preset.requiresKey || !ownService) {
    const client = new ProviderClient(resolution.resolved.flavor.dialect(), settings, {
      timeoutMs: LISTING_DEADLINE_MS,
      retry: { maxAttempts: 1 },
    });
    try {
      listed = await client.listModelFacts();
    } catch (error) {
      // A provider's own errors say what went wrong (401, offline); anything else is a bug.
      if (!(error instanceof ProviderError)) throw error;
      const why = error.message;
      notes.push(`${preset.name} could not list its models (${why}); the catalog's are shown`);
    }
  } else {
    const why = keyEnv === undefined ? `${preset.name} needs a key` : `${keyEnv} is not set`;
    notes.push(`${why}, so ${preset.name} was not asked; the catalog's models are shown`);
  }
  let models = await modelCatalog(preset, { overrides: source.host.config.models, listed });
  if (listed !== undefined && !ownService) {
    // Another server at the preset's name (a proxy, one's own): only what it serves.
    const served = new Set(listed.map((info) => info.id));
    models = models.filter((info) => served.has(info.id));
  }
  if (!models.some((info) => info.id === source.model)) {
    models = [...models, { id: source.model, sources: [] }];
  }
  return modelRows(models, source.model, notes);
}

/**
 * Models as rows: name (the one in use marked), context window, and $ per million input and
 * output tokens, `-` where unknown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { modelRows } from "./pick_lists.ts";
 * const list = modelRows([
 *   { id: "big", contextWindow: 400_000, prices: { input: 1.25, output: 10 }, sources: [] },
 *   { id: "local", sources: [] },
 * ], "local");
 * assert.deepEqual(list.items.map((item) => item.columns), [
 *   ["big", "400,000", "1.25", "10"],
 *   ["local (in use)", "-", "-", "-"],
 * ]);
 * assert.deepEqual(list.values[0], { value: "big", help: "400,000 tokens · $1.25 / $10 per M" });
 * ```
 */
export function modelRows(
  models: readonly ModelInfo[],
  current: string,
  notes: readonly string[] = [],
): PickList {
  const sorted = [...models].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const items = sorted.map((info): PickerItem => ({
    value: info.id,
    columns: [
      info.id === current ? `${info.id} (in use)` : info.id,
      tokens(info.contextWindow),
      price(info.prices?.input),
      price(info.prices?.output),
    ],
    current: info.id === current,
  }));
  const values = sorted.map((info) => {
    const parts: string[] = [];
    if (info.contextWindow !== undefined) parts.push(`${tokens(info.contextWindow)} tokens`);
    if (info.prices?.input !== undefined && info.prices.output !== undefined) {
      parts.push(`$${price(info.prices.input)} / $${price(info.prices.output)} per M`);
    }
    if (info.id === current) parts.push("in use");
    return { value: info.id, help: parts.join(" · ") };
  });
  return { items, values, notes };
}

/** The picker's column titles for providers. */
export const PROVIDER_HEADER: readonly string[] = ["provider", "key", "default model"];

/**
 * The provider presets, each with whether its key is set (or that it needs none) and its
 * default model; the one in use marked.
 */
export function providerList(host: ProviderHost, current: string): PickList {
  const presets = [...host.registries.provider.presets()].sort((a, b) => a.name < b.name ? -1 : 1);
  const items: PickerItem[] = [];
  const values: ArgumentEntry[] = [];
  for (const preset of presets) {
    const resolution = resolveProviderFor(host, { provider: preset.name });
    const resolved = resolution.ok ? resolution.resolved : undefined;
    const key = !preset.requiresKey
      ? "no key needed"
      : resolved?.keySet
      ? `${resolved.keyEnv ?? "key"} set`
      : `${resolved?.keyEnv ?? "a key"} not set`;
    const model = resolved?.model ?? "-";
    const inUse = preset.name === current;
    items.push({
      value: preset.name,
      columns: [inUse ? `${preset.name} (in use)` : preset.name, key, model],
      current: inUse,
    });
    values.push({ value: preset.name, help: `${key} · ${model}${inUse ? " · in use" : ""}` });
  }
  return { items, values, notes: [] };
}

/** The picker's column titles for sessions. */
export const SESSION_HEADER: readonly string[] = [
  "session",
  "date",
  "steps",
  "model",
  "cost",
  "first prompt",
];

/**
 * The saved sessions under `configDir`, newest first, but for `current` (the one in use: there
 * is nothing to resume in it).
 */
export async function sessionList(configDir: string, current?: string): Promise<PickList> {
  return sessionRows((await listSessions(configDir)).filter((s) => s.id !== current));
}

/**
 * Sessions as rows: id, date, steps, model, cost where known, first prompt (or the problem
 * reading it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sessionRows } from "./pick_lists.ts";
 * const list = sessionRows([{
 *   id: "s1", created: "2026-12-01T10:20:30.000Z", steps: 3, title: "fix the tests",
 *   model: "gpt-5", cost: 0.0421, compactions: 0,
 * }]);
 * assert.deepEqual(list.items[0].columns, ["s1", "2026-12-01 10:20", "3", "gpt-5", "$0.042", "fix the tests"]);
 * assert.deepEqual(list.values[0], { value: "s1", help: "2026-12-01 10:20 · 3 steps · fix the tests" });
 * ```
 */
export function sessionRows(sessions: readonly SessionSummary[]): PickList {
  const items: PickerItem[] = [];
  const values: ArgumentEntry[] = [];
  for (const s of sessions) {
    const date = s.created.slice(0, 16).replace("T", " ");
    const cost = s.cost === undefined || !Number.isFinite(s.cost) ? "-" : dollars(s.cost);
    const title = s.problem ? `(${s.problem}) ${s.title}` : s.title;
    items.push({
      value: s.id,
      columns: [s.id, date, String(s.steps), s.model ?? "-", cost, title],
    });
    values.push({ value: s.id, help: `${date} · ${s.steps} steps · ${title}` });
  }
  return { items, values, notes: [] };
}

function tokens(count: number | undefined): string {
  return count === undefined ? "-" : count.toLocaleString("en-US");
}

// Four significant digits show every real price exactly ($0.075, $3, $18.75) without float noise.
function price(value: number | undefined): string {
  return value === undefined ? "-" : String(Number(value.toPrecision(4)));
}
