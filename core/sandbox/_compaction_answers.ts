// What a plugin process says about a compaction, checked before the host uses it: the process is
// not trusted, so a hook's adjustment, a compactor's result and what it asks of the host
// (`compaction.summarize`, `compaction.next`) must have the shapes the kernel reads. Messages are
// copied field by field, so nothing the process added beside a message's fields reaches the
// transcript. A bad answer is a `SandboxedCompactionError` naming the plugin.

import type { CompactionAdjustment, CompactionResult, SummaryRequest } from "../compaction.ts";
import { AmberError } from "../errors.ts";
import type { Message, ToolCall } from "../message.ts";
import type { ToolImage } from "../tool.ts";
import type { Refuse } from "./_dialect_answers.ts";

/**
 * A sandboxed plugin's hook or compactor answered a compaction with something the host cannot
 * use, or asked the host for one with something it cannot read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SandboxedCompactionError } from "@amber/core/sandbox";
 * const error = new SandboxedCompactionError(
 *   "trim",
 *   "compactor 'trim' of plugin 'trim'",
 *   "answered a result without a strategy",
 * );
 * assert.equal(error.name, "SandboxedCompactionError");
 * assert.equal(error.message, "compactor 'trim' of plugin 'trim' answered a result without a strategy");
 * ```
 */
export class SandboxedCompactionError extends AmberError {
  /** The plugin. */
  readonly pluginId: string;
  /** Creates the error; `what` (the hook or compactor, naming its plugin) leads the message. */
  constructor(pluginId: string, what: string, message: string, options?: ErrorOptions) {
    super(`${what} ${message}`, options);
    this.name = "SandboxedCompactionError";
    this.pluginId = pluginId;
  }
}

/** A hook's `compaction`: veto and instructions text, keepTurns a whole number from 1. */
export function checkAdjustment(value: unknown, refuse: Refuse): CompactionAdjustment {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    refuse("answered a compaction adjustment that is not an object");
  }
  const { veto, instructions, keepTurns } = value as Record<string, unknown>;
  if (veto !== undefined && typeof veto !== "string") {
    refuse("answered a compaction veto that is not text");
  }
  if (instructions !== undefined && typeof instructions !== "string") {
    refuse("answered compaction instructions that are not text");
  }
  if (keepTurns !== undefined && !isTurns(keepTurns)) {
    refuse("answered a keepTurns that is not a whole number from 1");
  }
  return {
    ...(veto === undefined ? {} : { veto }),
    ...(instructions === undefined ? {} : { instructions }),
    ...(keepTurns === undefined ? {} : { keepTurns }),
  } as CompactionAdjustment;
}

/** A compactor's result, or what `next` gave it: a strategy's name and a list of messages. */
export function checkResult(value: unknown, refuse: Refuse): CompactionResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    refuse("answered a compaction result that is not an object");
  }
  const { strategy, messages } = value as Record<string, unknown>;
  if (typeof strategy !== "string" || strategy === "") {
    refuse("answered a compaction result without a strategy name");
  }
  return { strategy, messages: checkMessages(messages, refuse, "answered") };
}

/** What a compactor asked to have summarized. */
export function checkSummaryRequest(value: unknown, refuse: Refuse): SummaryRequest {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    refuse("asked for a summary with what is not a summary request");
  }
  const { system, messages, model, maxTokens } = value as Record<string, unknown>;
  if (typeof system !== "string") refuse("asked for a summary without system instructions");
  if (model !== undefined && (typeof model !== "string" || model === "")) {
    refuse("asked for a summary by a model whose name is not text");
  }
  if (maxTokens !== undefined && !isTurns(maxTokens)) {
    refuse("asked for a summary whose maxTokens is not a whole number from 1");
  }
  return {
    system,
    messages: checkMessages(messages, refuse, "asked for a summary of"),
    ...(model === undefined ? {} : { model }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
  } as SummaryRequest;
}

/** What a compactor changed before it called `next`: messages, turns kept, instructions. */
export function checkNextInput(
  value: unknown,
  refuse: Refuse,
): { messages?: Message[]; keepTurns?: number; instructions?: string } {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    refuse("called next with what is not a compaction input");
  }
  const { messages, keepTurns, instructions } = value as Record<string, unknown>;
  if (keepTurns !== undefined && !isTurns(keepTurns)) {
    refuse("called next with a keepTurns that is not a whole number from 1");
  }
  if (instructions !== undefined && typeof instructions !== "string") {
    refuse("called next with instructions that are not text");
  }
  return {
    ...(messages === undefined
      ? {}
      : { messages: checkMessages(messages, refuse, "called next with") }),
    ...(keepTurns === undefined ? {} : { keepTurns: keepTurns as number }),
    ...(instructions === undefined ? {} : { instructions }),
  };
}

