/**
 * `amber config check`: everything that would keep the harness from starting as configured,
 * listed at once. YAML syntax with line and column, each plugin section against its schema,
 * sections for plugins that do not exist, the dependency graph, a dry-run activation for the
 * bounds and duplicate ids, through the same code the runtime activates with, and the provider
 * and base URL resolved as a session resolves them (the key is not looked at: it is not in the
 * file).
 *
 * @module
 */

import {
  type AmberConfig,
  decodePluginConfig,
  type Plugin,
  PluginRuntime,
  type Registries,
} from "@amber/core";
import { createRegistries } from "@amber/registries";
import { readConfigFile } from "./config_file.ts";
import { coreContributions, coreServices, installCore } from "./core_contributions.ts";
import { readWorkspacePermissions } from "./permission_rules.ts";
import { didYouMean } from "./did_you_mean.ts";
import { ProviderSettingsError, UnknownProviderError } from "./provider_settings.ts";
import { resolveProviderFor } from "./session/provider.ts";

/** What the check found. */
export interface ConfigCheck {
  /** Every problem, one line each, naming the file and line or the plugin. */
  readonly problems: readonly string[];
  /** The plugins that would be active. */
  readonly active: readonly string[];
  /** The plugins checked. */
  readonly plugins: number;
}

/**
 * Checks the configuration in `dir` for `plugins` without changing anything on disk; with
 * `workspace`, also the workspace's `.amber/permissions.yaml`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkConfig } from "@amber/cli/config-check";
 * const dir = await Deno.makeTempDir();
 * assert.deepEqual((await checkConfig(dir, [])).problems, []);
 * await Deno.writeTextFile(`${dir}/config.yaml`, "plugins:\n  ghost: {}\n");
 * const check = await checkConfig(dir, []);
 * assert.equal(check.problems.length, 1);
 * assert.match(check.problems[0], /plugins\.ghost: no plugin 'ghost' is installed/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function checkConfig(
  dir: string,
  plugins: readonly Plugin[],
  workspace?: string,
): Promise<ConfigCheck> {
  const read = await readConfigFile(dir);
  const problems: string[] = read.problems.map((problem) => problem.message);
  // The workspace's permission rules are configuration too, though not the user's file.
  if (workspace !== undefined) {
    const local = await readWorkspacePermissions(workspace);
    for (const problem of local.problems) problems.push(problem.message);
  }
  const ids = new Set(plugins.map((plugin) => plugin.id));
  for (const id of Object.keys(read.config.plugins)) {
    if (!ids.has(id)) {
      problems.push(
        `${read.locate(["plugins", id])}: plugins.${id}: no plugin '${id}' is installed ` +
          `(installed: ${[...ids].join(", ") || "none"})`,
      );
    }
  }
  // Every section is checked, also those of plugins that are off: they are in the file.
  const configErrors = new Set<string>();
  for (const plugin of plugins) {
    const decoded = await decodePluginConfig(plugin, read.config.plugins[plugin.id]);
    if (decoded.ok) continue;
    for (const error of decoded.errors) {
      configErrors.add(error.message);
      problems.push(`${read.locate(error.path ?? ["plugins", plugin.id])}: ${error.message}`);
    }
  }

  const registries = createRegistries();
  const runtime = new PluginRuntime({
    registries,
    configDir: dir,
    config: read.config,
    onDiagnostic: (d) => {
      if (d.where === "plugin.conf") problems.push(`plugin '${d.pluginId}': ${d.message}`);
    },
  });
  // Core's own contributions first, as the host installs them: the shared `openai` flavor
  // most presets speak is core's, not a plugin's.
  const core = coreServices(runtime, workspace ?? dir, {});
  installCore(registries, core, coreContributions(runtime).first, true);
  for (const plugin of plugins) runtime.register(plugin);
  await runtime.start();
  const providerProblem = checkProvider(read.config, registries, runtime, read.locate);
  if (providerProblem !== undefined) problems.push(providerProblem);
  const active: string[] = [];
  for (const view of runtime.list()) {
    const state = view.state;
    if (state.status === "active") active.push(view.plugin.id);
    if (state.status !== "failed" && state.status !== "blocked") continue;
    const messages = view.failures.length > 0
      ? view.failures.map((failure) => failure.message)
      : [state.reason];
    for (const message of messages) {
      if (configErrors.has(message)) continue;
      problems.push(`plugin '${view.plugin.id}' is ${state.status}: ${message}`);
    }
  }
  await runtime.stop();
  return { problems, active, plugins: plugins.length };
}

// What a session would make of `provider:` and `baseUrl:`, said where the file says it. A file
// that names neither leaves the choice to the command line: nothing of it to check here.
function checkProvider(
  config: AmberConfig,
  registries: Registries,
  runtime: PluginRuntime,
  locate: (keys: readonly string[]) => string,
): string | undefined {
  if (config.provider === undefined && config.baseUrl === undefined) return undefined;
  const resolution = resolveProviderFor({ config, registries, runtime }, {}, () => undefined);
  if (resolution.ok) return undefined;
  const error = resolution.error;
  const where = locate([error instanceof ProviderSettingsError ? "baseUrl" : "provider"]);
  if (error instanceof UnknownProviderError) {
    const known = error.known.join(", ") || "none";
    return `${where}: provider: no preset '${error.provider}'` +
      `${didYouMean(error.provider, error.known)}; presets: ${known}`;
  }
  return `${where}: ${error.message}`;
}
