/**
 * The Gemini request body, from amber's neutral conversation: as an object (`geminiBody`), and
 * as the JSON text a dialect sends, put together from each committed message's own JSON and
 * built on from the previous request's text when the conversation only grew. The decisions it
 * makes are listed in `gemini.ts`. Private to the package.
 *
 * @module
 */

import type { ChatRequest, Message, ProviderSettings, ToolDefinition } from "@amber/core";
import { argumentsObject } from "./_arguments.ts";
import { ConversationMemo } from "./_conversation_memo.ts";
import { EncodingCache } from "./_encoding_cache.ts";
import { toGeminiSchema } from "./_gemini_schema.ts";
import { toolImages } from "./_tool_images.ts";

/** The signature Gemini documents for replayed calls whose real signature is unknown. */
const SKIP_SIGNATURE = "skip_thought_signature_validator";

/** The image types the API takes inline. */
const IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/png",
  "image/jpeg",
  "image/webp",
  "image/heic",
  "image/heif",
]);

/** Thinking budgets by reasoning effort; -1 is Gemini's "dynamic". */
const THINKING_BUDGETS: { readonly [effort: string]: number } = {
  minimal: 512,
  low: 2048,
  medium: 8192,
  high: 24576,
  xhigh: 24576,
  max: 24576,
};

/** One part of a content, as the API takes it. */
export type Part = Record<string, unknown>;
/** Whose content: the user's (and tool results') or the model's. */
export type Role = "user" | "model";
type ToolMessage = Extract<Message, { readonly role: "tool" }>;
/** What the encoding depends on besides the messages. */
export type Settings = Pick<ProviderSettings, "images"> | undefined;

/** One content of the body: consecutive parts of one role. */
export interface Content {
  /** Whose parts. */
  role: Role;
  /** The parts, in order. */
  parts: Part[];
}

/** Whether an id came from a provider that pairs by id (Gemini) rather than from us or OpenAI. */
function echoableId(id: string): boolean {
  return id.length > 0 && !id.startsWith("call_");
}

function thinkingConfig(effort: string | undefined): Record<string, unknown> | undefined {
  if (effort === undefined) return undefined;
  const key = effort.trim().toLowerCase();
  // "none" leaves the model's default: some Gemini models cannot turn thinking off at all.
  if (key === "" || key === "none" || key === "off" || key === "disabled") return undefined;
  const number = Number(key);
  const budget = THINKING_BUDGETS[key] ??
    (Number.isFinite(number) && number > 0 ? Math.floor(number) : -1);
  return { thinkingBudget: budget, includeThoughts: true };
}

/** The parts of a user or assistant message, or a tool message's function response. */
function partsOf(message: Message, settings: Settings): Part[] {
  switch (message.role) {
    case "system":
      return [];
    case "user":
      return message.content.length > 0 ? [{ text: message.content }] : [];
    case "assistant": {
      const parts: Part[] = [];
      if (message.content.length > 0) {
        const text: Part = { text: message.content };
        // An empty text part is refused, so a signature of no text stays behind; Gemini does
        // not require text signatures back.
        if (message.textSignature) text.thoughtSignature = message.textSignature;
        parts.push(text);
      }
      // Whether Gemini signed an earlier call of this turn: then the ones it left unsigned
      // (the later ones of parallel calls) go back unsigned too, as they came.
      let signed = false;
      for (const call of message.toolCalls ?? []) {
        if (call.name.length === 0) continue;
        const functionCall: Part = { name: call.name, args: argumentsObject(call.arguments) };
        if (echoableId(call.id)) functionCall.id = call.id;
        const part: Part = { functionCall };
        if (call.signature) {
          part.thoughtSignature = call.signature;
          signed = true;
        } else if (!signed) {
          part.thoughtSignature = SKIP_SIGNATURE;
        }
        parts.push(part);
      }
      return parts;
    }
    case "tool": {
      const { text } = toolImages(message, settings, IMAGE_TYPES);
      const functionResponse: Part = {
        name: message.name,
        // Gemini's convention: `output` for a result, `error` for a failure.
        response: message.isError ? { error: text } : { output: text },
      };
      if (echoableId(message.toolCallId)) functionResponse.id = message.toolCallId;
      return [{ functionResponse }];
    }
  }
}

/** The images of a tool message that go on the wire, as parts. */
function imagesOf(message: ToolMessage, settings: Settings): Part[] {
  return toolImages(message, settings, IMAGE_TYPES).sent.map((image) => ({
    inlineData: { mimeType: image.mimeType, data: image.data },
  }));
}

