/**
 * Tools: what a model can call, and the contract of the registry that holds them.
 *
 * @module
 */

import type { OwnedRegistry } from "./registry.ts";
import type { PluginServices } from "./services.ts";

/** A JSON Schema object, as the OpenAI `parameters` field takes it. */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * A Standard Schema (zod 4, valibot, ...) that can also describe itself as JSON Schema. Tools
 * may declare their parameters with one; the registry converts and validates without importing
 * the library that made it.
 */
export interface StandardJsonSchema {
  /** The Standard Schema interface. */
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) =>
      | StandardResult
      | Promise<StandardResult>;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

/** What a Standard Schema's `validate` returns. */
export type StandardResult =
  | { readonly value: unknown; readonly issues?: undefined }
  | {
    readonly issues: ReadonlyArray<
      {
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>;
      }
    >;
  };

/**
 * The outcome of running a tool. Errors are returned here, never thrown.
 *
 * @example
 * ```ts
 * import type { ToolResult } from "@amber/core";
 * const ok: ToolResult = { ok: true, output: "Hello, amber!" };
 * const bad: ToolResult = { ok: false, output: "", error: "name: expected string" };
 * ```
 */
export interface ToolResult {
  /** Whether the tool did what it was asked. */
  readonly ok: boolean;
  /** Text for the model. */
  readonly output: string;
  /** What went wrong, when `ok` is false. */
  readonly error?: string;
  /** Structured data for the host; never sent to the model. */
  readonly data?: unknown;
}

/** What a tool receives besides its arguments. */
export interface ToolCallContext {
  /** Aborted when the run is cancelled; long work must stop when it fires. */
  readonly signal: AbortSignal;
}

/**
 * A tool a model can call.
 *
 * @example
 * ```ts
 * import type { Tool } from "@amber/core";
 * const greet: Tool = {
 *   name: "greet",
 *   description: "Greet someone by name.",
 *   parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
 *   readOnly: true,
 *   execute: (args) => ({ ok: true, output: `Hello, ${(args as { name: string }).name}!` }),
 * };
 * ```
 */
export interface Tool {
  /** Unique across the harness: `[A-Za-z0-9_-]{1,64}`. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The arguments: a JSON Schema object or a Standard Schema that converts to one. */
  readonly parameters: JsonSchema | StandardJsonSchema;
  /** The word the host shows while it runs ("reading", "searching"). */
  readonly verb?: string;
  /** Whether the tool only reads. */
  readonly readOnly?: boolean;
  /** Whether this call needs the user's approval. */
  requiresApproval?(args: unknown): boolean;
  /** A one-line summary of the call for the host. */
  summarize?(args: unknown): string;
  /** Runs the tool with validated arguments. */
  execute(args: unknown, context: ToolCallContext): ToolResult | Promise<ToolResult>;
}

/**
 * A tool capability: one factory, one contribution, however many tools it returns. An empty
 * list declines.
 *
 * @example
 * ```ts
 * import type { ToolCapability } from "@amber/core";
 * const capability: ToolCapability = { kind: "tool", name: "greet", tools: () => [] };
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

/** A tool's definition as a dialect sends it to the model. */
export interface ToolDefinition {
  /** The tool's name. */
  readonly name: string;
  /** The tool's description. */
  readonly description: string;
  /** The parameters as JSON Schema. */
  readonly parameters: JsonSchema;
}

/** One registered tool with its owner. */
export interface ToolEntry {
  /** The tool. */
  readonly tool: Tool;
  /** The plugin that contributed it. */
  readonly owner: string;
  /** Its parameters as JSON Schema. */
  readonly schema: JsonSchema;
}

/**
 * The read-only view of the tools a plugin's context gets.
 */
export interface ToolView {
  /** The tool called `name`, if any. */
  get(name: string): ToolEntry | undefined;
  /** Every tool, in registration order. */
  list(): readonly ToolEntry[];
}

/**
 * The tool registry contract.
 */
export interface ToolRegistry extends ToolView, OwnedRegistry<ToolCapability> {
  /** Removes `name` if `owner` owns it; returns whether it did. */
  remove(owner: string, name: string): boolean;
  /** Validates `args` and runs the tool; every failure is an error result. */
  execute(name: string, args: unknown, context?: ToolCallContext): Promise<ToolResult>;
  /** The definitions of every tool, for a request. */
  definitions(): readonly ToolDefinition[];
}
