// A varied conversation for the OpenAI dialects' body tests: system prompts (one in the middle),
// several turns, text beside tool calls, empty arguments, several calls in one message, tool
// errors, images of accepted and refused types, empty tool output beside an image, reasoning
// that records no field (as every message did before fields were recorded), and text with
// characters JSON must escape.

import type { ChatRequest, Message, ToolDefinition } from "@amber/core";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** The tools offered in every request. */
export const TOOLS: readonly ToolDefinition[] = [
  {
    name: "read",
    description: "Reads a file.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
  { name: "screenshot", description: "Takes a screenshot.", parameters: { type: "object" } },
];

/** The conversation, in order. */
export const CONVERSATION: readonly Message[] = [
  { role: "system", content: 'You are terse.\nQuote paths with "double quotes".' },
  { role: "user", content: "Read the README and show me the screen." },
  {
    role: "assistant",
    content: "",
    reasoning: "Two things to do; both tools at once.",
    toolCalls: [
      { id: "call_1", name: "read", arguments: '{"path":"README.md"}' },
      { id: "call_2", name: "screenshot", arguments: "" },
    ],
  },
  { role: "tool", toolCallId: "call_1", name: "read", content: "# amber\n\tA tool: é😀 \u2028" },
  {
    role: "tool",
    toolCallId: "call_2",
    name: "screenshot",
    content: "",
    images: [{ mimeType: "image/png", data: PNG }, { mimeType: "image/bmp", data: "Qk0=" }],
  },
  { role: "assistant", content: "The README says amber; the screen shows one pixel." },
  { role: "user", content: "Now read a missing file." },
  {
    role: "assistant",
    content: "Trying.",
    toolCalls: [{ id: "call_3", name: "read", arguments: '{"path":"nope"}' }],
  },
  {
    role: "tool",
    toolCallId: "call_3",
    name: "read",
    content: "no such file: nope",
    isError: true,
  },
  { role: "system", content: "Reminder: stay in the workspace.", source: "plugin" },
  {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "call_4", name: "screenshot", arguments: "{}" }],
  },
  {
    role: "tool",
    toolCallId: "call_4",
    name: "screenshot",
    content: "two images",
    images: [{ mimeType: "image/jpeg", data: "/9j/4AAQ" }, {
      mimeType: "image/webp",
      data: "UklGRg==",
    }],
  },
  { role: "assistant", content: "It is missing; here are two more screens." },
];

/** The request for the first `count` messages of the conversation (all when omitted). */
export function conversationRequest(messages: readonly Message[] = CONVERSATION): ChatRequest {
  return {
    model: "gpt-4.1",
    messages,
    tools: TOOLS,
    maxTokens: 2048,
    temperature: 0.5,
    reasoningEffort: "medium",
  };
}

/** A deep copy of `value`, frozen throughout, as the kernel commits messages. */
export function deepFrozen<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) deepFrozen((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}
