/**
 * The body of a Responses request, put together from JSON made once per message.
 *
 * As for Chat Completions (`_chat_completions_body.ts`): each committed message's input items
 * are serialized once per dialect instance, the text joined for the previous request's
 * conversation is taken over when the next request repeats it, and the body is joined from
 * those pieces, exactly as `JSON.stringify` of the whole body object would write it. Private
 * to the package.
 *
 * @module
 */

import type { ChatRequest, Message, ProviderSettings, ToolDefinition } from "@amber/core";
import { ConversationMemo } from "./_conversation_memo.ts";
import { EncodingCache } from "./_encoding_cache.ts";
import { dataUrl, toolImages, WEB_IMAGE_TYPES } from "./_tool_images.ts";

type ToolMessage = Extract<Message, { readonly role: "tool" }>;

/**
 * Builds request bodies for one dialect instance, reusing each committed message's JSON.
 *
 * System messages are joined (blank line between) into `instructions`; user and assistant text
 * become input messages, an assistant's tool calls `function_call` items and tool results
 * `function_call_output` items; tools are sent with `strict: false`. A tool result's images go
 * in its output as `input_image` data URLs beside an `input_text` when `settings.images` is
 * true; otherwise a line of its text says what was left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ResponsesBody } from "./_responses_body.ts";
 * const body = new ResponsesBody().build({}, {
 *   model: "m",
 *   messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "Hi" }],
 *   tools: [],
 * });
 * assert.equal(
 *   body,
 *   '{"model":"m","instructions":"Be terse.","input":[{"role":"user","content":"Hi"}],' +
 *     '"stream":true,"store":false}',
 * );
 * ```
 */
export class ResponsesBody {
  readonly #cache = new EncodingCache();
  readonly #memo = new ConversationMemo<InputState>();

  /** The JSON body for `request`. */
  build(settings: Pick<ProviderSettings, "images">, request: ChatRequest): string {
    const cache = this.#cache;
    const { instructions, input } = this.#input(request.messages, settings.images === true);
    let body = `{"model":${JSON.stringify(request.model)}`;
    if (instructions !== undefined) body += `,"instructions":${instructions}`;
    body += `,"input":[${input}]`;
    if (request.tools.length > 0) {
      body += `,"tools":${cache.encode(request.tools, "tools", encodeTools)}`;
    }
    body += `,"stream":true,"store":false`;
    if (request.maxTokens !== undefined) {
      body += `,"max_output_tokens":${JSON.stringify(request.maxTokens)}`;
    }
    if (request.temperature !== undefined) {
      body += `,"temperature":${JSON.stringify(request.temperature)}`;
    }
    if (request.reasoningEffort !== undefined) {
      body += `,"reasoning":{"effort":${JSON.stringify(request.reasoningEffort)}}`;
    }
    return body + "}";
  }

  /**
   * The `instructions` (JSON, when there are system messages) and the elements of `input`,
   * joined. As for Chat Completions, the text made for the conversation after the prompt's
   * system blocks is taken over from the previous request when its messages are the same
   * objects, and only the messages after them are added.
   */
  #input(
    messages: readonly Message[],
    images: boolean,
  ): { instructions: string | undefined; input: string } {
    const cache = this.#cache;
    const n = messages.length;
    const system: SystemMessage[] = [];
    let head = 0;
    while (head < n && messages[head].role === "system" && !Object.isFrozen(messages[head])) {
      system.push(messages[head] as SystemMessage);
      head++;
    }
    const key = images ? "images" : "";
    const taken = this.#memo.take(messages, head, key);
    const from = head + (taken?.count ?? 0);
    let input = taken?.state.text ?? "";
    // The system messages within the conversation, which go to the instructions too.
    const inner: SystemMessage[] = taken === undefined ? [] : [...taken.state.system];
    let end = from;
    while (end < n && Object.isFrozen(messages[end])) end++;
    let kept: InputState | undefined = end === from ? taken?.state : undefined;
    for (let i = from; i < n; i++) {
      if (i === end) kept = { text: input, system: [...inner] };
      const message = messages[i];
      let json: string;
      switch (message.role) {
        case "system":
          inner.push(message);
          continue;
        case "user":
          json = cache.encode(message, "user", encodeUser);
          break;
        case "assistant":
          json = cache.encode(message, "assistant", encodeAssistant);
          break;
        case "tool":
          json = images && message.images !== undefined && message.images.length > 0
            ? cache.encode(message, "tool+images", encodeToolWithImages)
            : cache.encode(message, "tool", encodeTool);
          break;
        default:
          continue;
      }
      // An assistant message with neither text nor calls has no item.
      if (json !== "") input += input === "" ? json : `,${json}`;
    }
    this.#memo.keep(messages, head, end, key, kept ?? { text: input, system: [...inner] });
    for (const message of inner) system.push(message);
    return { instructions: this.#instructions(system), input };
  }

  /** The JSON string of the system messages joined, or undefined when there are none. */
  #instructions(system: readonly SystemMessage[]): string | undefined {
    if (system.length === 0) return undefined;
    // The usual case, one system prompt, is kept like any message.
    if (system.length === 1) {
      return this.#cache.encode(system[0], "instructions", encodeInstructions);
    }
    return JSON.stringify(system.map((message) => message.content).join("\n\n"));
  }
}

type SystemMessage = Extract<Message, { readonly role: "system" }>;

/** Where the input stood at the end of a run of messages. */
interface InputState {
  /** The input items, joined. */
  readonly text: string;
  /** The system messages among the messages. */
  readonly system: readonly SystemMessage[];
}

function encodeInstructions(message: SystemMessage): string {
  return JSON.stringify(message.content);
}

function encodeUser(message: Extract<Message, { readonly role: "user" }>): string {
  return JSON.stringify({ role: "user", content: message.content });
}

/** The message's input items, joined; "" for none. */
function encodeAssistant(message: Extract<Message, { readonly role: "assistant" }>): string {
  const items: unknown[] = [];
  if (message.content !== "") items.push({ role: "assistant", content: message.content });
  for (const call of message.toolCalls ?? []) {
    items.push({
      type: "function_call",
      call_id: call.id,
      name: call.name,
      arguments: call.arguments === "" ? "{}" : call.arguments,
    });
  }
  return items.length === 0 ? "" : JSON.stringify(items).slice(1, -1);
}

function encodeTool(message: ToolMessage): string {
  return toolOutput(message, false);
}

function encodeToolWithImages(message: ToolMessage): string {
  return toolOutput(message, true);
}

function toolOutput(message: ToolMessage, images: boolean): string {
  const { sent, text } = toolImages(message, { images }, WEB_IMAGE_TYPES);
  return JSON.stringify({
    type: "function_call_output",
    call_id: message.toolCallId,
    output: sent.length === 0 ? text : [
      ...(text === "" ? [] : [{ type: "input_text", text }]),
      ...sent.map((image) => ({ type: "input_image", image_url: dataUrl(image) })),
    ],
  });
}

function encodeTools(tools: readonly ToolDefinition[]): string {
  return JSON.stringify(tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: false,
  })));
}
