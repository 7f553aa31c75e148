/**
 * The models an editor may pick for an ACP session, as values of the `model` config option:
 * every model the model catalog has for the provider in use (the snapshot shipped with amber and
 * `config.yaml`'s `models:`, as `amber models` shows them, without asking the provider) but those
 * it says cannot call tools, and the default model of each other provider preset that can be
 * used as configured (its key is set, or it needs none). A value names the preset and the model,
 * `anthropic/claude-sonnet-4-6`; a model id may hold slashes of its own, the preset's name does
 * not.
 *
 * Picking one switches the session through `setProvider` and `setModel`, so the session stays
 * the one place the provider is resolved; a turn that is running keeps the model it started
 * with, and the switch applies from the next prompt.
 *
 * @module
 */

import { RequestError, type SessionConfigSelectOption } from "@agentclientprotocol/sdk";
import type { ModelInfo } from "@amber/core";
import { modelCatalog } from "@amber/providers/model-catalog";
import { DEFAULT_PROVIDER, type EnvReader } from "../provider_settings.ts";
import { type AgentSession, resolveProviderFor } from "../session/mod.ts";

/**
 * The value naming `model` of preset `provider`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { modelValue } from "./model_options.ts";
 * assert.equal(modelValue("groq", "openai/gpt-oss-120b"), "groq/openai/gpt-oss-120b");
 * ```
 */
export function modelValue(provider: string, model: string): string {
  return `${provider}/${model}`;
}

/**
 * The value naming the model the session uses. A session whose provider could not be resolved
 * names the preset config.yaml (or amber's default) would use.
 */
export function currentModelValue(session: AgentSession): string {
  const provider = session.provider || session.host.config.provider || DEFAULT_PROVIDER;
  return modelValue(provider, session.model);
}

/**
 * The models the editor may pick for `session`, the one in use always among them; `env` reads
 * the keys that decide which other presets are offered (`Deno.env.get` by default).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { AgentSession } from "@amber/cli/session";
 * import { modelChoices } from "./model_options.ts";
 * const configDir = await Deno.makeTempDir();
 * const env = (name: string) => name === "ANTHROPIC_API_KEY" ? "sk-ant-example" : undefined;
 * const session = await AgentSession.open({
 *   openHost: (services) => openHost({ ...services, configDir, workspace: configDir }),
 *   overrides: { provider: "anthropic" },
 *   env,
 * });
 * const values = (await modelChoices(session, env)).map((choice) => choice.value);
 * assert.ok(values.includes("anthropic/claude-sonnet-4-6"));
 * // ollama needs no key; openai's key is not set, so it is not offered.
 * assert.ok(values.some((value) => value.startsWith("ollama/")));
 * assert.ok(!values.some((value) => value.startsWith("openai/")));
 * session.close();
 * await session.host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export async function modelChoices(
  session: AgentSession,
  env?: EnvReader,
): Promise<SessionConfigSelectOption[]> {
  const { host } = session;
  const current = currentModelValue(session);
  const provider = current.slice(0, current.indexOf("/"));
  const choices = new Map<string, SessionConfigSelectOption>();
  for (const info of await catalogOf(session, provider)) {
    // amber's turns call tools: a model the catalog says cannot is not offered.
    if (info.abilities?.tools === false) continue;
    choices.set(modelValue(provider, info.id), choice(provider, info.id, described(info)));
  }
  if (!choices.has(current)) choices.set(current, choice(provider, session.model));
  for (const preset of host.registries.provider.presets()) {
    if (preset.name === provider) continue;
    const resolution = resolveProviderFor(host, { provider: preset.name }, env);
    if (!resolution.ok) continue;
    const { keySet, model } = resolution.resolved;
    if (preset.requiresKey && !keySet) continue;
    choices.set(
      modelValue(preset.name, model),
      choice(preset.name, model, `${preset.name}'s default model`),
    );
  }
  return [...choices.values()];
}

/**
 * Switches `session` to the model `value` names, one of `choices`; any other value is the
 * editor's error, an invalid-params error naming it.
 */
export function switchModel(
  session: AgentSession,
  value: string,
  choices: readonly SessionConfigSelectOption[],
): void {
  if (!choices.some((known) => known.value === value)) {
    throw RequestError.invalidParams(
      { configId: "model", value },
      `unknown model '${value}'; the model option lists the ones there are`,
    );
  }
  if (value === currentModelValue(session)) return;
  const slash = value.indexOf("/");
  const provider = value.slice(0, slash);
  const model = value.slice(slash + 1);
  if (provider !== session.provider) session.setProvider(provider);
  if (model !== session.model) session.setModel(model);
}

// Each session's catalogs, by provider and service: merging a large one takes tens of
// milliseconds, and every option request lists the models.
const catalogs = new WeakMap<AgentSession, Map<string, Promise<readonly ModelInfo[]>>>();

// The catalog of the provider in use. Its snapshot describes the preset's own service; at
// another base URL only config.yaml's models are known without asking that server. A catalog
// that cannot be read offers no models of its own: the picker still has the one in use and the
// other presets' defaults.
function catalogOf(session: AgentSession, provider: string): Promise<readonly ModelInfo[]> {
  const { host } = session;
  const preset = host.registries.provider.preset(provider);
  if (preset === undefined) return Promise.resolve([]);
  const baseUrl = session.account()?.baseUrl;
  const ownService = baseUrl === undefined || baseUrl === preset.baseUrl.replace(/\/+$/, "");
  const key = `${provider}\n${ownService}`;
  let known = catalogs.get(session);
  if (known === undefined) catalogs.set(session, known = new Map());
  let catalog = known.get(key);
  if (catalog === undefined) {
    const overrides = host.config.models;
    catalog = modelCatalog(ownService ? preset : { name: preset.name }, { overrides })
      .catch(() => {
        known.delete(key);
        return [];
      });
    known.set(key, catalog);
  }
  return catalog;
}

function choice(provider: string, model: string, description?: string): SessionConfigSelectOption {
  const value = modelValue(provider, model);
  return description === undefined ? { value, name: value } : { value, name: value, description };
}

// What the catalog says of a model, in a few words: its window and its prices.
function described(info: ModelInfo): string | undefined {
  const parts: string[] = [];
  if (info.contextWindow !== undefined) {
    parts.push(`${info.contextWindow.toLocaleString("en-US")}-token window`);
  }
  const prices = info.prices;
  if (prices?.input !== undefined && prices.output !== undefined) {
    parts.push(`$${dollars(prices.input)}/$${dollars(prices.output)} per M tokens in/out`);
  }
  return parts.length === 0 ? undefined : parts.join(", ");
}

// Four significant digits show every real price exactly ($0.075, $3, $18.75) without float noise.
function dollars(price: number): string {
  return String(Number(price.toPrecision(4)));
}
