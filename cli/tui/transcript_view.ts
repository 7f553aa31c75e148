/**
 * The transcript as the TUI shows it: the user's prompts, the answer rendered as Markdown as it
 * streams, reasoning dimmed (and collapsible), one line per tool call with the tool's verb and
 * summary followed by its outcome, and notices (command output, errors, cancellations).
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
import { sanitize, type Span, type StyledLine, wrapSpans } from "./lines.ts";
import { MarkdownStream } from "./markdown.ts";
import { type Style, Styles } from "./style.ts";

/** How a notice looks. */
export type NoticeTone = "info" | "good" | "warn" | "error" | "dim";

/** How a tool call is shown: its verb and one-line summary. */
export interface ToolLabel {
  /** The tool's display verb ("reading", "running"). */
  readonly verb: string;
  /** `summarize(args)`. */
  readonly summary: string;
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
  outcome: { result: ToolResult; ms: number } | undefined;
  running = false;
  constructor(readonly call: ToolCall, public label: ToolLabel) {
    super();
  }
  render(width: number): readonly StyledLine[] {
    const icon: Span = this.outcome === undefined
      ? { text: "⚙ ", style: Styles.warn }
      : { text: "⚙ ", style: Styles.dim };
    const head = wrapSpans(
      [
        { text: this.label.verb, style: Styles.bold },
        { text: ` ${sanitize(this.label.summary)}`, style: Styles.plain },
      ],
      width,
      { first: [icon], rest: [{ text: "  ", style: Styles.plain }] },
    );
    if (this.outcome === undefined) return head;
    const { result, ms } = this.outcome;
    const took = ms >= 1 ? `  (${formatMs(ms)})` : "";
    let line: Span[];
    if (result.ok) {
      const output = result.output.trim();
      const all = output === "" ? [] : output.split("\n");
      const more = all.length > 1 ? `  … +${all.length - 1} lines` : "";
      const first = sanitize(all[0] ?? "done");
      const room = Math.max(1, width - 4 - more.length - took.length);
      line = [
        { text: "  ✓ ", style: Styles.good },
        { text: truncateToCells(first, room), style: Styles.dim },
        { text: more + took, style: Styles.dim },
      ];
    } else {
      const error = sanitize((result.error ?? "failed").split("\n")[0]);
      line = [
        { text: "  ✗ ", style: Styles.error },
        { text: truncateToCells(error, Math.max(1, width - 4 - took.length)), style: Styles.error },
        { text: took, style: Styles.dim },
      ];
    }
    return [...head, line];
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

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const EMPTY_LINE: StyledLine = [];

/**
 * A call's label from its tool: the tool's verb and its summary of the arguments (the tool's
 * name for both when it has none, or the arguments do not parse).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolLabel } from "./transcript_view.ts";
 * const tool = { verb: "reading", summarize: (args: { path?: string }) => args.path ?? "" };
 * const call = { id: "c1", name: "read", arguments: '{"path":"a.ts"}' };
 * assert.deepEqual(toolLabel(tool, call), { verb: "reading", summary: "a.ts" });
 * assert.deepEqual(toolLabel(undefined, call), { verb: "read", summary: "read" });
 * ```
 */
export function toolLabel(
  tool: { readonly verb?: string; summarize?(args: unknown): string } | undefined,
  call: ToolCall,
): ToolLabel {
  let summary = call.name;
  try {
    const args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
    summary = tool?.summarize?.(args) ?? call.name;
  } catch {
    // A summary is cosmetic.
  }
  return { verb: tool?.verb ?? call.name, summary };
}

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
 * const call = { id: "c1", name: "greet", arguments: "{}" };
 * view.toolStart(call, { verb: "greeting", summary: "greet amber" });
 * view.toolEnd(call, { ok: true, output: "Hello, amber!" }, 3);
 * view.appendText("Done: **greeted**.");
 * assert.deepEqual(view.view(40, 10, 0).map(plainText), [
 *   "› greet amber",
 *   "",
 *   "⚙ greeting greet amber",
 *   "  ✓ Hello, amber!  (3 ms)",
 *   "",
 *   "Done: greeted.",
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

  /** A tool call starts (or is about to be asked about). */
  toolStart(call: ToolCall, label: ToolLabel): void {
    this.#close();
    const known = this.#tools.get(call.id);
    if (known !== undefined) {
      known.label = label;
      known.stamp++;
      this.#stamp++;
      return;
    }
    const block = new ToolBlock(call, label);
    this.#tools.set(call.id, block);
    this.#push(block);
  }

  /** A tool call's outcome; a call that never started (denied, blocked) gets its line now. */
  toolEnd(call: ToolCall, result: ToolResult, durationMs: number, label?: ToolLabel): void {
    let block = this.#tools.get(call.id);
    if (block === undefined) {
      this.toolStart(call, label ?? { verb: call.name, summary: "" });
      block = this.#tools.get(call.id)!;
    }
    block.outcome = { result, ms: durationMs };
    block.stamp++;
    this.#stamp++;
  }

  /** A line (or lines) from the host: command output, an error, a cancellation. */
  notice(text: string, tone: NoticeTone = "info"): void {
    this.#close();
    this.#push(new NoticeBlock(text, tone));
  }

  /** Empties the transcript. */
  clear(): void {
    this.#blocks = [];
    this.#tools.clear();
    this.#open = undefined;
    this.#stamp++;
  }

  /**
   * Shows a conversation read back from a session: prompts, reasoning, answers, and each tool
   * call with its result. `label` names a call the way the live view did.
   */
  replay(messages: readonly Message[], label: (call: ToolCall) => ToolLabel): void {
    for (const message of messages) {
      if (message.role === "user") this.addUser(message.content);
      else if (message.role === "assistant") {
        if (message.reasoning) {
          this.appendReasoning(message.reasoning);
          this.#close();
        }
        if (message.content) {
          this.appendText(message.content);
          this.#close();
        }
        for (const call of message.toolCalls ?? []) this.toolStart(call, label(call));
      } else if (message.role === "tool") {
        const block = this.#tools.get(message.toolCallId);
        if (block === undefined) continue;
        const result: ToolResult = message.isError
          ? { ok: false, output: "", error: message.content.replace(/^error: /, "") }
          : { ok: true, output: message.content };
        this.toolEnd(block.call, result, 0);
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

  #push(block: Block): void {
    this.#blocks.push(block);
    this.#stamp++;
  }

  #close(): void {
    this.#open = undefined;
  }
}