/** Receives the conversation's contents as Gemini lays them out; see {@linkcode Walk}. */
interface Layout {
  /** A message's parts (`images` false) or a tool message's images (`images` true). */
  parts(role: Role, message: Message, images: boolean): void;
}

/** The texts of the system messages, wherever they are: Gemini takes them apart. */
function systemTexts(messages: readonly Message[]): string[] {
  const texts: string[] = [];
  for (const message of messages) {
    if (message.role === "system" && message.content.length > 0) texts.push(message.content);
  }
  return texts;
}

/**
 * Walks the conversation in Gemini's order, a message at a time, so a walk can stop and go on
 * later. The images of a turn's tool results follow all of its function responses, so the
 * responses stay together, in the order of the calls they answer. Consecutive parts of one role
 * make one content; the layout joins them.
 */
class Walk {
  // The tool results of the turn so far, whose images are still to come.
  #tools: ToolMessage[] = [];

  /** A walk that goes on from where `this` is. */
  clone(): Walk {
    const walk = new Walk();
    walk.#tools = [...this.#tools];
    return walk;
  }

  /** The next message. */
  step(message: Message, layout: Layout): void {
    if (this.#tools.length > 0 && message.role !== "tool") this.end(layout);
    switch (message.role) {
      case "system":
        // Its text goes to the system instruction; here it only ends a turn's tool results.
        break;
      case "user":
        layout.parts("user", message, false);
        break;
      case "assistant":
        layout.parts("model", message, false);
        break;
      case "tool":
        layout.parts("user", message, false);
        this.#tools.push(message);
        break;
    }
  }

  /** The end of the conversation (or of a turn's tool results): their images. */
  end(layout: Layout): void {
    for (const tool of this.#tools) layout.parts("user", tool, true);
    this.#tools = [];
  }
}

/** The conversation as system texts and contents. */
export function toContents(
  messages: readonly Message[],
  settings: Settings,
): { system: string[]; contents: Content[] } {
  const contents: Content[] = [];
  const layout: Layout = {
    parts(role, message, images) {
      const parts = images
        ? imagesOf(message as ToolMessage, settings)
        : partsOf(message, settings);
      if (parts.length === 0) return;
      const last = contents[contents.length - 1];
      if (last !== undefined && last.role === role) last.parts.push(...parts);
      else contents.push({ role, parts });
    },
  };
  const walk = new Walk();
  for (const message of messages) walk.step(message, layout);
  walk.end(layout);
  return { system: systemTexts(messages), contents };
}

/** A tool's declaration, as an object. */
export function declarationOf(tool: ToolDefinition): Record<string, unknown> {
  const declaration: Record<string, unknown> = { name: tool.name, description: tool.description };
  const parameters = toGeminiSchema(tool.parameters);
  if (parameters !== undefined) declaration.parameters = parameters;
  return declaration;
}

function encodeDeclaration(tool: ToolDefinition): string {
  return JSON.stringify(declarationOf(tool));
}

/** The body's `generationConfig`, or undefined when it sets nothing. */
export function generationConfig(request: ChatRequest): Record<string, unknown> | undefined {
  const config: Record<string, unknown> = {};
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  const thinking = thinkingConfig(request.reasoningEffort);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  return Object.keys(config).length > 0 ? config : undefined;
}

/** Parts as the text between an array's brackets. */
function partsText(parts: readonly Part[]): string {
  let text = "";
  for (const part of parts) text += text === "" ? JSON.stringify(part) : `,${JSON.stringify(part)}`;
  return text;
}

/** The contents as JSON text so far: what a walk lays out, joined as `toContents` joins it. */
class ContentsText implements Layout {
  readonly #cache: EncodingCache;
  readonly #settings: Settings;
  readonly #parts: string;
  readonly #images: string;
  /** The text so far, the open content's parts not yet closed. */
  text = "";
  /** The open content's role. */
  role: Role | undefined = undefined;

  constructor(cache: EncodingCache, settings: Settings) {
    this.#cache = cache;
    this.#settings = settings;
    const variant = settings?.images === true ? "+images" : "";
    this.#parts = `parts${variant}`;
    this.#images = `images${variant}`;
  }

  /** A copy that goes on from where `this` is. */
  clone(): ContentsText {
    const copy = new ContentsText(this.#cache, this.#settings);
    copy.text = this.text;
    copy.role = this.role;
    return copy;
  }

  parts(role: Role, message: Message, images: boolean): void {
    const settings = this.#settings;
    const fragment = images
      ? this.#cache.encode(
        message,
        this.#images,
        (m) => partsText(imagesOf(m as ToolMessage, settings)),
      )
      : this.#cache.encode(message, this.#parts, (m) => partsText(partsOf(m, settings)));
    if (fragment === "") return;
    if (role === this.role) {
      this.text += `,${fragment}`;
      return;
    }
    if (this.role !== undefined) this.text += "]},";
    this.text += `{"role":"${role}","parts":[${fragment}`;
    this.role = role;
  }

  /** The `contents` array. */
  contents(): string {
    return `[${this.text}${this.role === undefined ? "" : "]}"}]`;
  }
}

/** How far a walk got: its place, the contents text, and the system texts it passed. */
interface WalkState {
  readonly walk: Walk;
  readonly text: ContentsText;
  readonly system: string[];
}

function cloneState(state: WalkState): WalkState {
  return { walk: state.walk.clone(), text: state.text.clone(), system: [...state.system] };
}

function stepState(state: WalkState, message: Message): void {
  if (message.role === "system" && message.content.length > 0) state.system.push(message.content);
  state.walk.step(message, state.text);
}

/**
 * Writes request bodies for one dialect instance. Each committed (frozen) message is
 * serialized once, and when a request's conversation repeats the previous one's committed
 * messages (the same objects: a session only grows), the walk goes on from where that one
 * stood ({@linkcode ConversationMemo}), so a step costs what its new messages cost plus a pass
 * over references, however long the session. The leading system messages (the prompt's
 * blocks, made anew each step) are read afresh each time. The text is byte for byte
 * `JSON.stringify` of the body object `geminiBody` makes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BodyWriter } from "./_gemini_request.ts";
 * const writer = new BodyWriter();
 * const hi = Object.freeze({ role: "user" as const, content: "Hi" });
 * const request = { model: "gemini-2.5-flash", messages: [hi], tools: [] };
 * assert.equal(writer.write(request, undefined), '{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}');
 * ```
 */
export class BodyWriter {
  readonly #cache = new EncodingCache();
  readonly #memo = new ConversationMemo<WalkState>();

  /** The body of `request` as JSON text. */
  write(request: ChatRequest, settings: Settings): string {
    const messages = request.messages;
    const n = messages.length;
    // The leading system messages only go to the system instruction (and there is no tool
    // result before them whose images they would end), so the walk starts after them.
    const system: string[] = [];
    let head = 0;
    for (; head < n && messages[head].role === "system"; head++) {
      const content = messages[head].content;
      if (content.length > 0) system.push(content);
    }
    const key = settings?.images === true ? "images" : "";
    const taken = this.#memo.take(messages, head, key);
    // A copy: the memo's state stays as it was, should encoding throw.
    const state = taken === undefined
      ? { walk: new Walk(), text: new ContentsText(this.#cache, settings), system: [] }
      : cloneState(taken.state);
    // The committed messages, then what the next request takes over; a message not frozen
    // could still change, so neither its text nor a walk past it is kept.
    let at = head + (taken?.count ?? 0);
    while (at < n && Object.isFrozen(messages[at])) stepState(state, messages[at++]);
    this.#memo.keep(messages, head, at, key, state);
    const rest = cloneState(state);
    while (at < n) stepState(rest, messages[at++]);
    rest.walk.end(rest.text);
    system.push(...rest.system);
    return this.#tail(request, rest.text, system);
  }

  /** The whole body around the contents. */
  #tail(request: ChatRequest, text: ContentsText, system: readonly string[]): string {
    let body = `{"contents":${text.contents()}`;
    if (system.length > 0) {
      body += `,"systemInstruction":${JSON.stringify({ parts: [{ text: system.join("\n\n") }] })}`;
    }
    if (request.tools.length > 0) {
      // The registry hands out one frozen list while the tools stay the same.
      const cache = this.#cache;
      const declarations = cache.encode(
        request.tools,
        "tools",
        (tools) => tools.map((tool) => cache.encode(tool, "tool", encodeDeclaration)).join(","),
      );
      body += `,"tools":[{"functionDeclarations":[${declarations}]}]`;
    }
    const config = generationConfig(request);
    if (config !== undefined) body += `,"generationConfig":${JSON.stringify(config)}`;
    return `${body}}`;
  }
}
