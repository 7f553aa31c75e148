/**
 * The neutral conversation every dialect translates to and from.
 *
 * @module
 */

import type { ToolImage } from "./tool.ts";

/**
 * A tool call as the model asked for it, normalised across wire protocols.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ToolCall } from "@amber/core";
 * const call: ToolCall = { id: "call_1", name: "greet", arguments: '{"name":"amber"}' };
 * assert.deepEqual(JSON.parse(call.arguments), { name: "amber" });
 * ```
 */
export interface ToolCall {
  /** The provider's id for the call; tool results answer it. */
  readonly id: string;
  /** The tool's name. */
  readonly name: string;
  /** The arguments as the JSON text the model produced. */
  readonly arguments: string;
  /**
   * An opaque proof the provider attached to the call (Gemini's `thoughtSignature`), sent back
   * with it on the next request.
   */
  readonly signature?: string;
}

/**
 * One message of a conversation.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Message } from "@amber/core";
 * const messages: Message[] = [
 *   { role: "system", content: "You are terse." },
 *   { role: "user", content: "Hi" },
 * ];
 * assert.deepEqual(messages.map((m) => m.role), ["system", "user"]);
 * ```
 */
export type Message =
  | { readonly role: "system"; readonly content: string; readonly source?: string }
  | { readonly role: "user"; readonly content: string }
  | {
    readonly role: "assistant";
    readonly content: string;
    readonly reasoning?: string;
    /** The provider's signature of `reasoning`, sent back with it (Anthropic thinking). */
    readonly reasoningSignature?: string;
    /**
     * The provider's signature of `content` (Gemini's `thoughtSignature` on a text part), sent
     * back with it by the dialect that issued it.
     */
    readonly textSignature?: string;
    /**
     * The wire field `reasoning` came in, where a protocol has several (OpenAI-compatible
     * servers say `reasoning_content` or `reasoning`): a dialect sends the reasoning back in the
     * same field, and only to a server that sent it.
     */
    readonly reasoningField?: string;
    readonly toolCalls?: readonly ToolCall[];
  }
  | {
    readonly role: "tool";
    readonly toolCallId: string;
    readonly name: string;
    readonly content: string;
    readonly isError?: boolean;
    /** Images the tool returned; a dialect sends them to a model that takes images. */
    readonly images?: readonly ToolImage[];
  };
