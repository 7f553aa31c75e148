/**
 * The transcript as the TUI shows it: the user's prompts, the answer rendered as Markdown as it
 * streams, reasoning dimmed (and collapsible), a row per tool call (`tool_row.ts`: the tool's
 * name and summary, its streamed output, its outcome and duration, its diff), and notices
 * (command output, errors, cancellations).
 *
 * A tool call's row belongs to its turn and step: call ids are unique only within one reply (a
 * replayed exchange, a server that reuses ids, Gemini's `call_0` after a resume), so a row is
 * found by the step that asked for the call and the call's id, among the rows of the turn in
 * progress only. A prompt starts a turn; an id an earlier turn used never reaches back to it.
 *
 * Deltas are only stored when they arrive; rendering happens when a frame asks for the lines,
 * once per frame however many tokens came in. Each block keeps its rendered lines for the width
 * it was last drawn at, so a frame renders only what changed, and finding the lines on screen
 * walks back from the end over the blocks it needs, whatever the transcript's length.
 *
 * @module
 */

import type { Message, ToolCall, ToolResult } from "@amber/core";
import { truncateToCells } from "@amber/core/cells";
import { changeOfCall } from "./diff_view.ts";
import { type StyledLine, wrapSpans } from "./lines.ts";
import { MarkdownStream } from "./markdown.ts";
import { OutputViewer } from "./output_viewer.ts";
import { type Style, Styles } from "./style.ts";
import { type ToolOutput, ToolRow } from "./tool_row.ts";
import { callKey, type ToolLabel } from "./tool_title.ts";

export type { ToolOutput } from "./tool_row.ts";
export { type ToolLabel, toolLabel } from "./tool_title.ts";

/** How a notice looks. */
export type NoticeTone = "info" | "good" | "warn" | "error" | "dim";

/**
 * Which call a tool event is about: the step whose reply asked for it and the call (its id is
 * unique only within that reply). A tool event of the session has this shape.
 */
export interface ToolKey {
  /** The step whose reply asked for the call. */
  readonly step: number;
  /** The call. */
  readonly call: ToolCall;
}

interface Cache {
  width: number;
  stamp: number;
  gap: boolean;
  lines: readonly StyledLine[];
}

abstract class Block {
  abstract readonly kind: "user" | "assistant" | "reasoning" | "tool" | "notice";
  stamp = 0;
  cache: Cache | undefined;
  abstract render(width: number, view: TranscriptView): readonly StyledLine[];
}

class UserBlock extends Block {
  readonly kind = "user";
  constructor(readonly text: string) {
    super();
  }
  render(width: number): readonly StyledLine[] {
    const lines: StyledLine[] = [];
    this.text.split("\n").forEach((line, i) => {
      for (
        const wrapped of wrapSpans([{ text: line, style: Styles.user }], width, {
          first: [{ text: i === 0 ? "› " : "  ", style: Styles.accent }],
          rest: [{ text: "  ", style: Styles.plain }],
        })
      ) lines.push(wrapped);
    });
    return lines;
  }
}

class AssistantBlock extends Block {
  readonly kind = "assistant";
  readonly markdown = new MarkdownStream();
  render(width: number): readonly StyledLine[] {
    return this.markdown.lines(width);
  }
}

class ReasoningBlock extends Block {
  readonly kind = "reasoning";
  chunks: string[] = [];
  text = "";
  join(): string {
    if (this.chunks.length > 0) {
      this.text += this.chunks.join("");
      this.chunks = [];
    }
    return this.text;
  }
  render(width: number, view: TranscriptView): readonly StyledLine[] {
    const text = this.join().trim();
    if (view.reasoningCollapsed) {
      const words = text === "" ? 0 : text.split(/\s+/).length;
      return [[{
        text: truncateToCells(`▸ thinking · ${words} words (Ctrl-O shows)`, width),
        style: Styles.reasoning,
      }]];
    }
    const lines: StyledLine[] = [[{ text: "▾ thinking", style: Styles.reasoning }]];
    for (const line of text.split("\n")) {
      for (const wrapped of wrapSpans([{ text: line, style: Styles.reasoning }], width)) {
        lines.push(wrapped);
      }
    }
    return lines;
  }
}

class ToolBlock extends Block {
  readonly kind = "tool";
  constructor(readonly row: ToolRow) {
    super();
  }
  render(width: number): readonly StyledLine[] {
    return this.row.render(width);
  }
}

class NoticeBlock extends Block {
  readonly kind = "notice";
  constructor(readonly text: string, readonly tone: NoticeTone) {
    super();
  }
  render(width: number): readonly StyledLine[] {
    const look = toneStyle(this.tone);
    const lines: StyledLine[] = [];
    for (const line of this.text.split("\n")) {
      for (const wrapped of wrapSpans([{ text: line, style: look }], width)) lines.push(wrapped);
    }
    return lines;
  }
}

