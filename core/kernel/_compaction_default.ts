/**
 * The default compaction strategy, innermost in the compactor chain. In order, stopping as soon
 * as the request fits the target (half the window, or half the request when no window is known):
 *
 * 1. Tool output older than the user turns kept verbatim is replaced by a short stub naming the
 *    tool, what it was called on and its size, oldest first.
 * 2. The part before the kept turns is summarized by the model. When the kept turns alone do not
 *    fit (one long turn of many tool calls), tool output inside them is stubbed too (never that
 *    of the last two model steps), and the summary reaches into the turn, its user message kept.
 *
 * Every file path found in tool-call arguments, and the last `todowrite` list, are written into
 * the summary message as they are, so they survive a poor summary; when the summary call fails,
 * the summary message carries only them and says so.
 *
 * Prefix stability: the leading system messages are always kept as they are (with the prompt
 * blocks the kernel places after them and the tool definitions, the provider's cached prefix),
 * and every message before the first one changed is kept as the same object, so a stub-only
 * compaction keeps the cache (and each message's serialization) up to the oldest stubbed output.
 *
 * @module
 */

import type { CompactionInput, CompactionResult } from "../compaction.ts";
import { describeError } from "../errors.ts";
import type { Message, ToolCall } from "../message.ts";
import { extractFiles, extractTodos, SUMMARY_HEADER } from "./_compaction_extract.ts";
import { DEFAULT_CHARS_PER_TOKEN } from "./_estimate.ts";

/** The strategy's name in results and records. */
export const DEFAULT_STRATEGY = "default";

/** What the default strategy gives: a result, and a note when its summary call failed. */
export interface DefaultOutcome extends CompactionResult {
  /** Why the result is mechanical only (the summary call failed), when it is. */
  readonly note?: string;
}

// A stub replaces output longer than this; shorter output is cheaper than its stub.
const STUB_MIN_CHARS = 300;
// The model steps at the end whose tool results are never stubbed: the model is working on them.
const RECENT_STEPS = 2;
// A tool result's text in the transcript the summarizer reads, tried in turn until it fits.
const RESULT_CLIPS = [1_500, 400, 100];

const SUMMARY_SYSTEM =
  "You compact the conversation of a coding agent so that its work can go on in a smaller " +
  "context. Write a summary from which the agent can continue without the original messages. " +
  "Keep what the user asked for (in their words where short), every file path that was read, " +
  "created or changed and what was learned or done to it, every decision and its reason, " +
  "errors met and how they were resolved, the todo list with what is in progress, and the next " +
  "step. Be concrete and brief; write no greeting.";

/**
 * Compacts `input.messages` by the default strategy (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Message } from "@amber/core";
 * import { defaultCompaction } from "./_compaction_default.ts";
 * const messages: Message[] = [
 *   { role: "system", content: "You code." },
 *   { role: "user", content: "Read a.ts" },
 *   { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read", arguments: '{"path":"a.ts"}' }] },
 *   { role: "tool", toolCallId: "c1", name: "read", content: "x".repeat(5000) },
 *   { role: "assistant", content: "Done." },
 *   { role: "user", content: "Now b.ts" },
 *   { role: "assistant", content: "Sure." },
 *   { role: "user", content: "Thanks" },
 * ];
 * const result = await defaultCompaction({
 *   reason: "manual", tokens: 1500, budget: 2000, threshold: 1700, keepTurns: 2, messages,
 *   state: new Map(), signal: new AbortController().signal,
 *   summarize: () => Promise.reject(new Error("not needed")),
 *   estimate: (m) => Math.ceil(m.reduce((n, x) => n + x.content.length, 0) / 3.5),
 * });
 * assert.equal(result.messages[0], messages[0]);
 * assert.match(result.messages[3].content, /^\[tool output removed by compaction: read a\.ts, 5,000 chars\]$/);
 * ```
 */
