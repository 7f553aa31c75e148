/**
 * Providers: the presets a plugin offers and the wire protocols (flavors) it may bring.
 *
 * @module
 */

import type { Dialect } from "./dialect.ts";
import type { OwnedRegistry } from "./registry.ts";

/**
 * Builds a dialect; called once per client. It may return a promise: a plugin whose protocol
 * lives in a module of its own imports that module here, so that starting amber, or a session
 * speaking another flavor, never loads it. The client waits for the promise before its first
 * request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { DialectFactory } from "@amber/core";
 * // Loaded when a session uses the flavor, not when the plugin is.
 * const lazy: DialectFactory = async () => (await import("@amber/providers/gemini")).geminiDialect();
 * assert.equal((await lazy()).flavor, "gemini");
 * ```
 */
export type DialectFactory = () => Dialect | Promise<Dialect>;

/**
 * A named way to reach a model service.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Preset } from "@amber/core";
 * const preset: Preset = {
 *   name: "openrouter",
 *   flavor: "openai",
 *   baseUrl: "https://openrouter.ai/api/v1",
 *   defaultModel: "openai/gpt-5",
 *   requiresKey: true,
 *   keyEnv: "OPENROUTER_API_KEY",
 * };
 * assert.equal(preset.flavor, "openai");
 * ```
 */
export interface Preset {
  /** Unique across the harness. */
  readonly name: string;
  /** The wire protocol it speaks. */
  readonly flavor: string;
  /** The API's base URL. */
  readonly baseUrl: string;
  /** The model used when none is chosen. */
  readonly defaultModel: string;
  /** Whether requests need a key. */
  readonly requiresKey: boolean;
  /** The environment variable that holds the key. */
  readonly keyEnv?: string;
  /**
   * Whether its models take images (a tool's screenshot, say). Absent: they do not, and a tool
   * result's images are replaced by a line saying what was left out.
   */
  readonly images?: boolean;
  /**
   * The provider's id in the models.dev catalog (`anthropic`, `google`, ...), where amber's
   * snapshot finds its models' windows and prices. Absent: the snapshot has none.
   */
  readonly catalog?: string;
}

/**
 * A provider capability: presets and, only for a protocol of its own, a dialect factory. A
 * provider that speaks the shared `openai` protocol passes no dialect.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ProviderCapability } from "@amber/core";
 * const provider: ProviderCapability = {
 *   kind: "provider",
 *   name: "groq",
 *   flavor: "openai",
 *   presets: [{
 *     name: "groq",
 *     flavor: "openai",
 *     baseUrl: "https://api.groq.com/openai/v1",
 *     defaultModel: "llama-3.3-70b-versatile",
 *     requiresKey: true,
 *     keyEnv: "GROQ_API_KEY",
 *   }],
 * };
 * assert.deepEqual(provider.presets.map((p) => p.name), ["groq"]);
 * ```
 */
export interface ProviderCapability {
  /** The dispatch key. */
  readonly kind: "provider";
  /** Unique within the plugin. */
  readonly name: string;
  /** The flavor the presets speak. */
  readonly flavor: string;
  /** The dialect of a protocol this plugin owns; absent for a shared protocol. */
  readonly dialect?: DialectFactory;
  /** The presets. */
  readonly presets: readonly Preset[];
}

/** A preset with its owner. */
export interface PresetEntry extends Preset {
  /** The plugin that contributed it, or `core`. */
  readonly owner: string;
}

/** A flavor with its owner. */
export interface FlavorEntry {
  /** The flavor. */
  readonly flavor: string;
  /** The plugin that owns it, or `core`. */
  readonly owner: string;
}

/** How a flavor name resolved. */
export interface ResolvedFlavor {
  /** The flavor asked for. */
  readonly requested: string;
  /** The flavor used: the one asked for, or `openai` when it is unknown. */
  readonly flavor: string;
  /** Whether the unknown-flavor fallback applied. */
  readonly fellBack: boolean;
  /** The plugin that owns the flavor used, or `core`. */
  readonly owner: string;
  /** The dialect factory; what it returns may be a promise (see {@linkcode DialectFactory}). */
  readonly dialect: DialectFactory;
}

/**
 * The provider registry contract.
 */
export interface ProviderRegistry extends OwnedRegistry<ProviderCapability> {
  /** Every preset. */
  presets(): readonly PresetEntry[];
  /** The preset called `name`, if any. */
  preset(name: string): PresetEntry | undefined;
  /** Every flavor with a dialect. */
  flavors(): readonly FlavorEntry[];
  /**
   * Resolves a flavor: a live one as is; one whose plugin was switched off fails loudly with a
   * `FlavorUnavailableError`; an unknown one falls back to the core-owned `openai`.
   */
  resolveFlavor(flavor: string): ResolvedFlavor;
  /** Says that `owner` provides `flavor` even while it is off, so it fails loudly then. */
  claimFlavor(flavor: string, owner: string): void;
}
