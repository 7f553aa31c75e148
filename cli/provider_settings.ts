/**
 * Which provider, model, base URL and key a command uses: the command line first, then
 * config.yaml, then the preset's own defaults. Keys are read from the environment variable the
 * preset (or `apiKeyEnv` in config.yaml) names, and never written anywhere.
 *
 * @module
 */

import {
  type AmberConfig,
  AmberError,
  type PluginRuntime,
  type PresetEntry,
  type ProviderSettings,
  type Registries,
  type ResolvedFlavor,
} from "@amber/core";

/** The provider used when neither the command line nor config.yaml names one. */
export const DEFAULT_PROVIDER = "openai";

/**
 * What the command line says about the provider; each wins over config.yaml.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ProviderOverrides } from "./provider_settings.ts";
 * const overrides: ProviderOverrides = { provider: "ollama", model: "qwen3-coder" };
 * assert.equal(overrides.baseUrl, undefined, "the preset's URL applies");
 * ```
 */
export interface ProviderOverrides {
  /** `--provider`: a preset name. */
  readonly provider?: string;
  /** `--model`. */
  readonly model?: string;
  /** `--base-url`. */
  readonly baseUrl?: string;
  /** `--effort`: the reasoning effort asked of the model. */
  readonly reasoningEffort?: string;
}

/**
 * What provider resolution reads: the registries, the configuration and, to say which plugin a
 * missing preset belongs to, the runtime. A started {@linkcode Host} is one.
 */
export interface ProviderHost {
  /** The registries, for the presets and flavors. */
  readonly registries: Registries;
  /** The configuration. */
  readonly config: AmberConfig;
  /** The runtime, when there is one: it knows the presets of plugins that are off. */
  readonly runtime?: PluginRuntime;
}

/** Reads an environment variable; `Deno.env.get` by default. */
export type EnvReader = (name: string) => string | undefined;

/**
 * A provider ready to use: the preset, its flavor's dialect, where to reach it and with which
 * key, and the model.
 */
export interface ResolvedProvider {
  /** The preset. */
  readonly preset: PresetEntry;
  /** The preset's flavor, resolved to a dialect. */
  readonly flavor: ResolvedFlavor;
  /** The base URL (without a trailing slash) and the key, when one is set. */
  readonly settings: ProviderSettings;
  /** The model. */
  readonly model: string;
  /** The reasoning effort asked of the model (`--effort`, else `reasoningEffort` in config.yaml). */
  readonly reasoningEffort?: string;
  /** The environment variable the key is read from, when there is one. */
  readonly keyEnv?: string;
  /** Whether that variable holds a key. */
  readonly keySet: boolean;
}

/**
 * The provider asked for is not a preset. The message lists the presets there are.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UnknownProviderError } from "./provider_settings.ts";
 * assert.equal(
 *   new UnknownProviderError("nope", ["openai", "ollama"]).message,
 *   "unknown provider 'nope'; presets: openai, ollama",
 * );
 * ```
 */
export class UnknownProviderError extends AmberError {
  /** The name asked for. */
  readonly provider: string;
  /** The presets there are. */
  readonly known: readonly string[];
  /** Creates the error for `provider`, listing the `known` presets. */
  constructor(provider: string, known: readonly string[]) {
    super(
      `unknown provider '${provider}'; presets: ${known.length > 0 ? known.join(", ") : "(none)"}`,
    );
    this.name = "UnknownProviderError";
    this.provider = provider;
    this.known = known;
  }
}

/**
 * The provider asked for is a preset of a plugin that is not active.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProviderUnavailableError } from "./provider_settings.ts";
 * assert.equal(
 *   new ProviderUnavailableError("deepseek", "deepseek").message,
 *   "provider 'deepseek' belongs to plugin 'deepseek', which is off; " +
 *     "turn it on with: amber plugins enable deepseek",
 * );
 * ```
 */
export class ProviderUnavailableError extends AmberError {
  /** The preset asked for. */
  readonly provider: string;
  /** The plugin that contributes it. */
  readonly owner: string;
  /**
   * Creates the error for the preset `provider` of the plugin `owner`, whose state is `state`
   * (`off`, `failed`, `blocked`).
   */
  constructor(provider: string, owner: string, state: string = "off") {
    super(
      state === "off"
        ? `provider '${provider}' belongs to plugin '${owner}', which is off; ` +
          `turn it on with: amber plugins enable ${owner}`
        : `provider '${provider}' belongs to plugin '${owner}', which is ${state}; ` +
          `see: amber plugins info ${owner}`,
    );
    this.name = "ProviderUnavailableError";
    this.provider = provider;
    this.owner = owner;
  }
}

