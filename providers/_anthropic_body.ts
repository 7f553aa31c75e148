/**
 * The Anthropic Messages request body: as an object (`anthropicBody`) and as the JSON text the
 * dialect sends (`AnthropicBodyWriter`), which reuses what it wrote for the previous request so
 * that building a request costs about the same at step 1,000 as at step 20. Both share every
 * block, so the text is byte for byte `JSON.stringify` of the object. Private to the package.
 *
 * Cache breakpoints (`cache_control: {type: "ephemeral"}`) mark the longest stable prefix, in
 * the API's cache order (tools, then system, then messages), four at most as the API allows:
 * the last tool definition, the system block, the last user turn's last block (this request
 * writes the cache up to there) and the previous user turn's last block (the next request reads
 * what the one before it wrote there exactly, however many blocks a step added, instead of
 * relying on the API's 20-block look-back). Only user turns are marked: their last block is text
 * or a tool result, never a thinking block, which may not carry a marker.
 *
 * @module
 */

import type { ChatRequest, Message, ProviderSettings, ToolDefinition } from "@amber/core";
import { argumentsObject } from "./_arguments.ts";
import { ConversationMemo } from "./_conversation_memo.ts";
import { EncodingCache } from "./_encoding_cache.ts";
import { toolImages, WEB_IMAGE_TYPES } from "./_tool_images.ts";

/** `max_tokens` is required by the API; this is what a request without one asks for. */
const DEFAULT_MAX_TOKENS = 8192;

/** The API's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1024;

/** Thinking budgets by reasoning effort. */
const THINKING_BUDGETS: { readonly [effort: string]: number } = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 32768,
};

const CACHE_CONTROL = { type: "ephemeral" } as const;

/** A marked block's JSON ends so: `cache_control` is its last key, as a spread puts it. */
const MARKED_END = ',"cache_control":{"type":"ephemeral"}}';

type Block = Record<string, unknown>;
type Role = "user" | "assistant";
/** Whether a tool result's images are sent (the settings' `images`). */
export type Images = Pick<ProviderSettings, "images"> | undefined;

interface WireMessage {
  role: Role;
  content: Block[];
}

/** The wire role a message joins, or undefined for a system message (sent apart). */
function roleOf(message: Message): Role | undefined {
  switch (message.role) {
    case "system":
      return undefined;
    case "assistant":
      return "assistant";
    default:
      return "user";
  }
}

/** The content blocks one message contributes to its turn; none for a system message. */
function messageBlocks(message: Message, settings: Images): Block[] {
  switch (message.role) {
    case "system":
      return [];
    case "user":
      // The API rejects empty text blocks, so an empty message contributes nothing.
      return message.content.length > 0 ? [{ type: "text", text: message.content }] : [];
    case "assistant": {
      const blocks: Block[] = [];
      // Signed thinking goes back first: with thinking on, the API requires it on the
      // assistant turn that made tool calls. Unsigned reasoning cannot be sent back at all.
      if (message.reasoning && message.reasoningSignature) {
        blocks.push({
          type: "thinking",
          thinking: message.reasoning,
          signature: message.reasoningSignature,
        });
      }
      if (message.content.length > 0) blocks.push({ type: "text", text: message.content });
      for (const call of message.toolCalls ?? []) {
        if (call.name.length === 0) continue;
        blocks.push({
          type: "tool_use",
          id: call.id,
          name: call.name,
          input: argumentsObject(call.arguments),
        });
      }
      return blocks;
    }
    case "tool": {
      const block: Block = { type: "tool_result", tool_use_id: message.toolCallId };
      const { sent, text } = toolImages(message, settings, WEB_IMAGE_TYPES);
      // `content` may be omitted but not empty, and a text block may not be empty either.
      if (sent.length > 0) {
        block.content = [
          ...(text.length > 0 ? [{ type: "text", text }] : []),
          ...sent.map((image) => ({
            type: "image",
            source: { type: "base64", media_type: image.mimeType, data: image.data },
          })),
        ];
      } else if (text.length > 0) {
        block.content = text;
      }
      if (message.isError) block.is_error = true;
      return [block];
    }
  }
}

/** A tool definition as the API takes it. */
function wireTool(tool: ToolDefinition): Block {
  const schema = tool.parameters;
  return {
    name: tool.name,
    description: tool.description,
    // The API insists on an object schema; a tool declared without one takes no arguments.
    input_schema: schema.type === "object" ? schema : { type: "object", properties: {}, ...schema },
  };
}

/** The turns that carry a breakpoint: the last two user turns, by index. */
function markedTurns(roles: readonly Role[]): number[] {
  const marked: number[] = [];
  for (let i = roles.length - 1; i >= 0 && marked.length < 2; i--) {
    if (roles[i] === "user") marked.push(i);
  }
  return marked;
}

/**
 * The thinking budget for a reasoning effort: a named effort, a number of tokens, or undefined
 * when thinking is off ("none", "off"). An effort this dialect does not know reads as medium.
 */