/**
 * A list of messages, each copied with only the fields its role has. `how` says what the process
 * did with them, for the refusal ("answered", "called next with").
 */
export function checkMessages(value: unknown, refuse: Refuse, how: string): Message[] {
  if (!Array.isArray(value)) refuse(`${how} messages that are not a list`);
  const messages: Message[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const message = copyMessage(value[i]);
    if (typeof message === "string") refuse(`${how} message #${i + 1}, which ${message}`);
    messages[i] = message;
  }
  return messages;
}

// The message as a fresh object of its role's fields, or what is wrong with it.
function copyMessage(value: unknown): Message | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "is not an object";
  }
  const m = value as Record<string, unknown>;
  if (!ROLES.has(m.role)) {
    return `has role ${JSON.stringify(m.role) ?? "undefined"}, not system, user, assistant or tool`;
  }
  if (typeof m.content !== "string") return "has no text content";
  const content = m.content;
  switch (m.role) {
    case "user":
      return { role: "user", content };
    case "system":
      if (!optionalText(m.source)) return "has a source that is not text";
      return m.source === undefined
        ? { role: "system", content }
        : { role: "system", content, source: m.source as string };
    case "assistant": {
      if (!optionalText(m.reasoning)) return "has reasoning that is not text";
      if (!optionalText(m.reasoningSignature)) return "has a reasoning signature that is not text";
      if (!optionalText(m.reasoningField)) return "has a reasoning field name that is not text";
      if (!optionalText(m.textSignature)) return "has a text signature that is not text";
      let toolCalls: ToolCall[] | undefined;
      if (m.toolCalls !== undefined) {
        if (!Array.isArray(m.toolCalls)) return "has tool calls that are not a list";
        toolCalls = [];
        for (const call of m.toolCalls as unknown[]) {
          const copied = copyCall(call);
          if (copied === undefined) return "has a tool call without a text id, name and arguments";
          toolCalls.push(copied);
        }
      }
      return {
        role: "assistant",
        content,
        ...(m.reasoning === undefined ? {} : { reasoning: m.reasoning as string }),
        ...(m.reasoningSignature === undefined
          ? {}
          : { reasoningSignature: m.reasoningSignature as string }),
        // What the provider needs back (DeepSeek's reasoning field, Gemini's text signature).
        ...(m.reasoningField === undefined ? {} : { reasoningField: m.reasoningField as string }),
        ...(m.textSignature === undefined ? {} : { textSignature: m.textSignature as string }),
        ...(toolCalls === undefined ? {} : { toolCalls }),
      };
    }
    case "tool": {
      if (typeof m.toolCallId !== "string" || typeof m.name !== "string") {
        return "is a tool result without the id and name of its call";
      }
      if (m.isError !== undefined && typeof m.isError !== "boolean") {
        return "has an isError that is not a boolean";
      }
      let images: ToolImage[] | undefined;
      if (m.images !== undefined) {
        if (!Array.isArray(m.images)) return "has images that are not a list";
        images = [];
        for (const image of m.images as unknown[]) {
          const { mimeType, data } = (image ?? {}) as Record<string, unknown>;
          if (typeof mimeType !== "string" || typeof data !== "string") {
            return "has an image without a text mimeType and data";
          }
          images.push({ mimeType, data });
        }
      }
      return {
        role: "tool",
        toolCallId: m.toolCallId,
        name: m.name,
        content,
        ...(m.isError === undefined ? {} : { isError: m.isError as boolean }),
        ...(images === undefined ? {} : { images }),
      };
    }
  }
  return "has no role";
}

const ROLES: ReadonlySet<unknown> = new Set(["system", "user", "assistant", "tool"]);

function copyCall(value: unknown): ToolCall | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { id, name, arguments: args, signature } = value as Record<string, unknown>;
  if (typeof id !== "string" || typeof name !== "string" || typeof args !== "string") {
    return undefined;
  }
  if (!optionalText(signature)) return undefined;
  return signature === undefined
    ? { id, name, arguments: args }
    : { id, name, arguments: args, signature: signature as string };
}

function optionalText(value: unknown): boolean {
  return value === undefined || typeof value === "string";
}

// A count of turns or tokens: a whole number from 1.
function isTurns(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}