/**
 * A provider setting that cannot work: a base URL that is not an http(s) URL, an empty model.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProviderSettingsError } from "./provider_settings.ts";
 * assert.equal(
 *   new ProviderSettingsError("--base-url 'x' is not an http(s) URL").name,
 *   "ProviderSettingsError",
 * );
 * ```
 */
export class ProviderSettingsError extends AmberError {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "ProviderSettingsError";
  }
}

/**
 * The provider needs a key and none is set.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MissingKeyError } from "./provider_settings.ts";
 * assert.equal(
 *   new MissingKeyError("openai", "OPENAI_API_KEY").message,
 *   "set OPENAI_API_KEY to use provider 'openai'",
 * );
 * ```
 */
export class MissingKeyError extends AmberError {
  /** The preset. */
  readonly provider: string;
  /** The environment variable that should hold the key, when one is named. */
  readonly keyEnv?: string;
  /** Creates the error for `provider`, whose key is read from `keyEnv`. */
  constructor(provider: string, keyEnv: string | undefined) {
    super(
      keyEnv === undefined
        ? `provider '${provider}' needs a key: set apiKeyEnv in config.yaml to the name of ` +
          "the environment variable that holds it"
        : `set ${keyEnv} to use provider '${provider}'`,
    );
    this.name = "MissingKeyError";
    this.provider = provider;
    if (keyEnv !== undefined) this.keyEnv = keyEnv;
  }
}

const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;

const readEnv: EnvReader = (name) => Deno.env.get(name);