function toneStyle(tone: NoticeTone): Style {
  switch (tone) {
    case "good":
      return Styles.good;
    case "warn":
      return Styles.warn;
    case "error":
      return Styles.error;
    case "dim":
      return Styles.dim;
    default:
      return Styles.plain;
  }
}

const EMPTY_LINE: StyledLine = [];

/**
 * The transcript's blocks and their rendering.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TranscriptView } from "./transcript_view.ts";
 * import { plainText } from "./lines.ts";
 * const view = new TranscriptView();
 * view.addUser("greet amber");
 * const call = { id: "call_0", name: "greet", arguments: "{}" };
 * view.toolStart({ step: 0, call }, { verb: "greeting", summary: "greet amber" });
 * view.toolEnd({ step: 0, call }, { ok: true, output: "Hello, amber!" }, 3);
 * view.appendText("Done: **greeted**.");
 * view.addUser("again");
 * // The same id in the next turn is a call of its own, with a row of its own.
 * view.toolEnd({ step: 2, call }, { ok: false, output: "", error: "the user denied 'greet'" }, 0);
 * assert.deepEqual(view.view(40, 20, 0).map(plainText), [
 *   "› greet amber",
 *   "",
 *   "⚙ greet amber",
 *   "  ✓ Hello, amber!  (3 ms)",
 *   "",
 *   "Done: greeted.",
 *   "",
 *   "› again",
 *   "",
 *   "⚙ greet",
 *   "  ✗ the user denied 'greet'",
 * ]);
 * ```
 */
export class TranscriptView {
  #blocks: Block[] = [];
  #open: AssistantBlock | ReasoningBlock | undefined;
  #tools = new Map<string, ToolBlock>();
  #collapsed = false;
  #stamp = 0;

  /** Whether reasoning shows as one line. */
  get reasoningCollapsed(): boolean {
    return this.#collapsed;
  }

  /** How many blocks there are. */
  get size(): number {
    return this.#blocks.length;
  }

  /** Moves on every change: a frame can tell whether anything is new. */
  get stamp(): number {
    return this.#stamp;
  }

