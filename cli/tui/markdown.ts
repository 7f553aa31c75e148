/**
 * Markdown for the terminal: the subset a model's answer uses, rendered to styled lines at a
 * width. Fenced code blocks keep their lines (broken, never reflowed) behind a gutter with the
 * language on top; headings are bold; list items get a bullet and a hanging indent; quotes a
 * bar; `**strong**`, `*emphasis*`, `` `code` ``, `~~struck~~` and `[links](url)` are styled.
 * Each source line stays a line (models break lines on purpose), wrapped at the width.
 *
 * Rendering goes line by line with a small state (inside a fence or not), which is what makes
 * {@linkcode MarkdownStream} cheap: a streamed answer renders each finished line once, and only
 * the unfinished last line again at every frame. Unclosed emphasis renders as typed until its
 * closing marker arrives.
 *
 * @module
 */

import { type Span, type StyledLine, wrapSpans } from "./lines.ts";
import { merge, type Style, style, Styles } from "./style.ts";

/** What the renderer carries from one line to the next. */
export interface MarkdownState {
  /** The open fence (```` ``` ```` or `~~~`), while inside a code block. */
  fence: string | undefined;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const LIST = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const LINK = /^\[([^\]\n]+)\]\(([^)\s]+)\)/;
const WORD_CHAR = /[\p{L}\p{N}]/u;

const GUTTER: Span = { text: "│ ", style: Styles.dim };
const BOLD = style({ bold: true });
const ITALIC = style({ italic: true });
const STRIKE = style({ strike: true });
const LINK_STYLE = style({ underline: true, fg: "cyan" });

/**
 * Inline markup of one line of text as spans over `base`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderInline } from "./markdown.ts";
 * assert.deepEqual(renderInline("a **b** `c`", 0).map((s) => s.text), ["a ", "b", " ", "c"]);
 * ```
 */
export function renderInline(text: string, base: Style = Styles.plain): Span[] {
  const spans: Span[] = [];
  let plain = "";
  const push = (span: Span) => {
    if (plain !== "") spans.push({ text: plain, style: base });
    plain = "";
    if (span.text !== "") spans.push(span);
  };
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === "`") {
      let ticks = 1;
      while (text[i + ticks] === "`") ticks++;
      const marker = "`".repeat(ticks);
      const close = text.indexOf(marker, i + ticks);
      if (close > i + ticks) {
        push({ text: text.slice(i + ticks, close), style: merge(base, Styles.code) });
        i = close + ticks;
        continue;
      }
    } else if ((char === "*" || char === "_") && text[i + 1] === char) {
      const marker = char + char;
      const close = text.indexOf(marker, i + 2);
      if (close > i + 2 && text[i + 2] !== " " && text[close - 1] !== " ") {
        for (const span of renderInline(text.slice(i + 2, close), merge(base, BOLD))) push(span);
        i = close + 2;
        continue;
      }
    } else if (char === "*" || char === "_") {
      const before = i > 0 ? text[i - 1] : " ";
      const intraword = char === "_" && WORD_CHAR.test(before);
      if (!intraword && text[i + 1] !== " " && text[i + 1] !== undefined) {
        let close = text.indexOf(char, i + 1);
        while (
          close > 0 && char === "_" && close + 1 < text.length && WORD_CHAR.test(text[close + 1])
        ) {
          close = text.indexOf(char, close + 1);
        }
        if (close > i + 1 && text[close - 1] !== " " && text[close + 1] !== char) {
          for (const span of renderInline(text.slice(i + 1, close), merge(base, ITALIC))) {
            push(span);
          }
          i = close + 1;
          continue;
        }
      }
    } else if (char === "~" && text[i + 1] === "~") {
      const close = text.indexOf("~~", i + 2);
      if (close > i + 2) {
        for (const span of renderInline(text.slice(i + 2, close), merge(base, STRIKE))) push(span);
        i = close + 2;
        continue;
      }
    } else if (char === "[") {
      const link = LINK.exec(text.slice(i));
      if (link) {
        push({ text: link[1], style: merge(base, LINK_STYLE) });
        if (link[2] !== link[1]) push({ text: ` (${link[2]})`, style: merge(base, Styles.dim) });
        i += link[0].length;
        continue;
      }
    }
    plain += char;
    i++;
  }
  if (plain !== "") spans.push({ text: plain, style: base });
  return spans;
}

/**
 * Renders one source line (without its line break) at `width`, updating `state`. A line may
 * render to several screen lines (wrapping) or none (a closing fence).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderMarkdownLine } from "./markdown.ts";
 * import { plainText } from "./lines.ts";
 * const state = { fence: undefined };
 * const lines = ["- one", "~~~ts", "let x = 1;", "~~~"].flatMap((l) => renderMarkdownLine(l, 40, state));
 * assert.deepEqual(lines.map(plainText), ["• one", "┌ ts", "│ let x = 1;", "└"]);
 * ```
 */
