/**
 * The size of a request in tokens, estimated from its bytes before it is sent: the characters of
 * every message (text, reasoning, tool-call arguments, a fixed cost per image), of the tool
 * definitions and of the prompt blocks, divided by a characters-per-token ratio. The ratio starts
 * conservative and is calibrated from the prompt tokens a provider reports for the request before
 * (local servers often report none). A message's size is computed once, when it is frozen, and
 * the committed conversation is summed incrementally, so a step costs O(its new messages).
 *
 * @module
 */

import type { Message } from "../message.ts";
import type { ToolDefinition } from "../tool.ts";

/** Characters per token before any provider reported a count: low, so estimates run high. */
export const DEFAULT_CHARS_PER_TOKEN = 3.5;

/** What one image counts, in characters (about 1,600 tokens at the default ratio). */
export const IMAGE_CHARS = 5_600;

// The role, the separators and the ids a protocol wraps every message in.
const MESSAGE_OVERHEAD = 16;

// A calibration outside these bounds says more about the server than about the text.
const MIN_RATIO = 1.5;
const MAX_RATIO = 6;

const messageSizes = new WeakMap<Message, number>();
const toolSizes = new WeakMap<readonly ToolDefinition[], number>();

/**
 * The characters one message counts; cached for a frozen message, which cannot change.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { messageChars } from "./_estimate.ts";
 * assert.equal(messageChars({ role: "user", content: "0123456789" }), 26);
 * ```
 */
export function messageChars(message: Message): number {
  const cached = messageSizes.get(message);
  if (cached !== undefined) return cached;
  let chars = MESSAGE_OVERHEAD + message.content.length;
  if (message.role === "assistant") {
    chars += message.reasoning?.length ?? 0;
    chars += message.reasoningSignature?.length ?? 0;
    for (const call of message.toolCalls ?? []) {
      chars += MESSAGE_OVERHEAD + call.name.length + call.arguments.length + call.id.length;
    }
  } else if (message.role === "tool") {
    chars += message.name.length + message.toolCallId.length;
    chars += (message.images?.length ?? 0) * IMAGE_CHARS;
  }
  if (Object.isFrozen(message)) messageSizes.set(message, chars);
  return chars;
}

/**
 * The characters of `messages`, summed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { messagesChars } from "./_estimate.ts";
 * assert.equal(messagesChars([{ role: "user", content: "ab" }, { role: "user", content: "c" }]), 35);
 * ```
 */
export function messagesChars(messages: readonly Message[]): number {
  let chars = 0;
  for (const message of messages) chars += messageChars(message);
  return chars;
}

/**
 * The characters the tool definitions count (their JSON); cached per definitions list, which an
 * environment keeps for as long as its tools do not change.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolChars } from "./_estimate.ts";
 * const tools = [{ name: "t", description: "d", parameters: { type: "object" } }];
 * assert.equal(toolChars(tools), JSON.stringify(tools).length);
 * ```
 */
export function toolChars(tools: readonly ToolDefinition[]): number {
  let chars = toolSizes.get(tools);
  if (chars === undefined) {
    chars = tools.length === 0 ? 0 : JSON.stringify(tools).length;
    toolSizes.set(tools, chars);
  }
  return chars;
}

/**
 * The token estimate of one run's requests. It sums the committed conversation incrementally
 * (only the messages added since it last looked) and converts characters to tokens with a
 * ratio calibrated from what the provider reported.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RequestSize } from "./_estimate.ts";
 * const size = new RequestSize();
 * const conversation = [{ role: "user" as const, content: "x".repeat(684) }];
 * assert.equal(size.tokens(size.conversationChars(conversation)), 200);
 * size.calibrate(700, 175);
 * assert.equal(size.tokens(700), 175);
 * ```
 */
export class RequestSize {
  /** The characters per token now. */
  charsPerToken: number = DEFAULT_CHARS_PER_TOKEN;
  #counted = 0;
  #chars = 0;

  /**
   * The characters of `conversation`, which only grows between calls (or was replaced, after a
   * compaction: then {@linkcode RequestSize.reset} first).
   */
  conversationChars(conversation: readonly Message[]): number {
    if (conversation.length < this.#counted) this.reset();
    for (let i = this.#counted; i < conversation.length; i++) {
      this.#chars += messageChars(conversation[i]);
    }
    this.#counted = conversation.length;
    return this.#chars;
  }

  /** Forgets the running sum: the conversation was replaced. */
  reset(): void {
    this.#counted = 0;
    this.#chars = 0;
  }

  /** The tokens `chars` characters make. */
  tokens(chars: number): number {
    return Math.ceil(chars / this.charsPerToken);
  }

  /**
   * Learns the ratio from a request of `chars` characters the provider counted as
   * `promptTokens`; a count of 0 (a server that reports nothing useful) teaches nothing.
   */
  calibrate(chars: number, promptTokens: number): void {
    if (!(promptTokens > 0) || !(chars > 0)) return;
    this.charsPerToken = Math.min(MAX_RATIO, Math.max(MIN_RATIO, chars / promptTokens));
  }
}
