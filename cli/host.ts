/**
 * The headless host: the registries, the runtime with the bundled plugins, and what the host
 * itself contributes (status segments, the plugin console panel, the `/set` and `/get` commands).
 *
 * @module
 */

import {
  type AmberConfig,
  configDir as defaultConfigDir,
  type Diagnostic,
  emptyStatusSnapshot,
  headlessUi,
  type HostServices,
  type Plugin,
  PluginRuntime,
  type PluginServices,
  type Registries,
  type StatusSegmentCapability,
  type StatusSnapshot,
  type SubagentService,
  type UiService,
} from "@amber/core";
import { makeBundledPlugins } from "@amber/plugins";
import { openaiDialect } from "@amber/providers/openai";
import { createRegistries } from "@amber/registries";
import type { CoreCommandRoots } from "@amber/registries/commands";
import { loadConfigFile } from "./config_file.ts";
import { createJobService } from "./jobs.ts";
import { createTodoService } from "./todos.ts";
import { registerThirdPartyPlugins } from "./third_party.ts";
import { describeState, pluginConsoleLines } from "./plugin_console.ts";
import {
  accountSettings,
  type ProviderOverrides,
  type ResolvedProvider,
  resolveProvider,
} from "./provider_settings.ts";

/** Options of {@linkcode openHost}. */
export interface HostOptions {
  /** The config directory; see `configDir` in @amber/core for the default. */
  readonly configDir?: string;
  /** The workspace root; the current directory by default. */
  readonly workspace?: string;
  /** The plugins; the bundled ones by default. */
  readonly plugins?: readonly Plugin[];
  /**
   * Whether the third-party plugins recorded in `plugins.lock.json` are loaded after them
   * (see `amber plugins add`); true by default.
   */
  readonly thirdParty?: boolean;
  /** Receives diagnostics (contained plugin faults, corrupt files). */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
  /** The sub-agent service, for a host that runs agents (`amber run`); absent otherwise. */
  readonly subagents?: SubagentService;
  /** Aborted when the user cancels; tools see it through the host services. */
  readonly signal?: AbortSignal;
  /** The UI services plugins reach as `host.ui`; a headless one that refuses questions by default. */
  readonly ui?: UiService;
  /**
   * Command roots the host adds to the core's `/set` and `/get` (the interactive session's
   * `/help`, `/quit`, ...); the registry's core roots are fixed when it is made.
   */
  readonly commands?: CoreCommandRoots;
}

/** A started host. */
export interface Host {
  /** The runtime. */
  readonly runtime: PluginRuntime;
  /** The registries. */
  readonly registries: Registries;
  /** The config directory in use. */
  readonly configDir: string;
  /** The configuration loaded from config.yaml. */
  readonly config: AmberConfig;
  /**
   * The status snapshot for the current configuration, with the command line's provider
   * settings applied: the model, and the cached wallet and allowance readouts of that provider.
   */
  snapshot(overrides?: ProviderOverrides): StatusSnapshot;
  /** The workspace root. */
  readonly workspace: string;
  /** The host services plugins were given: background jobs, todos, maybe sub-agents. */
  readonly services: HostServices;
  /** Deactivates every plugin (their state files stay as they are) and stops every job. */
  close(): Promise<void>;
}

/**
 * Builds the registries and the runtime, registers the plugins and starts them.
 *
 * The core owns the shared `openai` flavor (Chat Completions), so switching off any provider
 * plugin never takes it down. A flavor a plugin names in an exact `flavors` bound is claimed for
 * that plugin before anything starts: while the plugin is off, its flavor fails loudly (naming
 * the plugin) instead of silently falling back to `openai` and speaking the wrong protocol.
 *
 * @example
 * ```ts
 * import { openHost } from "@amber/cli";
 * const host = await openHost({ configDir: await Deno.makeTempDir() });
 * console.log(host.runtime.state("hello").status); // "active"
 * await host.close();
 * ```
 */
