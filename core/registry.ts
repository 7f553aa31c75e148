/**
 * What every registry has in common: the runtime installs into it for an owner, and can ask it
 * what each owner still has there. The ports of single registries build on it; the aggregate of
 * all of them is `Registries`, in `registries.ts`.
 *
 * @module
 */

import type { InstallResult } from "./contribution.ts";
import type { PluginServices } from "./services.ts";

/**
 * The part of a registry the runtime uses.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRegistries } from "@amber/registries";
 * import type { OwnedRegistry, RegistryEntry } from "@amber/core";
 * function ownedBy(registry: OwnedRegistry<unknown>, owner: string): RegistryEntry[] {
 *   return registry.entries().filter((entry) => entry.owner === owner);
 * }
 * const registry = createRegistries().command;
 * assert.deepEqual(ownedBy(registry, "nobody"), []);
 * ```
 */
export interface OwnedRegistry<C> {
  /** Installs `capability` for `owner`. Never throws for a plugin's fault. */
  install(owner: string, capability: C, services: PluginServices): InstallResult;
  /** Every live entry as `{id, owner}`, in registry order. */
  entries(): readonly RegistryEntry[];
  /** Removes whatever `owner` still has here; returns the ids removed. */
  purge(owner: string): readonly string[];
  /** Moves on every change. */
  readonly version: number;
}

/** One live entry of a registry. */
export interface RegistryEntry {
  /** The entry's id in its registry (tool name, segment name, command root, ...). */
  readonly id: string;
  /** The plugin that owns it, or `core`. */
  readonly owner: string;
}

/** One entry of a {@linkcode NamedRegistry}. */
export interface NamedEntry<C> {
  /** The capability's name: its id in the registry. */
  readonly name: string;
  /** The plugin that contributed it. */
  readonly owner: string;
  /** The capability. */
  readonly capability: C;
}

/**
 * A registry of named kernel extensions (hooks, gates, guards, action kinds, state keys): one
 * entry per capability, names unique across the harness.
 */
export interface NamedRegistry<C> extends OwnedRegistry<C> {
  /** The entry called `name`, if any. */
  get(name: string): NamedEntry<C> | undefined;
  /** Every entry, in registration order. */
  list(): readonly NamedEntry<C>[];
}
