/**
 * The resolved execution environment: one immutable snapshot of everything the run kernel
 * calls during a step, taken at a step boundary.
 *
 * @module
 */

import type { AssembledPrompt, SealedContext } from "../prompt.ts";
import type {
  ActionCapability,
  GateCapability,
  GuardCapability,
  HookCapability,
  PhaseHookPoint,
  StateKeyCapability,
} from "../hooks.ts";
import { PHASE_HOOK_POINTS } from "../hooks.ts";
import type { Registries } from "../registries.ts";
import type { NamedEntry, NamedRegistry } from "../registry.ts";
import type { ToolCallContext, ToolDefinition, ToolEntry, ToolResult } from "../tool.ts";

/**
 * Everything a step runs with. Hooks, gates and guards are in dependency order (a plugin's
 * after those it requires; within a plugin, in registration order).
 */
export interface ResolvedExecutionEnv {
  /** Identifies this snapshot: it changes whenever anything in it does. */
  readonly version: number;
  /** The active plugins, dependencies first. */
  readonly plugins: readonly string[];
  /** Every tool, static and dynamic, by name. */
  readonly tools: ReadonlyMap<string, ToolEntry>;
  /** The tool definitions for a request. */
  readonly toolDefinitions: readonly ToolDefinition[];
  /** Phase hooks by point. */
  readonly hooks: { readonly [P in PhaseHookPoint]: readonly NamedEntry<HookCapability>[] };
  /** Tool gates. */
  readonly gates: readonly NamedEntry<GateCapability>[];
  /** Run-end guards. */
  readonly guards: readonly NamedEntry<GuardCapability>[];
  /** Action kinds by name. */
  readonly actions: ReadonlyMap<string, NamedEntry<ActionCapability>>;
  /** State keys by name, with their initial values. */
  readonly stateKeys: ReadonlyMap<string, NamedEntry<StateKeyCapability>>;
  /** Builds the prompt copy: the sealed context plus the prompt blocks. */
  assemblePrompt(sealed: SealedContext): AssembledPrompt;
  /** Validates the arguments and runs a tool; every failure is an error result. */
  executeTool(name: string, args: unknown, context?: ToolCallContext): Promise<ToolResult>;
}

/**
 * Snapshots `registries` for the active plugins `order` (dependencies first).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildEnvironment } from "@amber/core/kernel";
 * import { createRegistries } from "@amber/registries";
 * const env = buildEnvironment(createRegistries(), [], 0);
 * assert.equal(env.tools.size, 0);
 * assert.equal(env.hooks.StepStart.length, 0);
 * ```
 */
export function buildEnvironment(
  registries: Registries,
  order: readonly string[],
  version: number,
): ResolvedExecutionEnv {
  const rank = new Map<string, number>();
  order.forEach((id, i) => rank.set(id, i));
  const tools = new Map<string, ToolEntry>();
  for (const entry of registries.tool.list()) tools.set(entry.tool.name, entry);
  const hookList = ordered(registries.hook, rank);
  const hooks = Object.fromEntries(
    PHASE_HOOK_POINTS.map((point) => [
      point,
      Object.freeze(hookList.filter((entry) => entry.capability.point === point)),
    ]),
  ) as { [P in PhaseHookPoint]: readonly NamedEntry<HookCapability>[] };
  return Object.freeze({
    version,
    plugins: Object.freeze([...order]),
    tools,
    toolDefinitions: registries.tool.definitions(),
    hooks: Object.freeze(hooks),
    gates: Object.freeze(ordered(registries.gate, rank)),
    guards: Object.freeze(ordered(registries.guard, rank)),
    actions: byName(registries.action),
    stateKeys: byName(registries.state),
    assemblePrompt: (sealed: SealedContext) => registries.prompt.assemble(sealed),
    executeTool: (name: string, args: unknown, context?: ToolCallContext) =>
      registries.tool.execute(name, args, context),
  });
}

// Dependency order first; the registry's own order (registration) breaks ties, since sort is
// stable. The core's entries, owned by no plugin, go first.
function ordered<C>(
  registry: NamedRegistry<C>,
  rank: ReadonlyMap<string, number>,
): NamedEntry<C>[] {
  return [...registry.list()].sort((a, b) => (rank.get(a.owner) ?? -1) - (rank.get(b.owner) ?? -1));
}

function byName<C>(registry: NamedRegistry<C>): ReadonlyMap<string, NamedEntry<C>> {
  return new Map(registry.list().map((entry) => [entry.name, entry]));
}