  /** Collapses or expands every reasoning block. */
  toggleReasoning(): void {
    this.#collapsed = !this.#collapsed;
    for (const block of this.#blocks) if (block.kind === "reasoning") block.stamp++;
    this.#stamp++;
  }

  /** The user's prompt. */
  addUser(text: string): void {
    this.#close();
    // A new turn: its calls' rows are new rows, whatever ids earlier turns used.
    this.#tools = new Map();
    this.#push(new UserBlock(text));
  }

  /** A delta of the answer: stored now, rendered at the next frame. */
  appendText(delta: string): void {
    if (!(this.#open instanceof AssistantBlock)) {
      this.#close();
      this.#open = new AssistantBlock();
      this.#push(this.#open);
    }
    this.#open.markdown.append(delta);
    this.#open.stamp++;
    this.#stamp++;
  }

  /** A delta of reasoning. */
  appendReasoning(delta: string): void {
    if (!(this.#open instanceof ReasoningBlock)) {
      this.#close();
      this.#open = new ReasoningBlock();
      this.#push(this.#open);
    }
    this.#open.chunks.push(delta);
    this.#open.stamp++;
    this.#stamp++;
  }

  /** Ends the text or reasoning in progress: what streams next starts a new block. */
  endStream(): void {
    this.#close();
  }

  /** A tool call starts to run: its row, running. */
  toolStart(key: ToolKey, label: ToolLabel): void {
    const block = this.#row(key, label);
    block.row.label = label;
    block.row.start();
    this.#touch(block);
  }

  /** Output a running call streamed: its row shows the last lines of it, and keeps it all. */
  toolOutput(key: ToolKey, chunk: string): void {
    const block = this.#tools.get(callKey(key.step, key.call.id));
    if (block === undefined || block.row.ended) return;
    block.row.append(chunk);
    this.#touch(block);
  }

  /**
   * A tool call's outcome after `durationMs`; a call that never started (denied, blocked,
   * unknown) gets its row now, labelled `label`.
   */
  toolEnd(key: ToolKey, result: ToolResult, durationMs: number, label?: ToolLabel): void {
    const block = this.#row(key, label ?? { verb: key.call.name, summary: "" });
    block.row.end(result, durationMs);
    this.#touch(block);
  }

  /**
   * Expands the last tool row (all of its output and diff), or collapses it again; false when
   * there is none.
   */
  toggleLastTool(): boolean {
    const block = this.#lastTool();
    if (block === undefined) return false;
    block.row.expanded = !block.row.expanded;
    this.#touch(block);
    return true;
  }

  /** The last tool row's whole output; undefined when there is none. */
  lastToolOutput(): ToolOutput | undefined {
    return this.#lastTool()?.row.output();
  }

  /**
   * A full-screen viewer of the last tool row's whole output (open it as a panel with its
   * `id`); it stays on that row, whose output may still grow. Undefined when there is none.
   */
  lastToolViewer(): OutputViewer | undefined {
    const row = this.#lastTool()?.row;
    return row === undefined ? undefined : new OutputViewer(() => row.output());
  }

  /** A line (or lines) from the host: command output, an error, a cancellation. */
  notice(text: string, tone: NoticeTone = "info"): void {
    this.#close();
    this.#push(new NoticeBlock(text, tone));
  }

  /** Empties the transcript. */
  clear(): void {
    this.#blocks = [];
    this.#tools = new Map();
    this.#open = undefined;
    this.#stamp++;
  }

  /**
   * Shows a conversation read back from a session: prompts, reasoning, answers, and each tool
   * call with its result. `label` names a call the way the live view did. Each user message
   * starts a turn and each assistant message a step of it, so that every call's row sits under
   * its own prompt, whatever ids the calls had. A result carries no change when read back: an
   * `edit` or `write` row shows the change rebuilt from the call's arguments.
   */
  replay(messages: readonly Message[], label: (call: ToolCall) => ToolLabel): void {
    let step = -1;
    for (const message of messages) {
      if (message.role === "user") {
        this.addUser(message.content);
        step = -1;
      } else if (message.role === "assistant") {
        step++;
        if (message.reasoning) {
          this.appendReasoning(message.reasoning);
          this.#close();
        }
        if (message.content) {
          this.appendText(message.content);
          this.#close();
        }
        for (const call of message.toolCalls ?? []) this.#row({ step, call }, label(call));
      } else if (message.role === "tool") {
        const block = this.#tools.get(callKey(step, message.toolCallId));
        if (block === undefined) continue;
        const result: ToolResult = message.isError
          ? { ok: false, output: "", error: message.content.replace(/^error: /, "") }
          : { ok: true, output: message.content };
        block.row.end(result, undefined, result.ok ? changeOfCall(block.row.call) : undefined);
        this.#touch(block);
      }
    }
  }

  /** How many lines the whole transcript takes at `width` (renders every block once). */
  totalLines(width: number): number {
    let total = 0;
    for (let i = 0; i < this.#blocks.length; i++) total += this.#linesOf(i, width).length;
    return total;
  }

  /**
   * The `height` lines on screen at `width`, `scroll` lines up from the end, oldest first.
   * Only the blocks that reach the screen are rendered.
   */
  view(width: number, height: number, scroll: number): StyledLine[] {
    const want = height + Math.max(0, scroll);
    const picked: (readonly StyledLine[])[] = [];
    let count = 0;
    for (let i = this.#blocks.length - 1; i >= 0 && count < want; i--) {
      const lines = this.#linesOf(i, width);
      picked.push(lines);
      count += lines.length;
    }
    const out: StyledLine[] = [];
    for (let p = picked.length - 1; p >= 0; p--) {
      for (const line of picked[p]) out.push(line);
    }
    const end = Math.max(0, out.length - Math.max(0, scroll));
    return out.slice(Math.max(0, end - height), end);
  }

  #linesOf(index: number, width: number): readonly StyledLine[] {
    const block = this.#blocks[index];
    const previous = this.#blocks[index - 1];
    // A blank line between blocks, except between consecutive tool calls.
    const gap = previous !== undefined && !(block.kind === "tool" && previous.kind === "tool");
    const cache = block.cache;
    if (
      cache !== undefined && cache.width === width && cache.stamp === block.stamp &&
      cache.gap === gap
    ) {
      return cache.lines;
    }
    const rendered = block.render(width, this);
    const lines = gap ? [EMPTY_LINE, ...rendered] : rendered;
    block.cache = { width, stamp: block.stamp, gap, lines };
    return lines;
  }

  // The row of the call `key` names in the turn in progress, made (labelled `label`) if new.
  #row(key: ToolKey, label: ToolLabel): ToolBlock {
    this.#close();
    const id = callKey(key.step, key.call.id);
    const known = this.#tools.get(id);
    if (known !== undefined) return known;
    const block = new ToolBlock(new ToolRow(key.call, label));
    this.#tools.set(id, block);
    this.#push(block);
    return block;
  }

  #lastTool(): ToolBlock | undefined {
    for (let i = this.#blocks.length - 1; i >= 0; i--) {
      const block = this.#blocks[i];
      if (block instanceof ToolBlock) return block;
    }
    return undefined;
  }

  #touch(block: Block): void {
    block.stamp++;
    this.#stamp++;
  }

  #push(block: Block): void {
    this.#blocks.push(block);
    this.#stamp++;
  }

  #close(): void {
    this.#open = undefined;
  }
}