export async function openHost(options: HostOptions = {}): Promise<Host> {
  const dir = options.configDir ?? defaultConfigDir(Deno.env.toObject());
  const config = await loadConfigFile(dir);
  // The command handlers below close over `runtime`, created right after the registries: they
  // only run once the host is up.
  const registries = createRegistries({
    coreFlavors: { openai: openaiDialect },
    coreCommands: {
      ...options.commands,
      set: {
        help: "Change a setting",
        subtree: { plugin: { help: "Turn a plugin on or off: /set plugin on|off <id>" } },
        handlers: {
          plugin: async (arg) => {
            const [word, id, ...rest] = arg.trim().split(/\s+/);
            if ((word !== "on" && word !== "off") || !id || rest.length > 0) {
              throw new Error("usage: /set plugin on|off <id>");
            }
            const result = await runtime.setState(id, word === "on");
            return `${id}: ${describeState(result.state)}`;
          },
        },
      },
      get: {
        help: "Show a setting",
        subtree: { plugin: { help: "Show a plugin: /get plugin <id>" } },
        handlers: {
          plugin: (arg) => {
            const id = arg.trim();
            if (!id) throw new Error("usage: /get plugin <id>");
            const info = runtime.info(id);
            return `${id} ${info.plugin.version}: ${
              describeState(info.state)
            }, ${info.contributions.length} contributions`;
          },
        },
      },
    },
    onRenderError: (owner, name, error) =>
      runtime.report({
        pluginId: owner,
        where: `render of '${name}'`,
        message: error instanceof Error ? error.message : String(error),
        error,
      }),
  });
  const workspace = options.workspace ?? Deno.cwd();
  // Jobs start processes only when a tool asks, so every host can offer them; they are all
  // stopped when the host closes.
  const jobs = createJobService(workspace);
  const services: HostServices = {
    jobs,
    todos: createTodoService(),
    ...(options.subagents ? { subagents: options.subagents } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ui: options.ui ?? headlessUi(),
  };
  const runtime: PluginRuntime = new PluginRuntime({
    registries,
    configDir: dir,
    config,
    workspace: { root: workspace },
    host: services,
    onDiagnostic: options.onDiagnostic,
  });
  installCoreContributions(runtime);
  const plugins = options.plugins ?? makeBundledPlugins();
  for (const plugin of plugins) runtime.register(plugin);
  const added = options.thirdParty === false ? [] : await registerThirdPartyPlugins(runtime, dir);
  claimFlavors(registries, [...plugins, ...added]);
  await runtime.start();
  return {
    runtime,
    registries,
    configDir: dir,
    config,
    workspace,
    services,
    snapshot: (overrides) => snapshotFor(runtime, overrides ?? {}),
    close: async () => {
      await runtime.stop();
      await jobs.dispose();
    },
  };
}

function claimFlavors(registries: Registries, plugins: readonly Plugin[]): void {
  for (const plugin of plugins) {
    const flavors = plugin.bound?.flavors;
    if (flavors?.kind !== "exact") continue;
    for (const flavor of flavors.ids) {
      // A bound is the plugin's own data: a name the registry refuses is the plugin's problem,
      // and its activation reports it; the host carries on.
      try {
        registries.provider.claimFlavor(flavor, plugin.id);
      } catch {
        // Nothing to claim.
      }
    }
  }
}

function snapshotFor(runtime: PluginRuntime, overrides: ProviderOverrides): StatusSnapshot {
  const config = runtime.config();
  const base = emptyStatusSnapshot();
  let resolved: ResolvedProvider;
  try {
    resolved = resolveProvider({ registries: runtime.registries, config, runtime }, overrides);
  } catch {
    // A provider that cannot be used shows no account; the command that uses it says why.
    return {
      ...base,
      model: overrides.model ?? config.model ?? "",
      wallet: "",
      allowance: "",
    };
  }
  const request = accountSettings(resolved);
  const { wallet, allowance } = runtime.registries;
  const hasWallet = wallet.entries().some((entry) => entry.id === request.provider);
  return {
    ...base,
    model: resolved.model,
    reasoningEffort: resolved.reasoningEffort ?? "",
    wallet: hasWallet ? wallet.readout(request) : "",
    allowance: allowance.snapshot(request) === undefined ? "" : allowance.readout(request),
  };
}

const CORE_SEGMENTS: readonly StatusSegmentCapability[] = [
  {
    kind: "status",
    name: "model",
    priority: 100,
    dropPriority: 90,
    render: (s) => ({ text: s.model, tone: "accent" }),
  },
  {
    kind: "status",
    name: "tool",
    priority: 200,
    dropPriority: 60,
    render: (s) => ({ text: s.runningTool ? `⚙ ${s.runningTool}` : "", tone: "warn" }),
  },
  {
    kind: "status",
    name: "tokens",
    priority: 300,
    dropPriority: 40,
    render: (s) => ({
      text: s.promptTokens + s.completionTokens > 0
        ? `↑${compact(s.promptTokens)} ↓${compact(s.completionTokens)}`
        : "",
      tone: "dim",
    }),
  },
  {
    kind: "status",
    name: "wallet",
    priority: 800,
    dropPriority: 20,
    render: (s) => ({ text: s.wallet, tone: s.wallet === "-" ? "dim" : "good" }),
  },
  {
    kind: "status",
    name: "allowance",
    priority: 810,
    dropPriority: 10,
    render: (s) => ({ text: s.allowance, tone: "dim" }),
  },
];

function installCoreContributions(runtime: PluginRuntime): void {
  const services: PluginServices = {
    owner: "core",
    tools: runtime.registries.tool,
    events: runtime.events,
    config: () => runtime.config(),
    host: {},
    workspace: { root: Deno.cwd() },
  };
  const results = [
    ...CORE_SEGMENTS.map((segment) => runtime.registries.status.install("core", segment, services)),
    runtime.registries.panel.install("core", {
      kind: "panel",
      name: "plugins",
      id: "plugins",
      title: "Plugins",
      lines: (width) => pluginConsoleLines(runtime.list(), width),
    }, services),
  ];
  for (const result of results) {
    if (result.status !== "installed") {
      throw new Error(`core contribution failed: ${JSON.stringify(result)}`);
    }
  }
}

function compact(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}
