// A sandboxed plugin's capabilities, resolved in its process: what crosses to the host (a
// `CapabilityDescriptor` per capability, data only) and what stays (the functions, by the name
// the host will call them with). Tool factories run here with the process's services, as the
// host's tool registry would run them in-process; the host's registries then judge the
// descriptors (names, collisions, bounds) exactly as they judge any plugin's contributions.

import type { AllowanceCapability } from "../allowance.ts";
import type { Capability } from "../capability.ts";
import type { CommandCapability } from "../command.ts";
import type { CompactorCapability } from "../compaction.ts";
import type {
  ActionCapability,
  GateCapability,
  GuardCapability,
  HookCapability,
} from "../hooks.ts";
import type { DialectFactory } from "../provider.ts";
import type { PluginServices } from "../services.ts";
import type { Tool } from "../tool.ts";
import { describeValueType } from "../errors.ts";
import type { WalletCapability } from "../wallet.ts";
import type { CapabilityDescriptor, ToolDescriptor } from "./protocol.ts";
import type { Renders } from "./_child_renders.ts";
import { type PreparedParameters, prepareParameters } from "../tool_parameters.ts";
import { messageOf } from "../_message_of.ts";

/** A tool kept in the plugin process, with its parameters prepared. */
export interface ServedTool {
  /** The tool. */
  readonly tool: Tool;
  /** Its parameters' JSON Schema and, for a Standard Schema, its check. */
  readonly parameters: PreparedParameters;
}

/** What stays in the process, by the names the host calls with. */
export interface ServedCapabilities {
  /** What crosses to the host, in the plugin's order. */
  readonly descriptors: readonly CapabilityDescriptor[];
  /** Tools by capability name, then tool name. */
  readonly tools: ReadonlyMap<string, ReadonlyMap<string, ServedTool>>;
  /** Commands by capability name. */
  readonly commands: ReadonlyMap<string, CommandCapability>;
  /** Phase hooks by name. */
  readonly hooks: ReadonlyMap<string, HookCapability>;
  /** Tool gates by name. */
  readonly gates: ReadonlyMap<string, GateCapability>;
  /** Run-end guards by name. */
  readonly guards: ReadonlyMap<string, GuardCapability>;
  /** Compactors by name. */
  readonly compactors: ReadonlyMap<string, CompactorCapability>;
  /** Action kinds by name. */
  readonly actions: ReadonlyMap<string, ActionCapability>;
  /** Wallets by capability name. */
  readonly wallets: ReadonlyMap<string, WalletCapability>;
  /** Allowances by capability name. */
  readonly allowances: ReadonlyMap<string, AllowanceCapability>;
  /** Dialect factories by flavor. */
  readonly dialects: ReadonlyMap<string, DialectFactory>;
}

/** No capabilities: what a plugin serves before `initialize` and after `shutdown`. */
export const NOTHING_SERVED: ServedCapabilities = Object.freeze(emptyTables());

/**
 * Resolves `capabilities` (what `Plugin.capabilities()` returned) for plugin `owner`: the
 * descriptors and the tables, or the reason, naming the plugin and the capability, why the
 * plugin cannot be activated. Renders are tracked in `renders` (cleared first).
 */
export function serveCapabilities(
  owner: string,
  capabilities: unknown,
  services: PluginServices,
  renders: Renders,
): ServedCapabilities | string {
  if (!Array.isArray(capabilities)) {
    return `plugin '${owner}': capabilities() returned ${
      describeValueType(capabilities)
    }, not a list`;
  }
  renders.clear();
  const served = emptyTables();
  for (const item of capabilities as readonly unknown[]) {
    const problem = serveOne(owner, item as Capability, services, renders, served);
    if (problem !== undefined) return problem;
  }
  return served;
}

// The tables while they are filled.
interface Building {
  readonly descriptors: CapabilityDescriptor[];
  readonly tools: Map<string, Map<string, ServedTool>>;
  readonly commands: Map<string, CommandCapability>;
  readonly hooks: Map<string, HookCapability>;
  readonly gates: Map<string, GateCapability>;
  readonly guards: Map<string, GuardCapability>;
  readonly compactors: Map<string, CompactorCapability>;
  readonly actions: Map<string, ActionCapability>;
  readonly wallets: Map<string, WalletCapability>;
  readonly allowances: Map<string, AllowanceCapability>;
  readonly dialects: Map<string, DialectFactory>;
}

function emptyTables(): Building {
  return {
    descriptors: [],
    tools: new Map(),
    commands: new Map(),
    hooks: new Map(),
    gates: new Map(),
    guards: new Map(),
    compactors: new Map(),
    actions: new Map(),
    wallets: new Map(),
    allowances: new Map(),
    dialects: new Map(),
  };
}

