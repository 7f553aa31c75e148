/**
 * The tool capability, and the contract of the registry that holds tools.
 *
 * @module
 */

import type { OwnedRegistry } from "./registry.ts";
import type { PluginServices } from "./services.ts";
import type {
  Tool,
  ToolCallContext,
  ToolDefinition,
  ToolEntry,
  ToolResult,
  ToolView,
} from "./tool.ts";

/**
 * A tool capability: one factory, one contribution, however many tools it returns. An empty
 * list declines.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ToolCapability } from "@amber/core";
 * const capability: ToolCapability = { kind: "tool", name: "greet", tools: () => [] };
 * assert.equal(capability.kind, "tool");
 * ```
 */
export interface ToolCapability {
  /** The dispatch key. */
  readonly kind: "tool";
  /** Unique within the plugin. */
  readonly name: string;
  /** The tools, or a factory that builds them from the harness services. */
  readonly tools: readonly Tool[] | ((services: PluginServices) => readonly Tool[]);
}

/**
 * The tool registry contract.
 */
export interface ToolRegistry extends ToolView, OwnedRegistry<ToolCapability> {
  /** Removes `name` if `owner` owns it; returns whether it did. */
  remove(owner: string, name: string): boolean;
  /** Validates `args` and runs the tool; every failure is an error result. */
  execute(name: string, args: unknown, context?: ToolCallContext): Promise<ToolResult>;
  /**
   * Validates `args` and runs exactly `entry`, one this registry handed out (`get`, `list`),
   * whether or not it is still registered: a step runs the tools it resolved at its start, even
   * when their plugin is switched off before the step ends. An entry it did not hand out is an
   * error result.
   */
  executeEntry(entry: ToolEntry, args: unknown, context?: ToolCallContext): Promise<ToolResult>;
  /** The definitions of every tool, for a request. */
  definitions(): readonly ToolDefinition[];
}