/**
 * Resolves the provider a command uses.
 *
 * - provider: `overrides.provider`, else `config.provider`, else `openai`;
 * - base URL: `overrides.baseUrl`, else `config.baseUrl`, else the preset's;
 * - model: `overrides.model`, else `config.model`, else the preset's default;
 * - key: the environment variable `config.apiKeyEnv`, else the preset's `keyEnv`.
 *
 * config.yaml's `baseUrl`, `model` and `apiKeyEnv` describe config.yaml's provider, so they
 * apply only while that is the provider in use: `--provider ollama` does not send an OpenAI
 * model name to a local server.
 *
 * Throws an {@linkcode UnknownProviderError} (listing the presets) for a name no active plugin
 * offers, a {@linkcode ProviderUnavailableError} when the preset's plugin is off, the registry's
 * `FlavorUnavailableError` when the preset's flavor belongs to a plugin that is off, and a
 * {@linkcode ProviderSettingsError} for a base URL that is not http(s). A missing key is not an
 * error here (a local server needs none, and listing models may not): see
 * {@linkcode requireKey}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { resolveProvider } from "./provider_settings.ts";
 * const configDir = await Deno.makeTempDir();
 * const host = await openHost({ configDir });
 * const resolved = resolveProvider(host, { provider: "ollama" }, () => undefined);
 * assert.equal(resolved.settings.baseUrl, "http://127.0.0.1:11434/v1");
 * assert.equal(resolved.keySet, false);
 * await host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export function resolveProvider(
  host: ProviderHost,
  overrides: ProviderOverrides = {},
  env: EnvReader = readEnv,
): ResolvedProvider {
  const config = host.config;
  const providers = host.registries.provider;
  const configured = nonEmpty(config.provider) ?? DEFAULT_PROVIDER;
  const name = nonEmpty(overrides.provider) ?? configured;
  const fromConfig = name === configured;
  const preset = providers.preset(name);
  if (preset === undefined) {
    const off = host.runtime === undefined ? undefined : inactiveOwner(host.runtime, name);
    if (off !== undefined) throw new ProviderUnavailableError(name, off.owner, off.state);
    throw new UnknownProviderError(name, providers.presets().map((p) => p.name));
  }
  const flavor = providers.resolveFlavor(preset.flavor);

  const explicitUrl = nonEmpty(overrides.baseUrl);
  const configUrl = fromConfig ? nonEmpty(config.baseUrl) : undefined;
  const rawUrl = explicitUrl ?? configUrl ?? preset.baseUrl;
  if (!HTTP_URL.test(rawUrl)) {
    const source = explicitUrl !== undefined
      ? "--base-url"
      : configUrl !== undefined
      ? "baseUrl in config.yaml"
      : `the base URL of preset '${preset.name}'`;
    throw new ProviderSettingsError(`${source} '${rawUrl}' is not an http(s) URL`);
  }
  const baseUrl = rawUrl.replace(/\/+$/, "");

  const model = nonEmpty(overrides.model) ?? (fromConfig ? nonEmpty(config.model) : undefined) ??
    preset.defaultModel;
  const keyEnv = (fromConfig ? nonEmpty(config.apiKeyEnv) : undefined) ?? nonEmpty(preset.keyEnv);
  const apiKey = keyEnv === undefined ? undefined : nonEmpty(env(keyEnv)?.trim());
  const reasoningEffort = nonEmpty(overrides.reasoningEffort) ?? nonEmpty(config.reasoningEffort);
  return {
    preset,
    flavor,
    settings: {
      baseUrl,
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(preset.images === true ? { images: true } : {}),
    },
    model,
    ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
    ...(keyEnv === undefined ? {} : { keyEnv }),
    keySet: apiKey !== undefined,
  };
}

/**
 * Checks that a provider which needs a key has one; returns the key. Throws a
 * {@linkcode MissingKeyError} (`set OPENAI_API_KEY to use provider 'openai'`) otherwise. A
 * provider that needs no key passes with whatever key is set, possibly none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { requireKey, resolveProvider } from "./provider_settings.ts";
 * const configDir = await Deno.makeTempDir();
 * const host = await openHost({ configDir });
 * assert.throws(
 *   () => requireKey(resolveProvider(host, { provider: "openai" }, () => undefined)),
 *   { name: "MissingKeyError", message: "set OPENAI_API_KEY to use provider 'openai'" },
 * );
 * await host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export function requireKey(resolved: ResolvedProvider): string | undefined {
  const key = resolved.settings.apiKey;
  if (key === undefined && resolved.preset.requiresKey) {
    throw new MissingKeyError(resolved.preset.name, resolved.keyEnv);
  }
  return key;
}

/**
 * `resolved` with images sent to the model as `images` says: what the model catalog knows of
 * the model (its `abilities.images`) wins over the preset's flag, which stays when the catalog
 * does not know (`undefined`). The same object when nothing changes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { resolveProvider, withImages } from "./provider_settings.ts";
 * const configDir = await Deno.makeTempDir();
 * const host = await openHost({ configDir });
 * const resolved = resolveProvider(host, { provider: "ollama" }, () => undefined);
 * assert.equal(withImages(resolved, true).settings.images, true);
 * assert.equal(withImages(resolved, undefined), resolved);
 * await host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export function withImages(
  resolved: ResolvedProvider,
  images: boolean | undefined,
): ResolvedProvider {
  const wanted = images ?? resolved.preset.images === true;
  if (wanted === (resolved.settings.images === true)) return resolved;
  const { images: _images, ...settings } = resolved.settings;
  return { ...resolved, settings: wanted ? { ...settings, images: true } : settings };
}

/**
 * The account request a wallet or allowance poll and readout use for this provider (without a
 * signal: the registry owns that).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { accountSettings, resolveProvider } from "./provider_settings.ts";
 * const configDir = await Deno.makeTempDir();
 * const host = await openHost({ configDir });
 * const resolved = resolveProvider(host, { provider: "deepseek" }, () => "sk-test");
 * assert.equal(accountSettings(resolved).provider, "deepseek");
 * await host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export function accountSettings(
  resolved: ResolvedProvider,
): { provider: string; baseUrl: string; apiKey?: string } {
  const { baseUrl, apiKey } = resolved.settings;
  return apiKey === undefined
    ? { provider: resolved.preset.name, baseUrl }
    : { provider: resolved.preset.name, baseUrl, apiKey };
}

// The plugin that declares `preset` in an exact bound and is not active, if any: its preset is
// missing because it is off (or failed), which deserves a better answer than "unknown".
function inactiveOwner(
  runtime: PluginRuntime,
  preset: string,
): { owner: string; state: string } | undefined {
  for (const view of runtime.list()) {
    const bound = view.plugin.bound?.presets;
    if (bound?.kind !== "exact" || !bound.ids.includes(preset)) continue;
    const status = view.state.status;
    if (status === "active") continue;
    return {
      owner: view.plugin.id,
      state: status === "disabled" || status === "registered" ? "off" : status,
    };
  }
  return undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}