function thinkingBudget(effort: string | undefined): number | undefined {
  if (effort === undefined) return undefined;
  const key = effort.trim().toLowerCase();
  if (key === "" || key === "none" || key === "off" || key === "disabled") return undefined;
  const known = THINKING_BUDGETS[key];
  if (known !== undefined) return known;
  const number = Number(key);
  if (Number.isFinite(number) && number > 0) {
    return Math.max(MIN_THINKING_BUDGET, Math.floor(number));
  }
  return THINKING_BUDGETS.medium;
}

/**
 * The body's fields but messages and tools: what comes before them (`head`: model, max_tokens,
 * system) and after (`tail`: stream, thinking or temperature), in the order the API's examples
 * give them.
 */
function bodyFields(
  request: ChatRequest,
  system: readonly string[],
): { head: Record<string, unknown>; tail: Record<string, unknown> } {
  const budget = thinkingBudget(request.reasoningEffort);
  let maxTokens = request.maxTokens ?? DEFAULT_MAX_TOKENS + (budget ?? 0);
  let thinking: number | undefined = budget;
  if (thinking !== undefined && thinking >= maxTokens) {
    // The budget counts towards max_tokens and must stay below it; leave room for an answer.
    thinking = Math.min(thinking, maxTokens - 1);
    if (thinking < MIN_THINKING_BUDGET) thinking = undefined;
  }
  if (maxTokens < 1) maxTokens = 1;
  const head: Record<string, unknown> = { model: request.model, max_tokens: maxTokens };
  if (system.length > 0) {
    head.system = [{ type: "text", text: system.join("\n\n"), cache_control: CACHE_CONTROL }];
  }
  const tail: Record<string, unknown> = { stream: true };
  if (thinking !== undefined) {
    tail.thinking = { type: "enabled", budget_tokens: thinking };
  } else if (request.temperature !== undefined) {
    // With thinking on, the API accepts no temperature but 1, so it is not sent then.
    tail.temperature = request.temperature;
  }
  return { head, tail };
}

/**
 * The Anthropic Messages request body for a chat request (what `chatRequest` sends, as an
 * object). A tool result's images go in its content as image blocks when `settings.images` is
 * true (JPEG, PNG, GIF and WebP, the types the API takes); otherwise a line of its text says
 * what was left out.
 *
 * @example
 * ```ts
 * import { anthropicBody } from "@amber/providers/anthropic";
 * import assert from "node:assert/strict";
 * const body = anthropicBody({
 *   model: "claude-sonnet-4-5",
 *   messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "Hi" }],
 *   tools: [],
 * });
 * assert.equal(body.max_tokens, 8192);
 * assert.equal(body.stream, true);
 * ```
 *
 * @example A screenshot a tool returned, to a model that takes images
 * ```ts
 * import { anthropicBody } from "@amber/providers/anthropic";
 * import assert from "node:assert/strict";
 * const body = anthropicBody({
 *   model: "claude-sonnet-4-5",
 *   messages: [
 *     { role: "user", content: "Look" },
 *     {
 *       role: "assistant",
 *       content: "",
 *       toolCalls: [{ id: "toolu_1", name: "screenshot", arguments: "{}" }],
 *     },
 *     {
 *       role: "tool",
 *       toolCallId: "toolu_1",
 *       name: "screenshot",
 *       content: "the screen",
 *       images: [{ mimeType: "image/png", data: "iVBORw0KGgo=" }],
 *     },
 *   ],
 *   tools: [],
 * }, { images: true });
 * const turns = body.messages as { content: { type: string; content?: unknown }[] }[];
 * assert.deepEqual(turns[2].content[0].content, [
 *   { type: "text", text: "the screen" },
 *   { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
 * ]);
 * ```
 */
export function anthropicBody(
  request: ChatRequest,
  settings?: Pick<ProviderSettings, "images">,
): Record<string, unknown> {
  const system: string[] = [];
  const turns: WireMessage[] = [];
  for (const message of request.messages) {
    const role = roleOf(message);
    if (role === undefined) {
      if (message.content.length > 0) system.push(message.content);
      continue;
    }
    const blocks = messageBlocks(message, settings);
    if (blocks.length === 0) continue;
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  for (const index of markedTurns(turns.map((turn) => turn.role))) {
    const blocks = turns[index].content;
    const at = blocks.length - 1;
    blocks[at] = { ...blocks[at], cache_control: CACHE_CONTROL };
  }
  const { head, tail } = bodyFields(request, system);
  const body: Record<string, unknown> = { ...head, messages: turns };
  if (request.tools.length > 0) {
    const tools = request.tools.map(wireTool);
    tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: CACHE_CONTROL };
    body.tools = tools;
  }
  return { ...body, ...tail };
}

/** One turn being assembled: its role, its messages' block JSON, where its messages end. */
interface Turn {
  readonly role: Role;
  readonly parts: string[];
  /** One past its last message, counting the system and empty messages that follow it. */
  end: number;
}

