/**
 * Building the resolved execution environment: a snapshot of the registries, in dependency
 * order, taken at a step boundary. What it runs is what it resolved, for the whole step.
 *
 * @module
 */

import type { ResolvedExecutionEnv } from "../execution_env.ts";
import { type HookCapability, PHASE_HOOK_POINTS, type PhaseHookPoint } from "../hooks.ts";
import type { SealedContext } from "../prompt.ts";
import type { Registries } from "../registries.ts";
import type { NamedEntry, NamedRegistry } from "../registry.ts";
import type { ToolCallContext, ToolEntry } from "../tool.ts";

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
    compactors: Object.freeze(ordered(registries.compactor, rank, "outward")),
    actions: byName(registries.action),
    stateKeys: byName(registries.state),
    assemblePrompt: (sealed: SealedContext) => registries.prompt.assemble(sealed),
    // The tool this snapshot resolved, not whatever the registry holds by then: a plugin switched
    // off mid-step keeps its tools until the step ends (seed 004: the switch shows at the next
    // step boundary).
    executeTool: (name: string, args: unknown, context?: ToolCallContext) => {
      const entry = tools.get(name);
      return entry === undefined
        ? registries.tool.execute(name, args, context)
        : registries.tool.executeEntry(entry, args, context);
    },
  });
}

// Dependency order first (`outward`: the reverse); the registry's own order (registration)
// breaks ties, since sort is stable. The core's entries, owned by no plugin, go first (last).
//
// The compactor chain is outermost first in reverse dependency order: a plugin's compactors wrap
// those of the plugins it requires, so one that extends another's strategy by requiring it sees
// that strategy's result through `next` and has the last word. Within a plugin the first
// registered is outermost; the core's own sit innermost, next to the kernel's default strategy.
function ordered<C>(
  registry: NamedRegistry<C>,
  rank: ReadonlyMap<string, number>,
  direction: "inward" | "outward" = "inward",
): NamedEntry<C>[] {
  const sign = direction === "inward" ? 1 : -1;
  return [...registry.list()].sort((a, b) =>
    sign * ((rank.get(a.owner) ?? -1) - (rank.get(b.owner) ?? -1))
  );
}

function byName<C>(registry: NamedRegistry<C>): ReadonlyMap<string, NamedEntry<C>> {
  return new Map(registry.list().map((entry) => [entry.name, entry]));
}
