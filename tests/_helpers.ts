// Shared builders for the test suite: plugins with capabilities of every kind, and a runtime
// over fresh registries.

import {
  any,
  type Capability,
  type CapabilityBound,
  type CapabilityKind,
  type Dialect,
  PHASE_HOOK_POINTS,
  type Plugin,
  PluginRuntime,
  type PluginRuntimeOptions,
  type Registries,
} from "@amber/core";
import { createRegistries } from "@amber/registries";

/** A bound that admits everything: for tests about something other than bounds. */
export const OPEN_BOUND: CapabilityBound = {
  tools: any(),
  commands: any(),
  panels: any(),
  segments: any(),
  prompts: any(),
  flavors: any(),
  presets: any(),
  wallets: any(),
  allowances: any(),
  toolGates: any(),
  runEndGuards: any(),
  compactors: any(),
  actionKinds: any(),
  stateKeys: any(),
  phaseHooks: PHASE_HOOK_POINTS,
};

/** A plugin with the given capabilities and an open bound; overrides replace any field. */
export function makePlugin(
  id: string,
  capabilities: readonly Capability[] | (() => readonly Capability[]) = [],
  overrides: Partial<Plugin> = {},
): Plugin {
  return {
    id,
    version: "1.0.0",
    name: `Plugin ${id}`,
    bound: OPEN_BOUND,
    initialize: () => true,
    shutdown: () => {},
    capabilities: typeof capabilities === "function" ? capabilities : () => capabilities,
    ...overrides,
  };
}

/** One capability of `kind` whose registry ids derive from `key` (unique per harness). */
export function capabilityOf(kind: CapabilityKind, key: string): Capability {
  switch (kind) {
    case "tool":
      return {
        kind,
        name: `tool_${key}`,
        tools: [{
          name: `t_${key}`,
          description: `tool ${key}`,
          parameters: { type: "object", properties: {} },
          execute: () => ({ ok: true, output: key }),
        }],
      };
    case "prompt":
      return { kind, name: `p_${key}`, priority: 400, render: () => `block ${key}` };
    case "status":
      return {
        kind,
        name: `s_${key}`,
        priority: 500,
        dropPriority: 10,
        render: () => ({ text: key, tone: "dim" }),
      };
    case "panel":
      return { kind, name: `panel_${key}`, id: `panel_${key}`, title: key, lines: () => [key] };
    case "command":
      return {
        kind,
        name: `cmd_${key}`,
        root: `r${key}`,
        help: key,
        subtree: { go: { help: "go" } },
        handlers: { go: () => key },
      };
    case "provider":
      return {
        kind,
        name: `prov_${key}`,
        flavor: `flavor_${key}`,
        dialect: () => namedDialect(`flavor_${key}`),
        presets: [{
          name: `preset_${key}`,
          flavor: `flavor_${key}`,
          baseUrl: "http://127.0.0.1:9",
          defaultModel: "m",
          requiresKey: false,
        }],
      };
    case "wallet":
      return {
        kind,
        name: `w_${key}`,
        provider: `preset_${key}`,
        fetch: () => Promise.resolve(1),
      };
    case "allowance":
      return {
        kind,
        name: `a_${key}`,
        provider: `preset_${key}`,
        fetch: () => Promise.resolve({ windows: [{ label: "5h", percentUsed: 1 }] }),
      };
    case "hook":
      return { kind, name: `h_${key}`, point: "StepEnd", run: () => ({}) };
    case "gate":
      return { kind, name: `g_${key}`, check: () => ({ kind: "allow" }) };
    case "guard":
      return { kind, name: `guard_${key}`, decide: () => ({ kind: "complete" }) };
    case "compactor":
      return { kind, name: `comp_${key}`, compact: (input, next) => next(input) };
    case "action":
      return {
        kind,
        name: `act_${key}`,
        run: () => Promise.resolve({ ok: true, output: key }),
      };
    case "state":
      return { kind, name: `st_${key}`, initial: 0 };
  }
}

/**
 * A dialect that only has a name: registry tests care which flavor resolves, never about the
 * wire, so every wire method says it was not meant to be called.
 */
export function namedDialect(flavor: string): Dialect {
  const unused = (): never => {
    throw new Error(`the test dialect '${flavor}' has no wire protocol`);
  };
  return {
    flavor,
    chatRequest: unused,
    decoder: unused,
    isRetryable: unused,
    errorMessage: unused,
    isContextOverflow: unused,
  };
}

/** A runtime over fresh registries, in memory unless a config dir is given. */
export function makeRuntime(
  options: Partial<PluginRuntimeOptions> = {},
): { runtime: PluginRuntime; registries: Registries } {
  const registries = options.registries ?? createRegistries({
    coreFlavors: { openai: () => namedDialect("openai") },
  });
  const runtime = new PluginRuntime({ ...options, registries });
  return { runtime, registries };
}

/** Every registry's entries as sorted `kind:owner:id` strings: the harness's contents. */
export function contents(registries: Registries): string[] {
  return Object.entries(registries)
    .flatMap(([kind, registry]) =>
      registry.entries().map((e: { owner: string; id: string }) => `${kind}:${e.owner}:${e.id}`)
    )
    .sort();
}

/** A temporary directory removed by the returned function. */
export async function tempDir(): Promise<{ dir: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "amber-test-" });
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}
