/**
 * The body of a Chat Completions request, put together from JSON made once per message.
 *
 * The conversation only grows and the kernel freezes what it commits, so each message's wire
 * JSON is kept (in an {@linkcode EncodingCache}) and the body is joined from those pieces, and
 * the text joined for the previous request's conversation is taken over when the next request
 * repeats it (a {@linkcode ConversationMemo}): the cost of a request stays flat as the session
 * grows. The text is exactly what `JSON.stringify` of the whole body object gives. Private to
 * the package.
 *
 * @module
 */

import type { ChatRequest, Message, ProviderSettings, ToolDefinition } from "@amber/core";
import { ConversationMemo } from "./_conversation_memo.ts";
import { EncodingCache } from "./_encoding_cache.ts";
import { dataUrl, toolImages, WEB_IMAGE_TYPES } from "./_tool_images.ts";

/** The body field that carries the output limit. */
export type MaxTokensField = "max_completion_tokens" | "max_tokens";

type AssistantMessage = Extract<Message, { readonly role: "assistant" }>;
type ToolMessage = Extract<Message, { readonly role: "tool" }>;

/**
 * Builds request bodies for one dialect instance, reusing each committed message's JSON.
 *
 * Messages map one to one, system messages in place, except that a tool message holds text
 * only: the images of a run of tool results follow the run as one user message of `image_url`
 * data URLs (the tool messages must directly follow the assistant's calls), each image after a
 * line naming the call it came from. An assistant message's reasoning goes back only in the
 * field it came in, and only where the server needs it (see {@linkcode reasoningPlan}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ChatCompletionsBody } from "./_chat_completions_body.ts";
 * const body = new ChatCompletionsBody("max_completion_tokens").build(
 *   {},
 *   { model: "m", messages: [{ role: "user", content: "Hi" }], tools: [], maxTokens: 9 },
 * );
 * assert.equal(
 *   body,
 *   '{"model":"m","messages":[{"role":"user","content":"Hi"}],"stream":true,' +
 *     '"stream_options":{"include_usage":true},"max_completion_tokens":9}',
 * );
 * ```
 */
export class ChatCompletionsBody {
  readonly #cache = new EncodingCache();
  readonly #maxTokensField: MaxTokensField;
  readonly #memo = new ConversationMemo<BuildState>();

  /** A builder that puts the output limit in `maxTokensField`. */
  constructor(maxTokensField: MaxTokensField) {
    this.#maxTokensField = maxTokensField;
  }

  /** The JSON body for `request`. */
  build(settings: Pick<ProviderSettings, "images">, request: ChatRequest): string {
    const messages = this.#messages(request.messages, settings.images === true);
    let body = `{"model":${JSON.stringify(request.model)},"messages":[${messages}],` +
      `"stream":true,"stream_options":{"include_usage":true}`;
    if (request.tools.length > 0) {
      body += `,"tools":${this.#cache.encode(request.tools, "tools", encodeTools)}`;
    }
    if (request.maxTokens !== undefined) {
      body += `,"${this.#maxTokensField}":${JSON.stringify(request.maxTokens)}`;
    }
    if (request.temperature !== undefined) {
      body += `,"temperature":${JSON.stringify(request.temperature)}`;
    }
    if (request.reasoningEffort !== undefined) {
      body += `,"reasoning_effort":${JSON.stringify(request.reasoningEffort)}`;
    }
    return body + "}";
  }