export function renderMarkdownLine(
  line: string,
  width: number,
  state: MarkdownState,
): StyledLine[] {
  if (state.fence !== undefined) {
    const trimmed = line.trim();
    if (trimmed.startsWith(state.fence) && trimmed.replaceAll(state.fence[0], "") === "") {
      state.fence = undefined;
      return [[{ text: "└", style: Styles.dim }]];
    }
    return wrapSpans([{ text: line, style: Styles.code }], width, {
      first: [GUTTER],
      rest: [GUTTER],
      hard: true,
    });
  }
  const fence = FENCE.exec(line);
  if (fence) {
    state.fence = fence[1];
    return [[{ text: `┌ ${fence[2] || "code"}`, style: Styles.dim }]];
  }
  if (line.trim() === "") return [[]];
  const heading = HEADING.exec(line);
  if (heading) {
    const level = heading[1].length;
    const look = level === 1 ? style({ bold: true, underline: true }) : BOLD;
    return wrapSpans(renderInline(heading[2], look), width);
  }
  if (RULE.test(line)) {
    return [[{ text: "─".repeat(Math.max(1, Math.min(width, 40))), style: Styles.dim }]];
  }
  const quote = QUOTE.exec(line);
  if (quote) {
    return wrapSpans(renderInline(quote[1], Styles.reasoning), width, {
      first: [GUTTER],
      rest: [GUTTER],
    });
  }
  const item = LIST.exec(line);
  if (item) {
    const depth = Math.min(Math.floor(item[1].replaceAll("\t", "  ").length / 2), 6);
    const ordered = /\d/.test(item[2]);
    const bullet = ordered ? item[2] : depth % 2 === 0 ? "•" : "◦";
    const indent = "  ".repeat(depth);
    return wrapSpans(renderInline(item[3]), width, {
      first: [{ text: indent, style: Styles.plain }, {
        text: `${bullet} `,
        style: ordered ? Styles.plain : Styles.accent,
      }],
      rest: [{ text: `${indent}${" ".repeat(bullet.length + 1)}`, style: Styles.plain }],
    });
  }
  return wrapSpans(renderInline(line), width);
}

/**
 * Renders a whole Markdown text at `width`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderMarkdown } from "./markdown.ts";
 * import { plainText } from "./lines.ts";
 * assert.deepEqual(renderMarkdown("# Title\n\nSome *words*.", 80).map(plainText), ["Title", "", "Some words."]);
 * ```
 */
export function renderMarkdown(source: string, width: number): StyledLine[] {
  const state: MarkdownState = { fence: undefined };
  const lines: StyledLine[] = [];
  for (const line of source.split("\n")) {
    for (const rendered of renderMarkdownLine(line, width, state)) lines.push(rendered);
  }
  return lines;
}

/**
 * A Markdown text that grows as it streams in. `append` only stores the delta; `lines(width)`
 * renders the lines finished since the last call once, keeps them, and renders only the
 * unfinished last line again. A new width renders everything once at that width.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MarkdownStream } from "./markdown.ts";
 * import { plainText } from "./lines.ts";
 * const stream = new MarkdownStream();
 * stream.append("Hello **wor");
 * assert.deepEqual(stream.lines(80).map(plainText), ["Hello **wor"]);
 * stream.append("ld**\n- item");
 * assert.deepEqual(stream.lines(80).map(plainText), ["Hello world", "• item"]);
 * ```
 */
export class MarkdownStream {
  #chunks: string[] = [];
  #source = "";
  #width = -1;
  #done: StyledLine[] = [];
  #doneTo = 0;
  #state: MarkdownState = { fence: undefined };
  #lines: readonly StyledLine[] = [];
  #linesAt = -1;

  /** A stream starting with `text`. */
  constructor(text: string = "") {
    if (text !== "") this.#chunks.push(text);
  }

  /** Adds a delta; nothing is rendered until `lines` asks. */
  append(delta: string): void {
    this.#chunks.push(delta);
  }

  /** The whole text so far. */
  get source(): string {
    this.#join();
    return this.#source;
  }

  /** The rendered lines at `width`. */
  lines(width: number): readonly StyledLine[] {
    this.#join();
    if (width !== this.#width) {
      this.#width = width;
      this.#done = [];
      this.#doneTo = 0;
      this.#state = { fence: undefined };
      this.#linesAt = -1;
    }
    if (this.#linesAt === this.#source.length) return this.#lines;
    const source = this.#source;
    let newline: number;
    while ((newline = source.indexOf("\n", this.#doneTo)) >= 0) {
      const line = source.slice(this.#doneTo, newline);
      for (const rendered of renderMarkdownLine(line, width, this.#state)) {
        this.#done.push(rendered);
      }
      this.#doneTo = newline + 1;
    }
    const tail = source.slice(this.#doneTo);
    this.#lines = tail === ""
      ? this.#done.slice()
      : this.#done.concat(renderMarkdownLine(tail, width, { ...this.#state }));
    this.#linesAt = source.length;
    return this.#lines;
  }

  #join(): void {
    if (this.#chunks.length === 0) return;
    this.#source += this.#chunks.join("");
    this.#chunks = [];
  }
}
