/**
 * Prompt blocks: system text a plugin adds to the prompt copy at every step.
 *
 * @module
 */

import type { Message } from "./message.ts";
import type { OwnedRegistry } from "./registry.ts";

/**
 * A prompt block capability. `render` is called during assembly: pure and fast, no I/O. An empty
 * string omits the block.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { PromptBlockCapability } from "@amber/core";
 * const block: PromptBlockCapability = {
 *   kind: "prompt",
 *   name: "project_facts",
 *   priority: 400,
 *   render: () => "The project uses Deno.",
 * };
 * assert.equal(block.render(), "The project uses Deno.");
 * ```
 */
export interface PromptBlockCapability {
  /** The dispatch key. */
  readonly kind: "prompt";
  /** Unique across the harness. */
  readonly name: string;
  /** Lower comes first; core blocks use 100, 200 and 300. Volatile blocks belong near the tail. */
  readonly priority: number;
  /** The block's text now. */
  render(): string;
}

/**
 * The conversation so far, frozen: assembly never changes it.
 */
export type SealedContext = readonly Message[];

/** The result of assembling a prompt. */
export interface AssembledPrompt {
  /** A new array: the sealed context with the blocks inserted as system messages. */
  readonly messages: readonly Message[];
  /** The blocks that contributed text, in order. */
  readonly blocks: readonly string[];
  /**
   * The first block whose text (or position) differs from the previous assembly: everything
   * from it on misses the server's prefix cache. Undefined when nothing changed.
   */
  readonly firstChanged?: string;
}

/**
 * The prompt registry contract.
 */
export interface PromptRegistry extends OwnedRegistry<PromptBlockCapability> {
  /**
   * Builds the prompt copy: the sealed context's leading system messages, then every non-empty
   * block by (priority, registration), then the rest of the context.
   */
  assemble(sealed: SealedContext): AssembledPrompt;
}