  /**
   * The elements of the `messages` array, joined. The prompt's system blocks lead, built anew
   * each time (they are not frozen); the conversation after them mostly repeats the previous
   * request's, so the text made for it then is taken over when its messages are the same
   * objects, and only the messages after them are added.
   */
  #messages(messages: readonly Message[], images: boolean): string {
    const n = messages.length;
    let head = 0;
    while (head < n && messages[head].role === "system" && !Object.isFrozen(messages[head])) head++;
    const lead = new Build(this.#cache, images);
    for (let i = 0; i < head; i++) lead.add(messages[i], i);

    const key = images ? "images" : "";
    const taken = this.#memo.take(messages, head, key);
    const from = head + (taken?.count ?? 0);
    const build = new Build(this.#cache, images);
    if (taken !== undefined) build.resume(taken.state);
    const plan = reasoningPlan(messages, from, build.calls);
    build.kept = plan.kept;

    // The next request takes over up to the first message that is not frozen, and not a turn
    // whose reasoning a later user message would drop.
    let end = from;
    while (end < n && Object.isFrozen(messages[end])) end++;
    if (plan.openUndecided && plan.openStart < end) end = Math.max(from, plan.openStart);
    let kept = end === from ? build.state() : undefined;
    for (let i = from; i < n; i++) {
      if (i === end) kept = build.state();
      build.add(messages[i], i);
    }
    this.#memo.keep(messages, head, end, key, kept ?? build.state());
    build.flush();
    if (lead.out === "") return build.out;
    return build.out === "" ? lead.out : `${lead.out},${build.out}`;
  }
}

/** Where a build stood at the end of a run of messages. */
interface BuildState {
  /** The elements, joined. */
  readonly text: string;
  /** The image parts of a run of tool results still open at the end. */
  readonly parts: string;
  /** Whether the turn open at the end called tools. */
  readonly calls: boolean;
}

/** A run of messages being turned into `messages` elements. */
class Build {
  /** The elements so far, joined. */
  out = "";
  /** The indexes of the assistant messages whose reasoning goes back. */
  kept: ReadonlySet<number> | undefined = undefined;
  /** Whether the open turn called tools. */
  calls = false;
  /** The image parts of the open run of tool results, joined. */
  #parts = "";
  readonly #cache: EncodingCache;
  readonly #images: boolean;

  constructor(cache: EncodingCache, images: boolean) {
    this.#cache = cache;
    this.#images = images;
  }

  /** Goes on from where an earlier build stood. */
  resume(state: BuildState): void {
    this.out = state.text;
    this.#parts = state.parts;
    this.calls = state.calls;
  }