/** Where the previous requests left off: the turns settled for good, as JSON. */
interface Settled {
  /** The system prompts among the settled messages. */
  readonly system: readonly string[];
  /** The settled turns' JSON, joined with commas. */
  readonly json: string;
  /** The role of the last settled turn, if any. */
  readonly role: Role | undefined;
}

const NOTHING_SETTLED: Settled = { system: [], json: "", role: undefined };

/**
 * Writes request bodies as JSON text, each frozen message encoded once (an
 * {@linkcode EncodingCache}), and the turns that no later request can change (every turn before
 * the breakpoints, made of frozen messages only) kept as one string from request to request
 * (a {@linkcode ConversationMemo}). The leading system messages (the prompt's blocks, made anew
 * each step) only go to the system field, so they are read afresh and the turns start after
 * them. A request whose history does not go on from those turns (a compacted or another
 * conversation) starts over, still reusing each message's encoding.
 */
export class AnthropicBodyWriter {
  readonly #messages = new EncodingCache();
  readonly #tools = new EncodingCache();
  readonly #memo = new ConversationMemo<Settled>();

  /** The body of `request`, byte for byte `JSON.stringify(anthropicBody(request, settings))`. */
  write(request: ChatRequest, settings?: Images): string {
    const messages = request.messages;
    const variant = settings?.images === true ? "images" : "";
    let head = 0;
    while (head < messages.length && messages[head].role === "system") head++;
    const taken = this.#memo.take(messages, head, variant);
    const settled = taken?.state ?? NOTHING_SETTLED;
    return this.#write(request, settings, head, head + (taken?.count ?? 0), settled);
  }

  /** The body, the turns of the messages before `from` taken as `settled`. */
  #write(
    request: ChatRequest,
    settings: Images,
    head: number,
    from: number,
    settled: Settled,
  ): string {
    const variant = settings?.images === true ? "images" : "";
    const messages = request.messages;
    const system: string[] = [];
    for (let i = 0; i < head; i++) {
      if (messages[i].content.length > 0) system.push(messages[i].content);
    }
    system.push(...settled.system);
    const encode = (message: Message): string =>
      JSON.stringify(messageBlocks(message, settings)).slice(1, -1);
    // The rest of the conversation, in turns.
    const turns: Turn[] = [];
    for (let i = from; i < messages.length; i++) {
      const message = messages[i];
      const role = roleOf(message);
      const json = role === undefined ? "" : this.#messages.encode(message, variant, encode);
      if (role === undefined && message.content.length > 0) system.push(message.content);
      const last = turns[turns.length - 1];
      if (role === undefined || json.length === 0) {
        // No blocks: it joins no turn, but belongs to the history the turn before stands for.
        if (last !== undefined) last.end = i + 1;
      } else if (last !== undefined && last.role === role) {
        last.parts.push(json);
        last.end = i + 1;
      } else {
        turns.push({ role, parts: [json], end: i + 1 });
      }
    }
    if (turns.length > 0 && turns[0].role === settled.role) {
      // The history continues a settled turn (not what the last request saw): start over.
      return this.#write(request, settings, head, head, NOTHING_SETTLED);
    }
    const marked = markedTurns(turns.map((turn) => turn.role));
    const texts = turns.map((turn, index) => {
      let content = turn.parts.join(",");
      if (marked.includes(index)) content = content.slice(0, -1) + MARKED_END;
      return `{"role":"${turn.role}","content":[${content}]}`;
    });
    const { head: fields, tail } = bodyFields(request, system);
    let body = JSON.stringify(fields).slice(0, -1) + ',"messages":[' + settled.json;
    if (settled.json.length > 0 && texts.length > 0) body += ",";
    body += texts.join(",") + "]";
    if (request.tools.length > 0) {
      const tools = request.tools.map((tool) =>
        this.#tools.encode(tool, "", (tool) => JSON.stringify(wireTool(tool)))
      );
      tools[tools.length - 1] = tools[tools.length - 1].slice(0, -1) + MARKED_END;
      body += ',"tools":[' + tools.join(",") + "]";
    }
    body += "," + JSON.stringify(tail).slice(1);
    // Settles the turns before the first breakpoint: another turn follows each, so nothing can
    // join it, and none carries a marker. (Without a user turn there is one turn at most, as
    // roles alternate, and nothing to settle.) A message that is not frozen could still
    // change, so settling stops at the turn that holds one.
    const until = marked.at(-1) ?? 0;
    let end = from;
    let { json, role } = settled;
    const inner = [...settled.system];
    settling: for (let index = 0; index < until; index++) {
      const next = turns[index].end;
      for (let i = end; i < next; i++) if (!Object.isFrozen(messages[i])) break settling;
      for (let i = end; i < next; i++) {
        const message = messages[i];
        if (message.role === "system" && message.content.length > 0) inner.push(message.content);
      }
      json += (json.length > 0 ? "," : "") + texts[index];
      role = turns[index].role;
      end = next;
    }
    this.#memo.keep(messages, head, end, variant, { system: inner, json, role });
    return body;
  }
}
