/**
 * The provider registry: the presets every provider plugin offers, the wire protocols (flavors)
 * some of them bring, and how a flavor name resolves to a dialect.
 *
 * Flavor resolution is state-aware: a live flavor resolves to its dialect; a flavor whose plugin
 * is switched off fails loudly with a {@linkcode FlavorUnavailableError} that says how to turn it
 * on; only a flavor nobody ever provided falls back to the shared `openai` protocol.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createProviderRegistry } from "@amber/registries/providers";
 * import { openaiDialect } from "@amber/providers/openai";
 *
 * const providers = createProviderRegistry({ coreFlavors: { openai: openaiDialect } });
 * assert.equal(providers.resolveFlavor("mystery").flavor, "openai");
 * ```
 *
 * @module
 */

import {
  AmberError,
  type DialectFactory,
  failed,
  type FlavorEntry,
  installed,
  type InstallResult,
  type PluginServices,
  type Preset,
  type PresetEntry,
  type ProviderCapability,
  type ProviderRegistry,
  type RegistryEntry,
  type ResolvedFlavor,
} from "@amber/core";
import { OwnedMap, type OwnedRecord, ownerLabel } from "./_owned.ts";

/**
 * A flavor was asked for whose plugin is switched off. Falling back to another protocol would
 * send the request in the wrong wire format, so this fails loudly instead and says how to fix it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FlavorUnavailableError } from "@amber/registries/providers";
 * const error = new FlavorUnavailableError("gemini", "gemini");
 * assert.equal(
 *   error.message,
 *   "flavor 'gemini' belongs to plugin 'gemini', which is off; " +
 *     "turn it on with: amber plugins enable gemini",
 * );
 * ```
 */
export class FlavorUnavailableError extends AmberError {
  /** The flavor that was asked for. */
  readonly flavor: string;
  /** The plugin that provides it. */
  readonly owner: string;
  /** Creates the error for `flavor`, provided by the plugin `owner`. */
  constructor(flavor: string, owner: string) {
    super(
      `flavor '${flavor}' belongs to plugin '${owner}', which is off; ` +
        `turn it on with: amber plugins enable ${owner}`,
    );
    this.name = "FlavorUnavailableError";
    this.flavor = flavor;
    this.owner = owner;
  }
}

/**
 * Options of {@linkcode createProviderRegistry}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   createProviderRegistry,
 *   type ProviderRegistryOptions,
 * } from "@amber/registries/providers";
 * import { openaiDialect } from "@amber/providers/openai";
 * const options: ProviderRegistryOptions = { coreFlavors: { openai: openaiDialect } };
 * const resolved = createProviderRegistry(options).resolveFlavor("openai");
 * assert.deepEqual([resolved.owner, resolved.fellBack], ["core", false]);
 * assert.equal(resolved.dialect, openaiDialect);
 * ```
 */
export interface ProviderRegistryOptions {
  /**
   * The flavors the core owns (the shared `openai` protocol): fixed for the registry's lifetime,
   * listed with owner `core`, and untouched by any plugin's disable or by `purge("core")`.
   */
  readonly coreFlavors?: Readonly<Record<string, DialectFactory>>;
}

// A live flavor. Presets are stored as their (frozen) PresetEntry directly: one object less per
// install, and `"dialect" in slot` tells the two apart.
interface FlavorSlot {
  readonly entry: FlavorEntry;
  readonly dialect: DialectFactory;
}

type Slot = PresetEntry | FlavorSlot;

type Entry = OwnedRecord<Slot>;

// Flavors share the registry's id space with presets under this prefix, so a plugin called
// `gemini` can have both a preset and a flavor named `gemini`. Preset names cannot contain ':'.
const FLAVOR_ID = "flavor:";
const PRESET_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const FLAVOR_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
// A shape check, not a parse: installing must stay cheap, and the HTTP client reports a URL it
// cannot use when a request is made.
const BASE_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;