function serveOne(
  owner: string,
  capability: Capability,
  services: PluginServices,
  renders: Renders,
  served: Building,
): string | undefined {
  if (typeof capability !== "object" || capability === null) {
    return `plugin '${owner}': a capability is ${describeValueType(capability)}, not an object`;
  }
  const label = `${capability.kind} '${capability.name}' of plugin '${owner}'`;
  const missing = (method: string) => `${label} has no ${method} function`;
  const push = (descriptor: CapabilityDescriptor) => served.descriptors.push(descriptor);
  switch (capability.kind) {
    case "tool": {
      const tools = serveTools(owner, capability.name, capability.tools, services);
      if (typeof tools === "string") return tools;
      served.tools.set(capability.name, tools.table);
      push({ kind: "tool", name: capability.name, tools: tools.descriptors });
      return undefined;
    }
    case "prompt":
      if (typeof capability.render !== "function") return missing("render");
      push({
        kind: "prompt",
        name: capability.name,
        priority: capability.priority,
        text: renders.prompt(capability),
      });
      return undefined;
    case "status":
      if (typeof capability.render !== "function") return missing("render");
      push({
        kind: "status",
        name: capability.name,
        priority: capability.priority,
        dropPriority: capability.dropPriority,
        text: renders.status(capability),
      });
      return undefined;
    case "panel":
      if (typeof capability.lines !== "function") return missing("lines");
      push({
        kind: "panel",
        name: capability.name,
        id: capability.id,
        title: capability.title,
        lines: renders.panel(capability),
        keys: typeof capability.onKey === "function",
      });
      return undefined;
    case "command": {
      const handlers = capability.handlers ?? {};
      served.commands.set(capability.name, capability);
      push({
        kind: "command",
        name: capability.name,
        root: capability.root,
        help: capability.help,
        ...(capability.man !== undefined ? { man: capability.man } : {}),
        subtree: capability.subtree,
        handlers: Object.keys(handlers).filter((path) => typeof handlers[path] === "function"),
      });
      return undefined;
    }
    case "provider": {
      const dialect = typeof capability.dialect === "function";
      if (dialect) served.dialects.set(capability.flavor, capability.dialect!);
      push({
        kind: "provider",
        name: capability.name,
        flavor: capability.flavor,
        presets: capability.presets,
        dialect,
      });
      return undefined;
    }
    case "wallet":
      if (typeof capability.fetch !== "function") return missing("fetch");
      served.wallets.set(capability.name, capability);
      push({
        kind: "wallet",
        name: capability.name,
        provider: capability.provider,
        ...(capability.currency !== undefined ? { currency: capability.currency } : {}),
      });
      return undefined;
    case "allowance":
      if (typeof capability.fetch !== "function") return missing("fetch");
      served.allowances.set(capability.name, capability);
      push({ kind: "allowance", name: capability.name, provider: capability.provider });
      return undefined;
    case "hook":
      if (typeof capability.run !== "function") return missing("run");
      served.hooks.set(capability.name, capability);
      push({ kind: "hook", name: capability.name, point: capability.point });
      return undefined;
    case "gate":
      if (typeof capability.check !== "function") return missing("check");
      served.gates.set(capability.name, capability);
      push({ kind: "gate", name: capability.name });
      return undefined;
    case "guard":
      if (typeof capability.decide !== "function") return missing("decide");
      served.guards.set(capability.name, capability);
      push({ kind: "guard", name: capability.name });
      return undefined;
    case "compactor":
      if (typeof capability.compact !== "function") return missing("compact");
      served.compactors.set(capability.name, capability);
      push({ kind: "compactor", name: capability.name });
      return undefined;
    case "action":
      if (typeof capability.run !== "function") return missing("run");
      served.actions.set(capability.name, capability);
      push({ kind: "action", name: capability.name });
      return undefined;
    case "state":
      push({ kind: "state", name: capability.name, initial: capability.initial });
      return undefined;
    default:
      return `plugin '${owner}': unknown capability kind '${
        String((capability as { kind?: unknown }).kind)
      }'`;
  }
}

// Runs a tool capability's factory (as the tool registry does at install) and prepares each
// tool; an empty list crosses as it is, and the host's registry declines it.
function serveTools(
  owner: string,
  capability: string,
  source: unknown,
  services: PluginServices,
): { table: Map<string, ServedTool>; descriptors: ToolDescriptor[] } | string {
  const label = `tool capability '${capability}' of plugin '${owner}'`;
  let tools: unknown;
  try {
    tools = typeof source === "function" ? source(services) : source;
  } catch (error) {
    return `${label} failed: ${messageOf(error)}`;
  }
  if (!Array.isArray(tools)) {
    return `${label} failed: tools must be an array of tools, got ${describeValueType(tools)}`;
  }
  const table = new Map<string, ServedTool>();
  const descriptors: ToolDescriptor[] = [];
  for (const tool of tools as readonly Tool[]) {
    if (typeof tool !== "object" || tool === null) {
      return `${label} returned ${describeValueType(tool)} instead of a tool`;
    }
    if (typeof tool.name !== "string") return `${label}: a tool's name is not a string`;
    const toolLabel = `tool '${tool.name}' from plugin '${owner}'`;
    if (typeof tool.description !== "string") return `${toolLabel} has no description`;
    if (typeof tool.execute !== "function") return `${toolLabel} has no execute function`;
    const parameters = prepareParameters(tool.parameters, toolLabel);
    if (typeof parameters === "string") return parameters;
    table.set(tool.name, { tool, parameters });
    const descriptor: { -readonly [K in keyof ToolDescriptor]: ToolDescriptor[K] } = {
      name: tool.name,
      description: tool.description,
      parameters: parameters.schema,
      asksApproval: typeof tool.requiresApproval === "function",
    };
    if (tool.verb !== undefined) descriptor.verb = tool.verb;
    if (tool.readOnly !== undefined) descriptor.readOnly = tool.readOnly;
    descriptors.push(descriptor);
  }
  return { table, descriptors };
}
