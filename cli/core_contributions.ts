/**
 * What amber's core contributes to a host, as capabilities owned by `core`: the shared `openai`
 * flavor, the `/set` and `/get` commands, the status segments, the plugin console panel, and
 * whatever the front end adds (the interactive session's commands and segments). They install
 * through the same registry calls as a plugin's, with one services object that sees the host's
 * workspace and services.
 *
 * @module
 */

import type {
  Capability,
  CommandCapability,
  HostServices,
  OwnedRegistry,
  PluginRuntime,
  PluginServices,
  Registries,
  StatusSegmentCapability,
} from "@amber/core";
import { describeState } from "./plugin_console.ts";
import { pluginConsolePanel } from "./plugin_panel.ts";

/** What a front end adds to core's contributions. */
export interface FrontEndContributions {
  /** Command roots, owned by core (the interactive session's `/help`, `/quit`, ...). */
  readonly commands?: readonly CommandCapability[];
  /**
   * Status segments; a plugin's segment of the same name stays, and the front end's is left out.
   */
  readonly segments?: readonly StatusSegmentCapability[];
}

/** Core's contributions, in the two moments they install. */
export interface CoreContributions {
  /** Installed before any plugin starts: a plugin cannot take these names. */
  readonly first: readonly Capability[];
  /** Installed once the plugins started: they give way to a plugin's of the same name. */
  readonly last: readonly Capability[];
}

/**
 * Core's contributions to the host over `runtime`, with the front end's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { coreContributions } from "./core_contributions.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * const { first, last } = coreContributions(runtime);
 * assert.deepEqual(first.filter((c) => c.kind === "command").map((c) => c.name), ["set", "get"]);
 * assert.equal(last.length, 0);
 * ```
 */
export function coreContributions(
  runtime: PluginRuntime,
  front: FrontEndContributions = {},
): CoreContributions {
  return {
    first: [
      // The core owns the shared Chat Completions flavor, so switching off any provider plugin
      // never takes it down. Its module loads when a session speaks it: commands that call no
      // model start without it.
      {
        kind: "provider",
        name: "openai",
        flavor: "openai",
        // A literal import: a session resolves the dialect after its screen is up, and a module
        // graph Deno had not read at start would be read then, its progress line drawn over the
        // screen (see lazy_modules.ts).
        dialect: async () => (await import("@amber/providers/openai")).openaiDialect(),
        presets: [],
      },
      ...(front.commands ?? []),
      ...settingCommands(runtime),
      ...CORE_SEGMENTS,
      pluginConsolePanel(runtime),
    ],
    last: front.segments ?? [],
  };
}

/**
 * The services core's contributions install with: owner `core`, the host's workspace and
 * services.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { coreServices } from "./core_contributions.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * assert.equal(coreServices(runtime, "/work", {}).workspace.root, "/work");
 * ```
 */
export function coreServices(
  runtime: PluginRuntime,
  workspace: string,
  host: HostServices,
): PluginServices {
  return {
    owner: "core",
    tools: runtime.registries.tool,
    events: runtime.events,
    config: () => runtime.config(),
    host,
    workspace: { root: workspace },
  };
}

/**
 * Installs `capabilities` for core, each through its kind's registry. With `strict`, a refusal
 * is a bug in the host and throws; otherwise a capability a plugin already holds the name of is
 * left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { coreContributions, coreServices, installCore } from "./core_contributions.ts";
 * const registries = createRegistries();
 * const runtime = new PluginRuntime({ registries });
 * const services = coreServices(runtime, "/work", {});
 * installCore(registries, services, coreContributions(runtime).first, true);
 * assert.deepEqual(registries.panel.list().map((panel) => panel.id), ["plugins"]);
 * ```
 */
export function installCore(
  registries: Registries,
  services: PluginServices,
  capabilities: readonly Capability[],
  strict: boolean,
): void {
  for (const capability of capabilities) {
    const registry = registries[capability.kind] as OwnedRegistry<Capability>;
    const result = registry.install("core", capability, services);
    if (strict && result.status !== "installed") {
      throw new Error(`core contribution failed: ${JSON.stringify(result)}`);
    }
  }
}

// `/set plugin on|off <id>` and `/get plugin <id>`: they act on the runtime when they run.
function settingCommands(runtime: PluginRuntime): CommandCapability[] {
  return [
    {
      kind: "command",
      name: "set",
      root: "set",
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
    {
      kind: "command",
      name: "get",
      root: "get",
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
  ];
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

function compact(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}