function capabilityProblem(capability: ProviderCapability): string | undefined {
  if (typeof capability !== "object" || capability === null) return "is not an object";
  if (capability.kind !== "provider") {
    return `has kind '${String(capability.kind)}', not 'provider'`;
  }
  if (typeof capability.name !== "string" || capability.name.trim() === "") return "has no name";
  if (typeof capability.flavor !== "string" || !FLAVOR_NAME.test(capability.flavor)) {
    return `has flavor ${quote(capability.flavor)}, which is not a valid flavor name`;
  }
  if (capability.dialect !== undefined && typeof capability.dialect !== "function") {
    return "has a dialect that is not a factory function";
  }
  if (!Array.isArray(capability.presets)) return "has no presets list";
  return undefined;
}

function presetProblem(preset: Preset): string | undefined {
  if (typeof preset !== "object" || preset === null) return "is not an object";
  if (typeof preset.flavor !== "string" || preset.flavor === "") return "has no flavor";
  if (typeof preset.baseUrl !== "string") return "has no baseUrl";
  if (preset.baseUrl !== "" && !BASE_URL.test(preset.baseUrl)) {
    return `has baseUrl '${preset.baseUrl}', which is not an http(s) URL`;
  }
  if (typeof preset.defaultModel !== "string") return "has no defaultModel";
  if (typeof preset.requiresKey !== "boolean") return "has a requiresKey that is not a boolean";
  if (preset.keyEnv !== undefined && typeof preset.keyEnv !== "string") {
    return "has a keyEnv that is not a string";
  }
  if (preset.images !== undefined && typeof preset.images !== "boolean") {
    return "has an images that is not a boolean";
  }
  if (preset.catalog !== undefined && typeof preset.catalog !== "string") {
    return "has a catalog that is not a string";
  }
  return undefined;
}

// Built only when an error needs it: installs must stay cheap.
function where(capability: ProviderCapability, owner: string): string {
  return `provider '${capability.name}' of ${ownerLabel(owner)}`;
}

function quote(value: unknown): string {
  return typeof value === "string" ? `'${value}'` : String(value);
}

/**
 * Creates a provider registry.
 *
 * Installing a provider capability for a plugin:
 * - preset names are unique across the harness (letters, digits, `_`, `.`, `-`); a name that is
 *   taken fails and names both plugins;
 * - each preset speaks the capability's flavor, or a flavor that is live right now;
 * - a capability with a dialect registers its flavor; a flavor that core or another plugin
 *   already provides fails and names both owners;
 * - a capability without a dialect only adds presets, so switching its plugin off never takes a
 *   shared protocol down.
 *
 * A contribution's ids are its preset names and, when it brought a dialect, `flavor:<flavor>`;
 * `entries()` lists core flavors first, then every plugin entry in registration order.
 *
 * `resolveFlavor(flavor)`: a live flavor resolves to its dialect; a flavor that is not live but
 * that a plugin provided before (or claimed with `claimFlavor`) throws a
 * {@linkcode FlavorUnavailableError} naming that plugin; any other flavor falls back to `openai`
 * with `fellBack: true`, and throws when there is no `openai` flavor to fall back to.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createProviderRegistry, FlavorUnavailableError } from "@amber/registries/providers";
 * import { EventBus, type PluginServices } from "@amber/core";
 * import { openaiDialect } from "@amber/providers/openai";
 * import { openaiResponsesDialect } from "@amber/providers/openai-responses";
 *
 * const services: PluginServices = {
 *   owner: "openai",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * const providers = createProviderRegistry({ coreFlavors: { openai: openaiDialect } });
 * // The `openai` plugin brings the Responses protocol as its own flavor.
 * const result = providers.install("openai", {
 *   kind: "provider",
 *   name: "openai",
 *   flavor: "openai_responses",
 *   dialect: openaiResponsesDialect,
 *   presets: [{
 *     name: "openai",
 *     flavor: "openai_responses",
 *     baseUrl: "https://api.openai.com/v1",
 *     defaultModel: "gpt-5",
 *     requiresKey: true,
 *   }],
 * }, services);
 * assert.equal(result.status, "installed");
 * assert.equal(providers.resolveFlavor("openai_responses").owner, "openai");
 * providers.purge("openai");
 * assert.throws(() => providers.resolveFlavor("openai_responses"), FlavorUnavailableError);
 * assert.equal(providers.resolveFlavor("other").fellBack, true);
 * ```
 */