export async function defaultCompaction(input: CompactionInput): Promise<DefaultOutcome> {
  const work: Message[] = [...input.messages];
  const target = input.budget > 0 ? Math.floor(input.budget / 2) : Math.floor(input.tokens / 2);
  let tokens = input.estimate(work);
  const fits = () => tokens <= target;
  const mechanical = (): DefaultOutcome => ({ messages: work, strategy: DEFAULT_STRATEGY });
  if (fits()) return mechanical();

  const lead = leadingSystem(work);
  const calls = callsById(work);
  const users = realUsers(work);
  const keep = Math.max(1, Math.floor(input.keepTurns));
  const split = users.length >= keep ? users[users.length - keep] : lead;
  const recent = recentStart(work, lead);

  const stub = (from: number, to: number): void => {
    for (let i = from; i < to && !fits(); i++) {
      const message = work[i];
      if (message.role !== "tool") continue;
      const stubbed = stubOf(message, calls.get(message.toolCallId));
      if (stubbed === undefined) continue;
      tokens -= input.estimate([message]) - input.estimate([stubbed]);
      work[i] = stubbed;
    }
  };
  stub(lead, split);
  if (fits()) return mechanical();

  // The kept turns alone do not fit beside a summary (a quarter of the target is left for it):
  // reach into them, sparing the last model steps.
  let cut = split;
  const tail = input.estimate([...work.slice(0, lead), ...work.slice(split)]);
  if (tail > target * 0.75) {
    stub(split, recent);
    if (fits()) return mechanical();
    cut = Math.max(split, recent);
  }
  if (cut <= lead) return mechanical();

  const range = work.slice(lead, cut);
  const original = input.messages.slice(lead, cut);
  const lastUser = users.at(-1);
  const keptUser = lastUser !== undefined && lastUser >= lead && lastUser < cut
    ? work[lastUser]
    : undefined;
  let text: string;
  let note: string | undefined;
  try {
    text = await input.summarize({
      system: input.instructions
        ? `${SUMMARY_SYSTEM}\nThe user asks the summary to keep: ${input.instructions}`
        : SUMMARY_SYSTEM,
      messages: [{ role: "user", content: transcriptText(original, summaryChars(input, target)) }],
      maxTokens: Math.min(4096, Math.max(256, Math.floor(target / 4))),
    });
    if (text.trim() === "") throw new Error("the model answered with no text");
  } catch (error) {
    note = `the summary failed (${describeError(error)}); kept what could be extracted`;
    text = "(The model's summary failed; what follows was extracted from the messages.)\n" +
      requestsOf(range);
  }
  const summary: Message = {
    role: "user",
    content: summaryText(text.trim(), extractFiles(range), extractTodos(input.messages, range)),
  };
  const messages = [
    ...work.slice(0, lead),
    ...(keptUser === undefined ? [] : [keptUser]),
    summary,
    ...work.slice(cut),
  ];
  return note === undefined
    ? { messages, strategy: DEFAULT_STRATEGY }
    : { messages, strategy: DEFAULT_STRATEGY, note };
}

/**
 * Whether a message is a summary a compaction wrote (not a turn of the user's).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSummary } from "./_compaction_default.ts";
 * assert.equal(isSummary({ role: "user", content: "hi" }), false);
 * ```
 */
export function isSummary(message: Message): boolean {
  return message.role === "user" && message.content.startsWith(SUMMARY_HEADER);
}

/**
 * The indexes of the user's own messages (summaries left out), in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { realUsers } from "./_compaction_default.ts";
 * assert.deepEqual(realUsers([{ role: "system", content: "s" }, { role: "user", content: "u" }]), [1]);
 * ```
 */
export function realUsers(messages: readonly Message[]): number[] {
  const users: number[] = [];
  messages.forEach((message, i) => {
    if (message.role === "user" && !isSummary(message)) users.push(i);
  });
  return users;
}

function leadingSystem(messages: readonly Message[]): number {
  let lead = 0;
  while (lead < messages.length && messages[lead].role === "system") lead++;
  return lead;
}

function callsById(messages: readonly Message[]): Map<string, ToolCall> {
  const calls = new Map<string, ToolCall>();
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const call of message.toolCalls ?? []) calls.set(call.id, call);
  }
  return calls;
}

// Where the last model steps begin: the index of the RECENT_STEPS-th assistant message from the
// end (a tool result always follows its call, so the tail never starts with an orphan).
function recentStart(messages: readonly Message[], lead: number): number {
  let seen = 0;
  for (let i = messages.length - 1; i >= lead; i--) {
    if (messages[i].role === "assistant" && ++seen === RECENT_STEPS) return i;
  }
  return lead;
}

