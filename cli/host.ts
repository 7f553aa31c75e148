/**
 * The headless host: the registries, the runtime with the bundled plugins, and core's own
 * contributions (see `core_contributions.ts`), installed as a plugin's are.
 *
 * @module
 */

import {
  type AmberConfig,
  configDir as defaultConfigDir,
  type Diagnostic,
  type EditorService,
  headlessUi,
  type HostServices,
  type Plugin,
  PluginRuntime,
  type PluginServices,
  type Registries,
  type StatusSnapshot,
  type SubagentService,
  type UiService,
} from "@amber/core";
import { makeBundledPlugins } from "@amber/plugins";
import { createRegistries } from "@amber/registries";
import type { McpServers, McpServerSpec, OAuthInteraction } from "@amber/mcp";
import { loadConfigFile } from "./config_file.ts";
import type { AwaitingServer } from "./mcp_sources.ts";
import {
  coreContributions,
  coreServices,
  type FrontEndContributions,
  installCore,
} from "./core_contributions.ts";
import { HostProcesses } from "./host_processes.ts";
import { noteAbandonedWork } from "./containment.ts";
import { loadModule } from "./lazy_modules.ts";
import { createJobService } from "./jobs.ts";
import { createTodoService } from "./todos.ts";
import { HostFaults } from "./host_faults.ts";
import { presentFileSources } from "./files/sources.ts";
import { AgentCatalog } from "./files/agent_catalog.ts";
import { withDefinedAgents } from "./files/defined_agents.ts";
import { pluginLockPath } from "./plugin_lock_file.ts";
import type { ThirdPartyPlugins } from "./third_party_start.ts";
import type { ProviderOverrides } from "./provider_settings.ts";
import { providerSnapshot, resolveProviderFor } from "./session/provider.ts";

/**
 * After SIGTERM or SIGHUP, how long a front end that cancels (one that gave the host a `signal`)
 * gets to end on its own, once the processes tools started are stopped, before amber exits (ms).
 */
export const SIGNAL_EXIT_GRACE_MS = 5000;

/**
 * The folder of the config directory where the processes tools start are recorded until they end
 * (`RECORDS_DIR` of `leftovers.ts`, named here so that a start without it need not load that
 * module).
 */
export const PROCESS_RECORDS_DIR = "processes";

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
   * The editor's files and terminals (`amber acp` with an editor that offers them): the file
   * tools and bash go through it instead of the disk and a local process. Absent otherwise.
   */
  readonly editor?: EditorService;
  /**
   * What the front end adds to core's own contributions (the interactive session's commands and
   * status segments); they install as core's do.
   */
  readonly frontEnd?: FrontEndContributions;
  /**
   * The MCP servers (`mcp.servers` of config.yaml, the workspace's `.mcp.json`): whether they
   * connect (a session) or are only registered and listed, never started (`amber plugins list`;
   * the default), and who approves a workspace's server that was not approved yet (such a
   * server is left out without it).
   */
  readonly mcp?: HostMcpOptions;
}

/** How a host treats the MCP servers; see {@linkcode HostOptions.mcp}. */
export interface HostMcpOptions {
  /** True: each server's plugin connects when it activates. False: registered, never started. */
  readonly connect: boolean;
  /** Asked about each workspace server not approved yet (or changed since); a yes is remembered. */
  readonly approve?: (spec: McpServerSpec) => Promise<boolean>;
  /** Servers connect only once it settles (the interactive session's first frame). */
  readonly after?: PromiseLike<unknown>;
  /** Shows the user the URL to open when a server needs an OAuth sign-in. */
  readonly oauth?: OAuthInteraction;
}

/**
 * How long a command that shows what the MCP servers offer (`amber mcp list`, `amber plugins
 * disable mcp.NAME --dry-run`) waits for them to connect, at most (ms).
 */