export function createProviderRegistry(options: ProviderRegistryOptions = {}): ProviderRegistry {
  const map = new OwnedMap<Slot>();
  // The plugin each flavor was last provided by or claimed for: what makes a missing flavor fail
  // loudly instead of silently speaking `openai` to a server that expects something else.
  const remembered = new Map<string, string>();
  let viewVersion = -1;
  let presetList: readonly PresetEntry[] = [];
  let flavorList: readonly FlavorEntry[] = [];

  for (const [flavor, dialect] of Object.entries(options.coreFlavors ?? {})) {
    if (!FLAVOR_NAME.test(flavor)) throw new TypeError(`core flavor '${flavor}' is not valid`);
    if (typeof dialect !== "function") {
      throw new TypeError(`core flavor '${flavor}' has no dialect factory`);
    }
    map.add(FLAVOR_ID + flavor, "core", {
      entry: Object.freeze({ flavor, owner: "core" }),
      dialect,
    });
  }

  function views(): void {
    if (viewVersion === map.version) return;
    const presets: PresetEntry[] = [];
    const flavors: FlavorEntry[] = [];
    for (const record of map.records()) {
      const slot = record.value;
      if ("dialect" in slot) flavors.push(Object.freeze(slot.entry));
      else presets.push(Object.freeze(slot));
    }
    presetList = Object.freeze(presets);
    flavorList = Object.freeze(flavors);
    viewVersion = map.version;
  }

  // The map key of each flavor, made once: a fresh `flavor:` + name string per lookup would be
  // hashed anew every time.
  const flavorKeys = new Map<string, string>();
  function flavorKey(flavor: string): string {
    let key = flavorKeys.get(flavor);
    if (key === undefined) flavorKeys.set(flavor, key = FLAVOR_ID + flavor);
    return key;
  }

  function flavorRecord(flavor: string): Entry | undefined {
    return map.get(flavorKey(flavor));
  }

  function install(owner: string, capability: ProviderCapability): InstallResult {
    const fault = capabilityProblem(capability);
    if (fault !== undefined) {
      const name = typeof capability?.name === "string" && capability.name.trim() !== ""
        ? ` '${capability.name}'`
        : "";
      return failed(`provider${name} of ${ownerLabel(owner)} ${fault}`);
    }
    const flavor = capability.flavor;
    const dialect = capability.dialect;
    // Made here rather than through flavorKey: one string per install costs less than a lookup
    // in the cache and an entry added to it (measured: the cycle of bench/runtime_bench.ts).
    const key = dialect === undefined ? "" : FLAVOR_ID + flavor;
    if (dialect !== undefined) {
      const holder = map.get(key);
      if (holder !== undefined) {
        return failed(
          `${where(capability, owner)} brings flavor '${flavor}', which ${
            ownerLabel(holder.owner)
          } already provides`,
          { id: key, owner: holder.owner },
        );
      }
    }
    // Only a provider with several presets can repeat a name within itself.
    const names = capability.presets.length > 1 ? new Set<string>() : undefined;
    for (const preset of capability.presets) {
      const name = typeof preset?.name === "string" ? preset.name : undefined;
      if (name === undefined || !PRESET_NAME.test(name)) {
        return failed(
          `${where(capability, owner)} has a preset named ${
            quote(name ?? preset?.name)
          }; a preset name is ` +
            "letters, digits, '_', '.' and '-'",
        );
      }
      const problem = presetProblem(preset);
      if (problem !== undefined) {
        return failed(`preset '${name}' of ${where(capability, owner)} ${problem}`);
      }
      if (names !== undefined) {
        if (names.has(name)) {
          return failed(`${where(capability, owner)} lists preset '${name}' twice`);
        }
        names.add(name);
      }
      const holder = map.get(name);
      if (holder !== undefined) {
        return failed(
          `preset '${name}' of ${ownerLabel(owner)} is already provided by ` +
            ownerLabel(holder.owner),
          { id: name, owner: holder.owner },
        );
      }
      if (preset.flavor !== flavor && flavorRecord(preset.flavor) === undefined) {
        return failed(
          `preset '${name}' of ${
            where(capability, owner)
          } speaks flavor '${preset.flavor}', which is neither ` +
            `the provider's flavor '${flavor}' nor a flavor that exists`,
        );
      }
    }

    // Entries are frozen when they are first handed out, not here: freezing three objects per
    // install was the costliest part of enabling a provider, and most are never read.
    const presets = capability.presets;
    const first = dialect === undefined ? 0 : 1;
    const ids: string[] = new Array(presets.length + first);
    const slots: Slot[] = new Array(ids.length);
    if (dialect !== undefined) {
      ids[0] = key;
      slots[0] = { entry: { flavor, owner }, dialect };
    }
    for (let i = 0; i < presets.length; i++) {
      const { name, baseUrl, defaultModel, requiresKey, keyEnv, images, catalog } = presets[i];
      ids[first + i] = name;
      const slot = keyEnv === undefined
        ? { name, flavor: presets[i].flavor, baseUrl, defaultModel, requiresKey, owner }
        : { name, flavor: presets[i].flavor, baseUrl, defaultModel, requiresKey, keyEnv, owner };
      const withImages = images === undefined ? slot : { ...slot, images };
      slots[first + i] = catalog === undefined ? withImages : { ...withImages, catalog };
    }
    const handle = map.installAll(ids, owner, slots, "provider", capability.name);
    if (handle === undefined) return failed(`${where(capability, owner)} could not be added`);
    if (dialect !== undefined) remembered.set(flavor, owner);
    return installed(handle);
  }

  return {
    install(
      owner: string,
      capability: ProviderCapability,
      _services: PluginServices,
    ): InstallResult {
      return install(owner, capability);
    },

    entries(): readonly RegistryEntry[] {
      return map.entries();
    },

    purge(owner: string): readonly string[] {
      // Core flavors are fixed at construction: nothing can switch the shared protocol off.
      if (owner === "core") return [];
      return map.purge(owner);
    },

    get version(): number {
      return map.version;
    },

    presets(): readonly PresetEntry[] {
      views();
      return presetList;
    },

    preset(name: string): PresetEntry | undefined {
      const record = map.get(name);
      const slot = record?.value;
      return slot === undefined || "dialect" in slot ? undefined : Object.freeze(slot);
    },

    flavors(): readonly FlavorEntry[] {
      views();
      return flavorList;
    },

    resolveFlavor(flavor: string): ResolvedFlavor {
      const live = flavorRecord(flavor);
      if (live !== undefined && "dialect" in live.value) {
        return {
          requested: flavor,
          flavor,
          fellBack: false,
          owner: live.owner,
          dialect: live.value.dialect,
        };
      }
      const owner = remembered.get(flavor);
      if (owner !== undefined) throw new FlavorUnavailableError(flavor, owner);
      const fallback = flavorRecord("openai");
      if (fallback === undefined || !("dialect" in fallback.value)) {
        throw new AmberError(
          `flavor '${flavor}' is unknown and there is no 'openai' flavor to fall back to`,
        );
      }
      return {
        requested: flavor,
        flavor: "openai",
        fellBack: true,
        owner: fallback.owner,
        dialect: fallback.value.dialect,
      };
    },

    claimFlavor(flavor: string, owner: string): void {
      if (typeof flavor !== "string" || flavor === "") {
        throw new TypeError("claimFlavor needs a flavor name");
      }
      if (typeof owner !== "string" || owner === "") {
        throw new TypeError(`claimFlavor('${flavor}') needs the id of the plugin that owns it`);
      }
      if (remembered.get(flavor) === owner) return;
      remembered.set(flavor, owner);
      // Resolution of `flavor` changed (fallback became a loud failure), which is a change.
      map.touch();
    },
  };
}