  /** Where this build stands. */
  state(): BuildState {
    return { text: this.out, parts: this.#parts, calls: this.calls };
  }

  /** Adds the message at `index`. */
  add(message: Message, index: number): void {
    const cache = this.#cache;
    if (this.#parts !== "" && message.role !== "tool") this.flush();
    let json: string;
    switch (message.role) {
      case "user":
        this.calls = false;
        json = cache.encode(message, "text", encodeText);
        break;
      case "system":
        json = cache.encode(message, "text", encodeText);
        break;
      case "assistant":
        if (message.toolCalls !== undefined && message.toolCalls.length > 0) this.calls = true;
        json = this.kept !== undefined && this.kept.has(index)
          ? cache.encode(message, "reasoning", encodeWithReasoning)
          : cache.encode(message, "assistant", encodeAssistant);
        break;
      case "tool": {
        const sent = this.#images && message.images !== undefined && message.images.length > 0;
        json = sent
          ? cache.encode(message, "tool+images", encodeToolWithImages)
          : cache.encode(message, "tool", encodeTool);
        if (sent) {
          const more = cache.encode(message, "image parts", encodeImageParts);
          if (more !== "") this.#parts += this.#parts === "" ? more : `,${more}`;
        }
        break;
      }
      default:
        return;
    }
    this.out += this.out === "" ? json : `,${json}`;
  }

  /** Ends the open run of tool results: its images follow it as one user message. */
  flush(): void {
    if (this.#parts === "") return;
    const images = `{"role":"user","content":[${this.#parts}]}`;
    this.out += this.out === "" ? images : `,${images}`;
    this.#parts = "";
  }
}

/** Whose reasoning goes back; see {@linkcode reasoningPlan}. */
export interface ReasoningPlan {
  /** The indexes of the assistant messages whose reasoning goes back, if any. */
  readonly kept: ReadonlySet<number> | undefined;
  /** Where the turn under way starts (`from` when it started before). */
  readonly openStart: number;
  /**
   * Whether the turn under way has reasoning that a user message would drop (it called no
   * tools yet).
   */
  readonly openUndecided: boolean;
}

/**
 * Which assistant messages' reasoning goes back, looking at `messages` from `from` on (`calls`:
 * whether the turn open at `from` called tools). DeepSeek's thinking mode rejects a request
 * that leaves out the reasoning of a turn that called tools (in every later request, not only
 * within the turn) and ignores the reasoning of a turn that called none: so the reasoning of
 * the turn under way (after the last user message) and of every turn with tool calls is kept,
 * and that of other turns left out. Only reasoning that records the field it came in counts: a
 * server that sent none never gets the field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reasoningPlan } from "./_chat_completions_body.ts";
 * const thought = {
 *   role: "assistant",
 *   content: "",
 *   reasoning: "r",
 *   reasoningField: "reasoning_content",
 * } as const;
 * const user = { role: "user", content: "a" } as const;
 * const plan = reasoningPlan([user, thought, user, thought], 0, false);
 * assert.deepEqual([...plan.kept ?? []], [3]);
 * assert.equal(plan.openStart, 3);
 * assert.equal(plan.openUndecided, true);
 * ```
 */
export function reasoningPlan(
  messages: readonly Message[],
  from: number,
  calls: boolean,
): ReasoningPlan {
  let kept: Set<number> | undefined = undefined;
  let candidates: number[] | undefined = undefined;
  let start = from;
  for (let i = from; i < messages.length; i++) {
    const message = messages[i];
    if (message.role === "user") {
      if (candidates !== undefined && calls) {
        kept ??= new Set();
        for (const index of candidates) kept.add(index);
      }
      candidates = undefined;
      calls = false;
      start = i + 1;
    } else if (message.role === "assistant") {
      if (message.toolCalls !== undefined && message.toolCalls.length > 0) calls = true;
      if (reasoningField(message) !== undefined) (candidates ??= []).push(i);
    }
  }
  // The last run is the turn under way: its reasoning goes back whatever it did.
  if (candidates !== undefined) {
    kept ??= new Set();
    for (const index of candidates) kept.add(index);
  }
  return { kept, openStart: start, openUndecided: candidates !== undefined && !calls };
}

function reasoningField(message: AssistantMessage): string | undefined {
  const field = message.reasoningField;
  if (field !== "reasoning_content" && field !== "reasoning") return undefined;
  return typeof message.reasoning === "string" && message.reasoning !== "" ? field : undefined;
}

function encodeText(message: Extract<Message, { readonly role: "system" | "user" }>): string {
  return JSON.stringify({ role: message.role, content: message.content });
}

function encodeAssistant(message: AssistantMessage): string {
  return JSON.stringify(assistantObject(message, undefined));
}

function encodeWithReasoning(message: AssistantMessage): string {
  return JSON.stringify(assistantObject(message, reasoningField(message)));
}

function assistantObject(message: AssistantMessage, field: string | undefined): unknown {
  const wire: Record<string, unknown> = { role: "assistant" };
  const calls = message.toolCalls;
  if (calls === undefined || calls.length === 0) {
    wire.content = message.content;
    if (field !== undefined) wire[field] = message.reasoning;
    return wire;
  }
  // OpenAI wants null, not "", beside tool calls; some compatible servers reject "".
  wire.content = message.content === "" ? null : message.content;
  if (field !== undefined) wire[field] = message.reasoning;
  wire.tool_calls = calls.map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments === "" ? "{}" : call.arguments },
  }));
  return wire;
}

function encodeTool(message: ToolMessage): string {
  const { text } = toolImages(message, undefined, WEB_IMAGE_TYPES);
  return JSON.stringify({ role: "tool", tool_call_id: message.toolCallId, content: text });
}

function encodeToolWithImages(message: ToolMessage): string {
  const { text } = toolImages(message, { images: true }, WEB_IMAGE_TYPES);
  return JSON.stringify({ role: "tool", tool_call_id: message.toolCallId, content: text });
}

/** The user-message parts a tool message's sent images become, joined; "" for none. */
function encodeImageParts(message: ToolMessage): string {
  const { sent } = toolImages(message, { images: true }, WEB_IMAGE_TYPES);
  if (sent.length === 0) return "";
  const parts: unknown[] = [{
    type: "text",
    text: `The image${sent.length === 1 ? "" : "s"} that ${message.name} ` +
      `(call ${message.toolCallId}) returned:`,
  }];
  for (const image of sent) parts.push({ type: "image_url", image_url: { url: dataUrl(image) } });
  return JSON.stringify(parts).slice(1, -1);
}

function encodeTools(tools: readonly ToolDefinition[]): string {
  return JSON.stringify(tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  })));
}