export const MCP_WAIT_MS = 30_000;

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
  /**
   * The processes tools started: their environment (a session adds the key it uses with
   * `withhold`) and their tracking (a session names itself with `session`).
   */
  readonly processes: HostProcesses;
  /** The services core's own contributions were installed with (owner `core`). */
  readonly coreServices: PluginServices;
  /** The MCP servers, each a plugin of the runtime; present when at least one is registered. */
  readonly mcp?: McpServers;
  /**
   * The workspace's MCP servers that were not started because they wait for the user's approval
   * (`amber mcp approve NAME`); empty when there are none.
   */
  readonly mcpAwaiting: readonly AwaitingServer[];
  /**
   * The agents the markdown files define (`agents/<name>.md`), by the plugin that loaded them:
   * what the session's sub-agent service lists for the `task` tool and `/agents`.
   */
  readonly agents: AgentCatalog;
  /**
   * Deactivates every plugin (their state files stay as they are), stops every job and every
   * command still running, and stops answering SIGTERM and SIGHUP.
   */
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
 * While the plugins start, it stops what an earlier amber, killed before it could, left running
 * (see `leftovers.ts`), and says so through `onDiagnostic`. The processes tools start get the
 * environment of `host.processes` (without amber's secrets; `secrets.passEnv` in config.yaml
 * passes named ones) and are stopped on SIGTERM, SIGHUP and exit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * const configDir = await Deno.makeTempDir();
 * const host = await openHost({ configDir, workspace: configDir });
 * assert.equal(host.runtime.state("tool_read").status, "active");
 * assert.equal(host.coreServices.workspace.root, configDir);
 * await host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export async function openHost(options: HostOptions = {}): Promise<Host> {
  const dir = options.configDir ?? defaultConfigDir(Deno.env.toObject());
  // A bad server entry leaves out only that server: the host starts without it, and says why.
  const config = await loadConfigFile(dir, {
    onServerProblem: (problem) =>
      options.onDiagnostic?.({ pluginId: "core", where: "mcp", message: problem.message }),
  });
  // The render-error handler closes over `runtime`, created right after the registries: it only
  // runs once the host is up.
  const registries = createRegistries({
    onRenderError: (owner, name, error) =>
      runtime.report({
        pluginId: owner,
        where: `render of '${name}'`,
        message: error instanceof Error ? error.message : String(error),
        error,
      }),
    // The user sees the command's failed outcome; the plugin is charged with the fault.
    onCommandError: (owner, line, error) =>
      runtime.report({
        pluginId: owner,
        where: `command '${line}'`,
        message: error instanceof Error ? error.message : String(error),
        error,
      }),
  });
  const workspace = options.workspace ?? Deno.cwd();
  // Looked for while the plugins start; done before any tool can start a process.
  const leftovers = stopEarlierLeftovers(dir, options.onDiagnostic);
  // What tools start gets the environment without amber's secrets, and is stopped when amber is
  // signalled or exits; the policy is read at each start, as the configuration is live.
  const processes = new HostProcesses({
    configDir: dir,
    policy: () => {
      const live = runtime.config();
      return {
        passEnv: live.secrets?.passEnv ?? [],
        keyNames: [live.apiKeyEnv, ...registries.provider.presets().map((p) => p.keyEnv)],
      };
    },
    onDiagnostic: options.onDiagnostic,
    // A front end with a cancel signal ends a turn on SIGTERM itself (`amber run` commits it).
    exitGraceMs: options.signal === undefined ? 0 : SIGNAL_EXIT_GRACE_MS,
  });
  // Jobs start processes only when a tool asks, so every host can offer them; they are all
  // stopped when the host closes.
  const jobs = createJobService(workspace, { processes });
  // The agents the markdown files define; the sub-agent service lists those whose plugin is on.
  const agents = new AgentCatalog();
  const defined = () => ({ agents, runtime });
  const services: HostServices = {
    jobs,
    processes,
    todos: createTodoService(),
    ...(options.subagents ? { subagents: withDefinedAgents(options.subagents, defined) } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ui: options.ui ?? headlessUi(),
    ...(options.editor ? { editor: options.editor } : {}),
  };
  // Faults are remembered in the config directory; a plugin whose initialize hung before is held.
  const faults = await HostFaults.open(dir);
  const runtime: PluginRuntime = new PluginRuntime({
    registries,
    configDir: dir,
    config,
    workspace: { root: workspace },
    host: services,
    onDiagnostic: options.onDiagnostic,
    onFault: faults.onFault,
  });
  const core = coreServices(runtime, workspace, services);
  const contributions = coreContributions(runtime, options.frontEnd);
  installCore(registries, core, contributions.first, true);
  const plugins = options.plugins ?? makeBundledPlugins();
  // Markdown commands, skills and agents (cli/files): agents before every other plugin, so the
  // `task` tool sees an agent file's change in the same refresh; commands and skills after them
  // all, so a command name one has is theirs.
  // Their module loads only when there is a folder to read (see `presentFileSources`).
  const fileSources = presentFileSources(config, { configDir: dir, workspace });
  const files = fileSources.length === 0
    ? undefined
    : await loadModule<typeof import("./files/files_plugin.ts")>("./files/files_plugin.ts");
  const filesHost = {
    agents,
    configDir: dir,
    workspace,
    services,
    commandRoots: () => registries.command.tree(),
    ...(options.onDiagnostic !== undefined ? { onDiagnostic: options.onDiagnostic } : {}),
  };
  files?.registerFiles(runtime, fileSources, filesHost, ["agents"]);
  for (const plugin of plugins) runtime.register(plugin);
  const added = options.thirdParty === false
    ? undefined
    : await registerThirdParty(runtime, dir, faults, processes, workspace, options.onDiagnostic);
  const mcp = await registerMcp(runtime, config, {
    configDir: dir,
    workspace,
    processes,
    options,
  });
  files?.registerFiles(runtime, fileSources, filesHost, ["commands", "skills"]);
  claimFlavors(registries, [...plugins, ...(added?.plugins ?? [])]);
  faults.start(runtime);
  await runtime.start();
  installCore(registries, core, contributions.last, false);
  processes.listen();
  await leftovers;
  return {
    runtime,
    registries,
    configDir: dir,
    config,
    workspace,
    services,
    processes,
    coreServices: core,
    ...(mcp?.servers !== undefined ? { mcp: mcp.servers } : {}),
    mcpAwaiting: mcp?.awaiting ?? [],
    agents,
    snapshot: (overrides) => snapshotFor(runtime, overrides ?? {}),
    close: async () => {
      await runtime.stop();
      // Each server's plugin closed its connection as it stopped; this ends one still connecting.
      await mcp?.servers?.close();
      await mcp?.logs?.flush();
      // A closed Streamable HTTP transport can leave the response of its event stream open in
      // Deno (seen with server-everything after a tool call with progress): the process entry
      // then ends the process once the command is done rather than wait on that stream.
      if (mcp?.remote === true) noteAbandonedWork();
      // The processes of sandboxed plugins that were never switched on end here.
      await added?.close();
      await jobs.dispose();
      await processes.stopAll();
      processes.close();
      await faults.close();
    },
  };
}

// Start-up loads the loader of third-party plugins (and the sandbox) only when there is a lock
// file to load them from; without one, it would find nothing. What a sandboxed plugin's process
// logs reaches the user as the plugin's diagnostic, never as a fault.
async function registerThirdParty(
  runtime: PluginRuntime,
  configDir: string,
  faults: HostFaults,
  processes: HostProcesses,
  workspace: string,
  onDiagnostic: ((diagnostic: Diagnostic) => void) | undefined,
): Promise<ThirdPartyPlugins | undefined> {
  if (!(await exists(pluginLockPath(configDir)))) return undefined;
  const { registerThirdPartyPlugins } = await loadModule<typeof import("./third_party_start.ts")>(
    "./third_party_start.ts",
  );
  return await registerThirdPartyPlugins(runtime, configDir, {
    faults,
    workspace,
    // Recorded like a tool's processes: the next start stops one a kill -9 left spinning.
    onSpawn: (pluginId, started) => processes.track(started, ["amber plugin process", pluginId]),
    ...(onDiagnostic !== undefined
      ? {
        onLog: (pluginId: string, message: string) =>
          onDiagnostic({ pluginId, where: "log", message }),
      }
      : {}),
  });
}

// The MCP servers: loaded (with the SDK) only when config.yaml names one or the workspace has a
// `.mcp.json`. Each server is a plugin of the runtime; what its process (or the server's
// logging) prints reaches the user as the plugin's diagnostic.
async function registerMcp(
  runtime: PluginRuntime,
  config: AmberConfig,
  where: {
    readonly configDir: string;
    readonly workspace: string;
    readonly processes: HostProcesses;
    readonly options: HostOptions;
  },
): Promise<
  {
    servers?: McpServers;
    awaiting: readonly AwaitingServer[];
    remote?: boolean;
    logs?: { flush(): Promise<void> };
  } | undefined
> {
  const { configDir, workspace, processes, options } = where;
  const configured = Object.keys(config.mcp?.servers ?? {}).length > 0;
  if (!configured && !(await exists(`${workspace}/.mcp.json`))) return undefined;
  const [{ mcpSources }, { McpServers }] = await Promise.all([
    loadModule<typeof import("./mcp_sources.ts")>("./mcp_sources.ts"),
    loadModule<typeof import("@amber/mcp")>("@amber/mcp"),
  ]);
  // What servers log is kept for `amber doctor` (mcp_logs.ts); a front end keeps it off the screen.
  const logs = options.mcp?.connect === true
    ? new (await loadModule<typeof import("./mcp_logs.ts")>("./mcp_logs.ts")).McpLogBook(configDir)
    : undefined;
  const onDiagnostic = (diagnostic: Diagnostic): void => {
    if (diagnostic.where === "log") logs?.append(diagnostic.pluginId, diagnostic.message);
    options.onDiagnostic?.(diagnostic);
  };
  const sources = await mcpSources({
    configDir,
    workspace,
    config,
    ...(options.mcp?.approve ? { approve: options.mcp.approve } : {}),
  });
  for (const message of sources.problems) {
    onDiagnostic({ pluginId: "core", where: "mcp", message });
  }
  for (const { spec, changed } of sources.awaiting) {
    onDiagnostic({
      pluginId: spec.pluginId,
      where: "approval",
      message: `the server '${spec.name}' of ${spec.source} is not started: ${
        changed ? "its entry changed since it was approved" : "it was never approved"
      }; \`amber mcp approve ${spec.name}\` (or /mcp approve ${spec.name}) approves it`,
    });
  }
  if (sources.specs.length === 0) return { awaiting: sources.awaiting };
  const servers = new McpServers({
    specs: sources.specs,
    connect: options.mcp?.connect ?? false,
    env: Deno.env.toObject(),
    workspace,
    configDir,
    ...(config.mcp?.trustReadOnly !== undefined ? { trustReadOnly: config.mcp.trustReadOnly } : {}),
    onDiagnostic,
    ...(options.mcp?.oauth !== undefined ? { oauth: options.mcp.oauth } : {}),
    ...(options.mcp?.after !== undefined ? { after: options.mcp.after } : {}),
    fail: (pluginId, at, message) => runtime.fail(pluginId, at, message),
    report: (diagnostic) => runtime.report(diagnostic),
    // Recorded like a tool's processes: the next start stops a server a kill -9 left running.
    onSpawn: (started, argv) => processes.track(started, ["amber mcp server", ...argv]),
  });
  const plugins = servers.plugins();
  plugins.forEach((plugin, i) => runtime.register(plugin, { source: sources.specs[i].source }));
  const remote = options.mcp?.connect === true &&
    sources.specs.some((spec) => spec.entry.transport !== "stdio");
  return { servers, awaiting: sources.awaiting, remote, ...(logs ? { logs } : {}) };
}

// After a kill -9 nothing stopped what amber had started: the next start does, and says so. The
// records' module is loaded only when their folder exists (it is created by the first record).
async function stopEarlierLeftovers(
  configDir: string,
  onDiagnostic: ((diagnostic: Diagnostic) => void) | undefined,
): Promise<void> {
  try {
    if (!(await exists(`${configDir}/${PROCESS_RECORDS_DIR}`))) return;
    const { describeLeftover, stopLeftovers } = await loadModule<typeof import("./leftovers.ts")>(
      "./leftovers.ts",
    );
    for (const leftover of await stopLeftovers(configDir)) {
      onDiagnostic?.({
        pluginId: "core",
        where: "leftovers",
        message: `stopped a process an earlier amber left running: ${describeLeftover(leftover)}`,
      });
    }
  } catch (error) {
    onDiagnostic?.({
      pluginId: "core",
      where: "leftovers",
      message: `cannot look for processes an earlier amber left running: ${
        error instanceof Error ? error.message : String(error)
      }`,
      error,
    });
  }
}

// Whether `path` exists; one that cannot be looked at counts as existing, so that whoever reads it
// reports why.
async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    return !(error instanceof Deno.errors.NotFound);
  }
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

// The snapshot for a command without a session (`amber status`); a session's own snapshot uses
// the provider it resolved when it opened.
function snapshotFor(runtime: PluginRuntime, overrides: ProviderOverrides): StatusSnapshot {
  const config = runtime.config();
  const resolution = resolveProviderFor(
    { registries: runtime.registries, config, runtime },
    overrides,
  );
  return providerSnapshot(
    runtime.registries,
    resolution.ok ? resolution.resolved : undefined,
    overrides.model ?? config.model ?? "",
  );
}
