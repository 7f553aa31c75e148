// How a plugin process estimates tokens for its compactor. `CompactionInput.estimate` is
// synchronous, so it cannot ask the host; the host sends its own estimate of the conversation as
// tokens per character, and the process scales the characters of whatever it is asked about.
// Both sides count characters here, the same way.

import type { Message } from "../message.ts";

/**
 * The characters `messages` carry: text, reasoning, tool-call names and arguments, and the ids
 * that tie results to calls.
 */
export function messageChars(messages: readonly Message[]): number {
  let chars = 0;
  for (const message of messages) {
    chars += message.content.length;
    if (message.role === "assistant") {
      chars += message.reasoning?.length ?? 0;
      for (const call of message.toolCalls ?? []) {
        chars += call.id.length + call.name.length + call.arguments.length;
      }
    } else if (message.role === "tool") {
      chars += message.toolCallId.length + message.name.length;
    }
  }
  return chars;
}

// What a message of `PROBE_CHARS` characters is asked about when the conversation has none.
const PROBE_CHARS = 4_000;

/**
 * The host's tokens per character for `messages`, by its `estimate`. An empty conversation is
 * measured on a probe message instead, so the ratio is never zero.
 */
export function tokensPerChar(
  messages: readonly Message[],
  estimate: (messages: readonly Message[]) => number,
): number {
  const chars = messageChars(messages);
  if (chars > 0) return estimate(messages) / chars;
  return estimate([{ role: "user", content: "x".repeat(PROBE_CHARS) }]) / PROBE_CHARS;
}

// A ratio to fall back on when the host sent none that is usable: 3.5 characters per token, low,
// so estimates run high.
const FALLBACK_RATIO = 1 / 3.5;

/** The plugin process's estimate of `messages`: their characters at the host's ratio. */
export function scaledEstimate(messages: readonly Message[], ratio: unknown): number {
  const usable = typeof ratio === "number" && Number.isFinite(ratio) && ratio > 0;
  return Math.ceil(messageChars(messages) * (usable ? ratio : FALLBACK_RATIO));
}
