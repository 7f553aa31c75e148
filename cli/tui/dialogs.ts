/**
 * Dialogs: the questions the TUI asks in place of the input line, one at a time, in the order
 * they were asked. They are the TUI's implementation of the plugins' UI services (ask text, ask
 * secret, choose, confirm, notify) and what approval prompts are built on. Esc dismisses a
 * question (its answer is `undefined`, or `false` for a confirmation); a withdrawn question
 * (its signal aborted) disappears. A secret is shown masked and goes nowhere but the caller:
 * not into the input history, not into the transcript.
 *
 * @module
 */

import type { NotifyTone, UiAskOptions, UiService, UiTextOptions } from "@amber/core";
import { truncateToCells } from "@amber/core/cells";
import type { Key } from "./input.ts";
import { layoutInput, LineEditor } from "./line_editor.ts";
import type { StyledLine } from "./lines.ts";
import { Styles } from "./style.ts";

/** One choice of a dialog. */
export interface DialogChoice {
  /** What it says. */
  readonly label: string;
  /** A key that picks it at once (`y`, `n`). */
  readonly hotkey?: string;
}

interface Dialog {
  readonly question: string;
  readonly kind: "text" | "secret" | "choose";
  readonly choices: readonly DialogChoice[];
  readonly editor: LineEditor;
  selected: number;
  readonly settle: (answer: string | undefined) => void;
  /** Lines shown between the question and the choices (an approval's diff). */
  readonly body?: (width: number) => readonly StyledLine[];
  /** The body's lines at the width last drawn: a question is drawn again on every key. */
  drawn?: { readonly width: number; readonly lines: readonly StyledLine[] };
}

// Without the screen's height, a body shows this many lines at most.
const BODY_ROWS = 16;
// Rows a question leaves to the rest of the screen: the rule above it and the status line.
const FRAME_ROWS = 3;

/** A dialog laid out: its lines and, for text, where the cursor goes. */
export interface DialogLayout {
  /** The lines, top to bottom. */
  readonly lines: StyledLine[];
  /** The cursor, for a text question. */
  readonly cursor?: { readonly row: number; readonly col: number };
}

/**
 * The dialog queue and the UI services over it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Dialogs } from "./dialogs.ts";
 * const dialogs = new Dialogs();
 * const answer = dialogs.choose("Region?", ["eu", "us"]);
 * dialogs.key({ name: "down", ctrl: false, alt: false, shift: false });
 * dialogs.key({ name: "enter", ctrl: false, alt: false, shift: false });
 * assert.equal(await answer, "us");
 * ```
 */
export class Dialogs implements UiService {
  /** A person is there to answer. */
  readonly interactive: boolean = true;
  #queue: Dialog[] = [];
  #onChange: () => void;
  #onNotify: (message: string, tone: NotifyTone) => void;

  /** Dialogs that call `onChange` when one opens or closes and send notices to `onNotify`. */
  constructor(
    onChange: () => void = () => {},
    onNotify: (message: string, tone: NotifyTone) => void = () => {},
  ) {
    this.#onChange = onChange;
    this.#onNotify = onNotify;
  }

  /** Sets where changes and notices go (the app, once it runs). */
  attach(onChange: () => void, onNotify: (message: string, tone: NotifyTone) => void): void {
    this.#onChange = onChange;
    this.#onNotify = onNotify;
    if (this.#queue.length > 0) onChange();
  }

  /** Whether a question is showing. */
  get active(): boolean {
    return this.#queue.length > 0;
  }

  /**
   * Asks to pick one of `choices`; resolves to its index, or undefined when dismissed. `body`,
   * when given, draws lines between the question and the choices at a width (an approval's
   * diff); what does not fit in about two thirds of the screen is cut, saying how much.
   */
  pick(
    question: string,
    choices: readonly DialogChoice[],
    signal?: AbortSignal,
    body?: (width: number) => readonly StyledLine[],
  ): Promise<number | undefined> {
    return this.#open(question, "choose", choices, "", signal, body).then((answer) =>
      answer === undefined ? undefined : Number(answer)
    );
  }

  /** Asks for one line of text; `undefined` when dismissed. */
  askText(question: string, options: UiTextOptions = {}): Promise<string | undefined> {
    return this.#open(question, "text", [], options.initial ?? "", options.signal);
  }

  /** Asks for a secret, shown masked; `undefined` when dismissed. */
  askSecret(question: string, options: UiAskOptions = {}): Promise<string | undefined> {
    return this.#open(question, "secret", [], "", options.signal);
  }

  /** Asks to pick one of `choices`; `undefined` when dismissed. */
  async choose<T extends string>(
    question: string,
    choices: readonly T[],
    options: UiAskOptions = {},
  ): Promise<T | undefined> {
    if (choices.length === 0) return undefined;
    const index = await this.pick(question, choices.map((label) => ({ label })), options.signal);
    return index === undefined ? undefined : choices[index];
  }

  /** Asks yes or no; `false` when dismissed. */
  async confirm(question: string, options: UiAskOptions = {}): Promise<boolean> {
    const index = await this.pick(question, [
      { label: "yes", hotkey: "y" },
      { label: "no", hotkey: "n" },
    ], options.signal);
    return index === 0;
  }

  /** Shows a notice in the transcript. */
  notify(message: string, tone: NotifyTone = "info"): void {
    this.#onNotify(String(message), tone);
  }