function stubOf(
  message: Message & { role: "tool" },
  call: ToolCall | undefined,
): Message | undefined {
  const images = message.images?.length ?? 0;
  if (message.content.length < STUB_MIN_CHARS && images === 0) return undefined;
  const on = call === undefined ? "" : ` ${calledOn(call)}`;
  const size = `${message.content.length.toLocaleString("en-US")} chars` +
    (images > 0 ? `, ${images} image${images === 1 ? "" : "s"}` : "");
  return Object.freeze({
    role: "tool",
    toolCallId: message.toolCallId,
    name: message.name,
    content: `[tool output removed by compaction: ${message.name}${on}, ${size}]`,
    ...(message.isError ? { isError: true } : {}),
  });
}

// What a call was made on: its path, pattern or command when it has one, else its arguments.
function calledOn(call: ToolCall): string {
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    args = undefined;
  }
  if (typeof args === "object" && args !== null) {
    const record = args as Record<string, unknown>;
    for (const key of ["path", "file_path", "filePath", "pattern", "command", "url", "query"]) {
      const value = record[key];
      if (typeof value === "string" && value !== "") return clip(value, 120);
    }
  }
  return clip(call.arguments, 80);
}

// The start of `text` in `chars` characters, ending in "…". It ends at a token's end when it can,
// so a token (a key in a command) is kept whole or not at all: a session's redaction of secrets
// finds only whole ones.
function clip(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const cut = text.slice(0, chars - 1);
  const token = cut.search(/[^\s"'`=:,;]+$/);
  return `${token > 0 && !/[\s"'`=:,;]/.test(text[chars - 1]) ? cut.slice(0, token) : cut}…`;
}

// The characters the summarizer's transcript may take: most of the target, never the window.
function summaryChars(input: CompactionInput, target: number): number {
  const tokens = input.budget > 0 ? Math.floor(input.budget * 0.6) : target;
  return Math.max(2_000, Math.floor(tokens * DEFAULT_CHARS_PER_TOKEN));
}

// The messages as plain text: no dialect has to accept tool calls without tools. Tool output is
// clipped harder until the text fits (the model's and the user's words matter more); a text that
// still does not fit is cut in the middle, keeping its start (the task) and its end (the latest).
function transcriptText(messages: readonly Message[], chars: number): string {
  let text = "";
  for (const clipAt of RESULT_CLIPS) {
    text = render(messages, clipAt);
    if (text.length <= chars) return `The conversation to summarize:\n\n${text}`;
  }
  const head = Math.floor(chars * 0.3);
  return `The conversation to summarize (its middle was cut):\n\n${text.slice(0, head)}\n[…]\n` +
    text.slice(text.length - (chars - head));
}

function render(messages: readonly Message[], clipAt: number): string {
  const lines: string[] = [];
  for (const message of messages) {
    if (message.role === "tool") {
      lines.push(`TOOL RESULT (${message.name}): ${clip(message.content, clipAt)}`);
    } else if (message.role === "assistant") {
      if (message.content !== "") lines.push(`ASSISTANT: ${message.content}`);
      for (const call of message.toolCalls ?? []) {
        lines.push(`ASSISTANT CALLED ${call.name} ${clip(call.arguments, 400)}`);
      }
    } else lines.push(`${message.role.toUpperCase()}: ${message.content}`);
  }
  return lines.join("\n");
}

// The user's requests and the assistant's last words in `range`, for a summary the model could
// not write.
function requestsOf(range: readonly Message[]): string {
  const lines = range.filter((m) => m.role === "user" && !isSummary(m))
    .map((m) => `- The user asked: ${clip(m.content, 400)}`);
  const said = range.findLast((m) => m.role === "assistant" && m.content !== "");
  if (said !== undefined) lines.push(`- The assistant last said: ${clip(said.content, 600)}`);
  return lines.join("\n");
}

function summaryText(text: string, files: readonly string[], todos: string | undefined): string {
  const parts = [SUMMARY_HEADER, text];
  if (files.length > 0) parts.push(`Files touched:\n${files.map((f) => `- ${f}`).join("\n")}`);
  if (todos !== undefined) parts.push(`Todo list (the last todowrite):\n${todos}`);
  return parts.join("\n\n");
}
