/**
 * The plugin contract.
 *
 * @module
 */

import type { CapabilityBound } from "./bound.ts";
import type { Capability } from "./capability.ts";
import type { PluginContext } from "./services.ts";
import type { StandardJsonSchema } from "./tool.ts";

/**
 * The common categories. The category is open: an unknown value groups under its own heading.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginCategory } from "@amber/core";
 * assert.equal(PluginCategory.Tools, "tools");
 * ```
 */
export const PluginCategory: {
  readonly Provider: "provider";
  readonly Observability: "observability";
  readonly Tools: "tools";
  readonly Ui: "ui";
  readonly Memory: "memory";
  readonly Search: "search";
  readonly Mcp: "mcp";
  readonly Other: "other";
} = Object.freeze({
  Provider: "provider",
  Observability: "observability",
  Tools: "tools",
  Ui: "ui",
  Memory: "memory",
  Search: "search",
  Mcp: "mcp",
  Other: "other",
});

/**
 * What a plugin asks to be allowed, in its manifest (`Plugin.permissions`), which a
 * sandboxed plugin's process is granted exactly, once the user accepted it. Paths are relative
 * to the workspace, or, written `data:<path>` (`data:` alone for all of it), to the plugin's
 * own data folder `<config dir>/plugins/<id>/data`; an absolute path or one that climbs out
 * with `..` is refused. `net` holds hosts (`host` or `host:port`), `env` variable names, `run`
 * command names. Nothing is allowed that is not listed.
 */
export interface PluginPermissions {
  /** Paths it may read. */
  readonly read?: readonly string[];
  /** Paths it may write (and read). */
  readonly write?: readonly string[];
  /** Hosts it may connect to. */
  readonly net?: readonly string[];
  /** Environment variables it may read. */
  readonly env?: readonly string[];
  /** Commands it may run. */
  readonly run?: readonly string[];
}

/**
 * A plugin: an id, a version, a name, a lifecycle, and the capabilities it declares.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Plugin } from "@amber/core";
 * const quiet: Plugin = {
 *   id: "quiet",
 *   version: "1.0.0",
 *   name: "Quiet",
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [
 *     { kind: "prompt", name: "style", priority: 400, render: () => "Answer briefly." },
 *   ],
 * };
 * assert.deepEqual(quiet.capabilities().map((c) => c.kind), ["prompt"]);
 * ```
 */
export interface Plugin {
  /**
   * Unique in the harness: the ledger owner and the state directory. A slug, `[a-z0-9_]+`; a
   * plugin amber realizes for a session has a dotted one (`mcp.everything`), see
   * {@linkcode PLUGIN_ID_PATTERN}.
   */
  readonly id: string;
  /** A semver version. */
  readonly version: string;
  /** The display name. */
  readonly name: string;
  /** One line shown in the plugin list. */
  readonly description?: string;
  /** Groups the plugin in the list; see {@linkcode PluginCategory}. */
  readonly category?: string;
  /** Whether it is on when no `plugin.conf` says otherwise. Defaults to true. */
  readonly enabledByDefault?: boolean;
  /**
   * The plugins it needs, by id, each with a semver range (`"*"` for any version). It activates
   * after them, and only when they are active.
   */
  readonly requires?: { readonly [pluginId: string]: string };
  /** What it may contribute; every contribution outside it fails activation. Default: nothing. */
  readonly bound?: CapabilityBound;
  /**
   * What it needs from the machine when it runs sandboxed (a third-party plugin not marked
   * `trusted`): the user grants it at `amber plugins add`, and the process gets nothing else.
   */
  readonly permissions?: PluginPermissions;
  /**
   * The schema of its section of config.yaml (`plugins.<id>`), any Standard Schema (zod 4...).
   * The decoded value is what `context.section()` returns.
   */
  readonly config?: StandardJsonSchema;
  /**
   * For a plugin whose contributions change while it runs (a tool source such as an MCP server):
   * a number that moves when they do. The runtime re-resolves the plugin at the next step
   * boundary after it moves.
   */
  liveVersion?(): number;
  /** Captures the context. False (or a rejection, or a throw) marks the plugin Failed. */
  initialize(context: PluginContext): boolean | Promise<boolean>;
  /** Releases plugin-owned resources. Contributions are the ledger's business, not this. */
  shutdown(): void | Promise<void>;
  /** Time-driven work; must not block. */
  tick?(): void;
  /** Called once per activation; the runtime installs each capability and ledgers it. */
  capabilities(): readonly Capability[];
}

/**
 * Where a plugin is in its lifecycle.
 */
export type PluginState =
  | { readonly status: "registered" }
  | { readonly status: "active" }
  | { readonly status: "disabled" }
  /** On, but waiting for a requirement: a dependency that is off, failed or the wrong version. */
  | { readonly status: "blocked"; readonly reason: string }
  | { readonly status: "failed"; readonly reason: string };

/**
 * The pattern every plugin id matches: a slug (`[a-z0-9_]+`), or a slug namespace, a dot and a
 * name (`[a-z0-9_-]+`), as amber gives the plugins it realizes for a session (`mcp.everything`).
 * A dotted id is reserved for those: `amber plugins add` and `amber plugin new` take only ids
 * that match {@linkcode PLUGIN_SLUG_PATTERN}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PLUGIN_ID_PATTERN } from "@amber/core";
 * assert.equal(PLUGIN_ID_PATTERN.test("notes"), true);
 * assert.equal(PLUGIN_ID_PATTERN.test("mcp.my-server"), true);
 * assert.equal(PLUGIN_ID_PATTERN.test("a.b.c"), false);
 * assert.equal(PLUGIN_ID_PATTERN.test("Notes"), false);
 * ```
 */
export const PLUGIN_ID_PATTERN: RegExp = /^[a-z0-9_]+(?:\.[a-z0-9_-]+)?$/;

/**
 * The pattern of a plugin id without a namespace, which a plugin someone writes has:
 * `amber plugins add` and `amber plugin new` take no other. A dotted id, which
 * {@linkcode PLUGIN_ID_PATTERN} also admits, is reserved for the plugins amber realizes for a
 * session (`mcp.<name>`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PLUGIN_SLUG_PATTERN } from "@amber/core";
 * assert.equal(PLUGIN_SLUG_PATTERN.test("notes"), true);
 * assert.equal(PLUGIN_SLUG_PATTERN.test("mcp.notes"), false);
 * ```
 */
export const PLUGIN_SLUG_PATTERN: RegExp = /^[a-z0-9_]+$/;