  /** Routes a key to the showing question; false when none shows. */
  key(key: Key): boolean {
    const dialog = this.#queue[0];
    if (dialog === undefined) return false;
    if (key.name === "escape" || (key.ctrl && key.name === "c")) {
      this.#close(dialog, undefined);
      return true;
    }
    if (dialog.kind === "choose") {
      const count = dialog.choices.length;
      if (key.name === "up" || key.name === "left" || (key.shift && key.name === "tab")) {
        dialog.selected = (dialog.selected + count - 1) % count;
      } else if (key.name === "down" || key.name === "right" || key.name === "tab") {
        dialog.selected = (dialog.selected + 1) % count;
      } else if (key.name === "enter") {
        this.#close(dialog, String(dialog.selected));
        return true;
      } else if (key.name === "text" && !key.ctrl && !key.alt) {
        const hit = dialog.choices.findIndex((c) =>
          c.hotkey !== undefined && c.hotkey === key.text?.toLowerCase()
        );
        if (hit >= 0) this.#close(dialog, String(hit));
      }
      this.#onChange();
      return true;
    }
    if (key.name === "enter" && !key.alt) {
      this.#close(dialog, dialog.editor.text);
      return true;
    }
    // A secret is one line: no history, no line breaks.
    if (key.name === "up" || key.name === "down") return true;
    if (dialog.kind === "secret" && key.name === "paste") {
      dialog.editor.insert((key.text ?? "").replace(/\n/g, ""));
    } else dialog.editor.handle(key);
    this.#onChange();
    return true;
  }

  /** Dismisses every question (the TUI is closing). */
  cancelAll(): void {
    for (const dialog of [...this.#queue]) this.#close(dialog, undefined);
  }

  /**
   * The showing question at `width`; `rows`, the screen's height, bounds a body to about two
   * thirds of it (without it, to a few lines), so the question and its choices stay in view.
   */
  layout(width: number, rows?: number): DialogLayout | undefined {
    const dialog = this.#queue[0];
    if (dialog === undefined) return undefined;
    const lines: StyledLine[] = [];
    for (const [i, line] of dialog.question.split("\n").entries()) {
      lines.push([
        { text: i === 0 ? "? " : "  ", style: Styles.warn },
        { text: truncateToCells(line, Math.max(1, width - 2)), style: Styles.bold },
      ]);
    }
    if (dialog.kind === "choose") {
      if (dialog.body !== undefined) {
        const below = dialog.choices.length + 1;
        const room = rows === undefined
          ? BODY_ROWS
          : Math.min(Math.floor(rows * 2 / 3), rows - FRAME_ROWS - lines.length - below);
        lines.push(...bodyLines(dialog, width, Math.max(1, room)));
      }
      dialog.choices.forEach((choice, i) => {
        const selected = i === dialog.selected;
        const label = `${choice.hotkey ? `${choice.hotkey}  ` : ""}${choice.label}`;
        lines.push([
          { text: selected ? " ❯ " : "   ", style: Styles.accent },
          {
            text: truncateToCells(label, Math.max(1, width - 3)),
            style: selected ? Styles.selected : Styles.plain,
          },
        ]);
      });
      const keys = dialog.choices.some((c) => c.hotkey) ? "letter or " : "";
      lines.push([{
        text: truncateToCells(`   ${keys}↑↓ Enter to choose · Esc to dismiss`, width),
        style: Styles.dim,
      }]);
      return { lines };
    }
    const input = layoutInput(
      dialog.editor.text,
      dialog.editor.cursor,
      width,
      [{ text: "› ", style: Styles.accent }],
      dialog.kind === "secret",
    );
    const top = lines.length;
    for (const line of input.lines) lines.push(line);
    lines.push([{
      text: truncateToCells("   Enter to answer · Esc to dismiss", width),
      style: Styles.dim,
    }]);
    return { lines, cursor: { row: top + input.row, col: input.col } };
  }

  #open(
    question: string,
    kind: Dialog["kind"],
    choices: readonly DialogChoice[],
    initial: string,
    signal: AbortSignal | undefined,
    body?: (width: number) => readonly StyledLine[],
  ): Promise<string | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const editor = new LineEditor();
      editor.set(initial);
      const dialog: Dialog = {
        question: String(question),
        kind,
        choices,
        editor,
        selected: 0,
        ...(body === undefined ? {} : { body }),
        settle: (answer) => {
          signal?.removeEventListener("abort", withdraw);
          resolve(answer);
        },
      };
      const withdraw = () => this.#close(dialog, undefined);
      signal?.addEventListener("abort", withdraw, { once: true });
      this.#queue.push(dialog);
      this.#onChange();
    });
  }

  #close(dialog: Dialog, answer: string | undefined): void {
    const index = this.#queue.indexOf(dialog);
    if (index < 0) return;
    this.#queue.splice(index, 1);
    dialog.settle(answer);
    this.#onChange();
  }
}

// A question's body cut to `rows`, the last of them saying how many lines were left out.
function bodyLines(dialog: Dialog, width: number, rows: number): readonly StyledLine[] {
  if (dialog.drawn?.width !== width) {
    let drawn: readonly StyledLine[];
    try {
      drawn = dialog.body?.(width) ?? [];
    } catch {
      // A body that cannot draw leaves the question as it would be without one.
      drawn = [];
    }
    dialog.drawn = { width, lines: drawn };
  }
  const lines = dialog.drawn.lines;
  if (lines.length <= rows) return lines;
  const kept = lines.slice(0, rows - 1);
  const more = lines.length - kept.length;
  return [
    ...kept,
    [{
      text: truncateToCells(
        `… ${more} more line${more === 1 ? "" : "s"} · full diff in the transcript once it runs`,
        width,
      ),
      style: Styles.dim,
    }],
  ];
}
