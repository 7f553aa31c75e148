/**
 * The rules a compaction's result must keep, checked before the kernel takes it from a plugin:
 * a list of well-formed messages in which every tool result answers a call of an assistant
 * message before it, the user's last message kept. What passes is copied, frozen, with only the
 * fields a message has.
 *
 * @module
 */

import type { Message } from "../message.ts";
import { isSummary } from "./_compaction_default.ts";
import { freezeMessage } from "./_snapshot.ts";

/**
 * What is wrong with `messages` as the compaction of `input`, or undefined when nothing is: a
 * list of well-formed messages in which every tool result answers a call of an assistant message
 * before it that no result answered yet, and the user's last message of `input` is kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { conversationProblem } from "./_compaction_check.ts";
 * const input = [{ role: "user" as const, content: "go" }];
 * assert.equal(conversationProblem(input, input), undefined);
 * assert.equal(conversationProblem("x", input), "gave messages that are not a list");
 * assert.equal(conversationProblem([], input), "dropped the user's last message");
 * ```
 */
export function conversationProblem(
  messages: unknown,
  input: readonly Message[],
): string | undefined {
  if (!Array.isArray(messages)) return "gave messages that are not a list";
  // The calls made and not answered yet: a result answers one of them, once.
  const open = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const problem = messageProblem(messages[i]);
    if (problem !== undefined) return `gave a message (at ${i}) that ${problem}`;
    const message = messages[i] as Message;
    if (message.role === "assistant") {
      for (const call of message.toolCalls ?? []) {
        if (open.has(call.id)) return `gave a call id twice (at ${i}: '${call.id}')`;
        open.add(call.id);
      }
    } else if (message.role === "tool" && !open.delete(message.toolCallId)) {
      return `gave a tool result (at ${i}) that answers no earlier call ('${message.toolCallId}')`;
    }
  }
  const last = input.findLast((m) => m.role === "user" && !isSummary(m));
  if (
    last !== undefined &&
    !messages.some((m: Message) => m.role === "user" && m.content === last.content)
  ) return "dropped the user's last message";
  return undefined;
}

function messageProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return "is not a message";
  const m = value as Record<string, unknown>;
  if (typeof m.content !== "string") return "has no text content";
  switch (m.role) {
    case "system":
    case "user":
      return undefined;
    case "assistant": {
      if (m.toolCalls === undefined) return undefined;
      if (!Array.isArray(m.toolCalls)) return "has tool calls that are not a list";
      const bad = m.toolCalls.some((c) =>
        typeof c?.id !== "string" || typeof c?.name !== "string" || typeof c?.arguments !== "string"
      );
      return bad ? "has a tool call without an id, a name or arguments" : undefined;
    }
    case "tool":
      if (typeof m.toolCallId !== "string" || typeof m.name !== "string") {
        return "is a tool result without a call id or a name";
      }
      if (
        m.images !== undefined &&
        (!Array.isArray(m.images) ||
          m.images.some((i) => typeof i?.mimeType !== "string" || typeof i?.data !== "string"))
      ) return "has images that are not a list of images";
      return undefined;
    default:
      return "has no known role";
  }
}

/**
 * A frozen message of the conversation as it is; a plugin's own object becomes a frozen copy of
 * the fields a message has, so freezing never reaches into the plugin and nothing else it put
 * there reaches the transcript.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copyMessage } from "./_compaction_check.ts";
 * const own = { role: "user" as const, content: "hi", extra: 1 };
 * const copy = copyMessage(own);
 * assert.deepEqual(copy, { role: "user", content: "hi" });
 * assert.ok(Object.isFrozen(copy) && !Object.isFrozen(own));
 * ```
 */
export function copyMessage(message: Message): Message {
  if (Object.isFrozen(message)) return message;
  return freezeMessage(structuredClone(pick(message)));
}

function pick(message: Message): Message {
  switch (message.role) {
    case "system":
      return message.source === undefined
        ? { role: "system", content: message.content }
        : { role: "system", content: message.content, source: message.source };
    case "user":
      return { role: "user", content: message.content };
    case "assistant":
      return {
        role: "assistant",
        content: message.content,
        ...(message.reasoning === undefined ? {} : { reasoning: message.reasoning }),
        ...(message.reasoningSignature === undefined
          ? {}
          : { reasoningSignature: message.reasoningSignature }),
        ...(message.reasoningField === undefined ? {} : { reasoningField: message.reasoningField }),
        ...(message.textSignature === undefined ? {} : { textSignature: message.textSignature }),
        ...(message.toolCalls === undefined ? {} : {
          toolCalls: message.toolCalls.map((c) => ({
            id: c.id,
            name: c.name,
            arguments: c.arguments,
            ...(c.signature === undefined ? {} : { signature: c.signature }),
          })),
        }),
      };
    case "tool":
      return {
        role: "tool",
        toolCallId: message.toolCallId,
        name: message.name,
        content: message.content,
        ...(message.isError === undefined ? {} : { isError: message.isError }),
        ...(message.images === undefined ? {} : {
          images: message.images.map(({ mimeType, data }) => ({ mimeType, data })),
        }),
      };
  }
}
