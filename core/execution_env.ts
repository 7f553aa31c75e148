/**
 * The resolved execution environment: one immutable snapshot of everything the run kernel
 * calls during a step, taken at a step boundary. The runtime builds it; the kernel only reads
 * it.
 *
 * @module
 */

import type {
  ActionCapability,
  GateCapability,
  GuardCapability,
  HookCapability,
  PhaseHookPoint,
  StateKeyCapability,
} from "./hooks.ts";
import type { CompactorCapability } from "./compaction.ts";
import type { AssembledPrompt, SealedContext } from "./prompt.ts";
import type { NamedEntry } from "./registry.ts";
import type { ToolCallContext, ToolDefinition, ToolEntry, ToolResult } from "./tool.ts";

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
  /**
   * Compaction strategies, outermost first (the default strategy is the kernel's, innermost).
   * A plugin's compactors wrap those of the plugins it requires (reverse dependency order), so
   * one that requires another to extend its strategy gets that strategy's result from `next`;
   * within a plugin, the first registered is outermost.
   */
  readonly compactors: readonly NamedEntry<CompactorCapability>[];
  /** Action kinds by name. */
  readonly actions: ReadonlyMap<string, NamedEntry<ActionCapability>>;
  /** State keys by name, with their initial values. */
  readonly stateKeys: ReadonlyMap<string, NamedEntry<StateKeyCapability>>;
  /** Builds the prompt copy: the sealed context plus the prompt blocks. */
  assemblePrompt(sealed: SealedContext): AssembledPrompt;
  /** Validates the arguments and runs a tool; every failure is an error result. */
  executeTool(name: string, args: unknown, context?: ToolCallContext): Promise<ToolResult>;
}
