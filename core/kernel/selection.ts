/**
 * Programmatic runs: an exact selection of plugins (`pluginIds`) with their configuration
 * (`pluginConfig`) resolves into one environment, or fails closed with a
 * {@linkcode CapabilityBoundError} listing every reason. Never a partial environment.
 *
 * @module
 */

import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { Plugin } from "../plugin.ts";
import type { Registries } from "../registries.ts";
import { CapabilityBoundError, ResolutionError } from "../resolution_error.ts";
import { PluginRuntime } from "../runtime.ts";
import type { Diagnostic } from "../runtime_types.ts";
import type { HostServices, Workspace } from "../services.ts";

/** What {@linkcode resolveSelection} needs. */
export interface SelectionRequest {
  /** The plugins installed: what `pluginIds` may name. */
  readonly available: readonly Plugin[];
  /** The plugins the run uses, exactly: each id once, each installed. */
  readonly pluginIds: readonly string[];
  /** Each selected plugin's configuration section, by id. */
  readonly pluginConfig?: { readonly [pluginId: string]: unknown };
  /** Fresh registries for the run. */
  readonly registries: Registries;
  /** The workspace; the current directory by default. */
  readonly workspace?: Workspace;
  /** Host services. */
  readonly host?: HostServices;
  /** Receives diagnostics. */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
}

/** A resolved selection: the runtime that holds it, and its environment. */
export interface ResolvedSelection {
  /** The runtime; `stop()` it when the run ends. */
  readonly runtime: PluginRuntime;
  /** The environment the first step runs with. */
  readonly env: ResolvedExecutionEnv;
}

/**
 * Resolves an exact plugin selection. Every check runs before anything is activated where it
 * can (ids, config sections for unselected plugins), then activation runs in dependency order;
 * if any plugin does not come up active, everything is stopped and the error lists every
 * reason, each a {@linkcode ResolutionError} naming the plugin(s), the rule and the id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CapabilityBoundError } from "@amber/core";
 * import { resolveSelection } from "@amber/core/kernel";
 * import { createRegistries } from "@amber/registries";
 * await assert.rejects(
 *   resolveSelection({ available: [], pluginIds: ["nope"], registries: createRegistries() }),
 *   CapabilityBoundError,
 * );
 * ```
 */
export async function resolveSelection(request: SelectionRequest): Promise<ResolvedSelection> {
  const failures: ResolutionError[] = [];
  const byId = new Map(request.available.map((plugin) => [plugin.id, plugin]));
  const seen = new Set<string>();
  const selected: Plugin[] = [];
  for (const id of request.pluginIds) {
    if (seen.has(id)) {
      failures.push(
        new ResolutionError({
          rule: "repeated-plugin",
          pluginIds: [id],
          axis: "plugins",
          id,
          message: `plugin '${id}' is selected twice`,
        }),
      );
      continue;
    }
    seen.add(id);
    const plugin = byId.get(id);
    if (plugin === undefined) {
      failures.push(
        new ResolutionError({
          rule: "unknown-plugin",
          pluginIds: [id],
          axis: "plugins",
          id,
          message: `plugin '${id}' is not installed; installed: ${
            [...byId.keys()].join(", ") || "(none)"
          }`,
        }),
      );
      continue;
    }
    selected.push(plugin);
  }
  for (const id of Object.keys(request.pluginConfig ?? {})) {
    if (!seen.has(id)) {
      failures.push(
        new ResolutionError({
          rule: "config",
          pluginIds: [id],
          axis: "config",
          path: ["plugins", id],
          message: `plugins.${id}: configuration for a plugin that is not selected`,
        }),
      );
    }
  }
  if (failures.length > 0) throw new CapabilityBoundError(failures);

  const runtime = new PluginRuntime({
    registries: request.registries,
    allOn: true,
    config: { plugins: request.pluginConfig ?? {} },
    workspace: request.workspace,
    host: request.host,
    onDiagnostic: request.onDiagnostic,
  });
  for (const plugin of selected) runtime.register(plugin);
  await runtime.start();
  for (const view of runtime.list()) {
    if (view.state.status === "active") continue;
    const reason = view.state.status === "failed" || view.state.status === "blocked"
      ? view.state.reason
      : view.state.status;
    failures.push(
      ...(view.failures.length > 0 ? view.failures : [
        new ResolutionError({
          rule: "bound",
          pluginIds: [view.plugin.id],
          message: `plugin '${view.plugin.id}' did not activate: ${reason}`,
        }),
      ]),
    );
  }
  if (failures.length > 0) {
    await runtime.stop();
    throw new CapabilityBoundError(failures);
  }
  return { runtime, env: runtime.environment() };
}
