/**
 * The command drawer: typing `/` opens a list of the commands that match what is typed, each
 * with its help, read from the live command tree every time the input changes (the registry
 * rebuilds its tree when a plugin is switched on or off, so a plugin's commands appear and
 * disappear at once). Up and Down select, Tab completes, Esc closes; when the typed line has gone
 * past a command into its argument, the drawer shows that command's manual.
 *
 * Past a command whose argument has known values (`/model `, `/provider `, `/resume `), it offers
 * those values, narrowed by what is typed, and Tab completes them. Given the workspace's files
 * and the MCP servers' resources, it also completes an `@path` or `@server:uri` word typed at
 * the end of a prompt (see `mentions.ts`).
 *
 * @module
 */

import type { CommandRoot, CommandTreeNode } from "@amber/core";
import { truncateToCells } from "@amber/core/cells";
import type { Key } from "./input.ts";
import type { LineEditor } from "./line_editor.ts";
import {
  completeMention,
  mentionEntries,
  type MentionEntry,
  type MentionQuery,
  mentionQuery,
  type MentionResource,
} from "./mentions.ts";
import type { StyledLine } from "./lines.ts";
import { Styles } from "./style.ts";

/** One line of the drawer: a command path and its help. */
export interface CommandEntry {
  /** The words after the slash. */
  readonly words: readonly string[];
  /** `/root sub`. */
  readonly line: string;
  /** One line of help. */
  readonly help: string;
  /** The manual. */
  readonly man: string;
  /** Whether it has a handler. */
  readonly executable: boolean;
  /** `core` or the plugin that contributed it. */
  readonly owner: string;
}

/**
 * Every command the tree offers: each root without children, and each leaf below a root, with
 * the help and manual of the deepest node that has one. Sorted by their text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandEntries } from "./drawer.ts";
 * const tree = [{
 *   name: "hello", path: "", help: "Say hello", man: "", owner: "hello",
 *   children: [{ name: "greet", path: "greet", help: "Greet someone", man: "", action: "x", children: [] }],
 * }];
 * assert.deepEqual(commandEntries(tree).map((e) => `${e.line}: ${e.help}`), ["/hello greet: Greet someone"]);
 * ```
 */
export function commandEntries(tree: readonly CommandRoot[]): CommandEntry[] {
  const entries: CommandEntry[] = [];
  const walk = (
    node: CommandTreeNode,
    words: string[],
    help: string,
    man: string,
    owner: string,
  ) => {
    const here = node.help || help;
    const manual = node.man || man;
    if (node.children.length === 0) {
      entries.push({
        words,
        line: `/${words.join(" ")}`,
        help: here,
        man: manual,
        executable: node.action !== undefined,
        owner,
      });
      return;
    }
    for (const child of node.children) walk(child, [...words, child.name], here, manual, owner);
  };
  for (const root of tree) walk(root, [root.name], root.help, root.man, root.owner);
  return entries.sort((a, b) => a.line.localeCompare(b.line));
}

/** What the drawer shows for an input. */
export interface DrawerMatch {
  /** The entries that match, in order. */
  readonly entries: readonly CommandEntry[];
  /** Set when the input has gone past one command into its argument. */
  readonly argumentOf?: CommandEntry;
}

/**
 * The entries matching a typed line: each typed word but the last names a word of the entry, the
 * last is a prefix of the entry's word at its place (a trailing space asks for the next word).
 * When the typed words go past an entry's words, that entry is the one match (its argument is
 * being typed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandEntries, matchEntries } from "./drawer.ts";
 * const entry = (line: string) => ({ words: line.slice(1).split(" "), line, help: "", man: "", executable: true, owner: "core" });
 * const entries = [entry("/help"), entry("/hello greet"), entry("/set plugin")];
 * assert.deepEqual(matchEntries(entries, "/he").entries.map((e) => e.line), ["/help", "/hello greet"]);
 * assert.equal(matchEntries(entries, "/hello greet amber").argumentOf?.line, "/hello greet");
 * ```
 */
export function matchEntries(entries: readonly CommandEntry[], input: string): DrawerMatch {
  const text = input.trimStart();
  if (!text.startsWith("/") || text.includes("\n")) return { entries: [] };
  const typed = text.slice(1).split(/\s+/);
  // "/hello " splits to ["hello", ""]: the empty last word asks for what comes next.
  const matches: CommandEntry[] = [];
  for (const entry of entries) {
    const words = entry.words;
    if (typed.length > words.length) {
      // Past the entry: an argument is being typed.
      let same = true;
      for (let i = 0; i < words.length && same; i++) same = typed[i] === words[i];
      if (same && typed.slice(words.length).some((w) => w !== "")) {
        return { entries: [entry], argumentOf: entry };
      }
      if (!same || typed.at(-1) !== "") continue;
      if (typed.length - 1 === words.length) matches.push(entry);
      continue;
    }
    let match = true;
    for (let i = 0; i < typed.length - 1 && match; i++) match = typed[i] === words[i];
    if (match && words[typed.length - 1].startsWith(typed[typed.length - 1])) matches.push(entry);
  }
  return { entries: matches };
}

/** One value a command's argument can take, as the drawer offers it. */
export interface ArgumentEntry {
  /** The value Tab puts after the command. */
  readonly value: string;
  /** What it is: a model's window and price, a session's first prompt... */
  readonly help: string;
}

/**
 * The values the argument of `command` (its words after the slash, space-separated: `model`)
 * can take, every one (the drawer narrows them to what is typed); undefined when the command's
 * argument has no known values. Called at every frame while such an argument is typed: it
 * answers from what it has and fetches in the background what it has not.
 */
export type ArgumentCompleter = (command: string) => readonly ArgumentEntry[] | undefined;

/**
 * `entries` narrowed to those whose value holds `typed` (ignoring case), the ones it starts
 * first, each group in the given order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchArguments } from "./drawer.ts";
 * const entries = ["gpt-5", "o3", "gpt-5-mini", "mini-gpt"].map((value) => ({ value, help: "" }));
 * assert.deepEqual(matchArguments(entries, "gpt").map((e) => e.value), ["gpt-5", "gpt-5-mini", "mini-gpt"]);
 * ```
 */
export function matchArguments(
  entries: readonly ArgumentEntry[],
  typed: string,
): ArgumentEntry[] {
  const needle = typed.toLowerCase();
  const starts: ArgumentEntry[] = [];
  const holds: ArgumentEntry[] = [];
  for (const entry of entries) {
    const value = entry.value.toLowerCase();
    if (value.startsWith(needle)) starts.push(entry);
    else if (value.includes(needle)) holds.push(entry);
  }
  return [...starts, ...holds];
}

/** Where a {@linkcode Drawer} finds what it completes besides commands. */
export interface DrawerSources {
  /** The MCP servers' resources, for `@server:uri`. */
  readonly resources?: () => readonly MentionResource[];
  /** The workspace's files, for `@path`; undefined while they are being listed. */
  readonly files?: () => readonly string[] | undefined;
  /** The values of commands' arguments. */
  readonly arguments?: ArgumentCompleter;
}

// The argument being typed after a command whose argument has known values.
interface ArgumentState {
  /** The input up to the argument. */
  readonly prefix: string;
  /** The argument as typed. */
  readonly typed: string;
  /** The values matching it. */
  readonly entries: readonly ArgumentEntry[];
}

/**
 * The drawer's state: the entries of the last tree it saw, the matches for the input, the
 * selection, and whether the user closed it for this input.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Drawer } from "./drawer.ts";
 * const tree = [{
 *   name: "quit", path: "", help: "Leave", man: "", owner: "core", action: "core.quit", children: [],
 * }];
 * const drawer = new Drawer();
 * drawer.update(tree, "/q");
 * assert.equal(drawer.open, true);
 * assert.equal(drawer.completion(), "/quit");
 * ```
 *
 * @example A command's argument completes to the values it can take
 * ```ts
 * import assert from "node:assert/strict";
 * import { Drawer } from "./drawer.ts";
 * const tree = [{ name: "model", path: "", help: "", man: "", owner: "core", action: "m", children: [] }];
 * const drawer = new Drawer({
 *   arguments: (command) => command === "model"
 *     ? [{ value: "gpt-5", help: "400,000 tokens" }, { value: "o3", help: "" }]
 *     : undefined,
 * });
 * drawer.update(tree, "/model g");
 * assert.equal(drawer.completing, true);
 * assert.equal(drawer.completion(), "/model gpt-5");
 * ```
 */
export class Drawer {
  #tree: readonly CommandRoot[] | undefined;
  #entries: CommandEntry[] = [];
  #input = "";
  #match: DrawerMatch = { entries: [] };
  #selected = 0;
  #dismissed = false;
  readonly #sources: DrawerSources;
  #mention: { readonly query: MentionQuery; readonly entries: MentionEntry[] } | undefined;
  #argument: ArgumentState | undefined;

  /**
   * A drawer of commands; with `sources`, of commands' argument values, and of `@path` and
   * `@server:uri` mentions too.
   */
  constructor(sources: DrawerSources = {}) {
    this.#sources = sources;
  }

  /**
   * Re-reads the tree (rebuilding the entries only when the registry gave a new one), or, for a
   * mention or an argument being typed, what it completes from (resources change as servers
   * connect, files and models are listed in the background).
   */
  update(tree: readonly CommandRoot[], input: string): void {
    const { resources, files } = this.#sources;
    const mention = resources === undefined && files === undefined
      ? undefined
      : mentionQuery(input);
    if (mention !== undefined) {
      this.#retype(input);
      const entries = mentionEntries({ resources: resources?.(), files: files?.() }, mention);
      this.#mention = { query: mention, entries };
      this.#argument = undefined;
      this.#clampSelection();
      return;
    }
    // Leaving a mention: the command match is recomputed whatever the input.
    const leaving = this.#mention !== undefined;
    this.#mention = undefined;
    if (tree !== this.#tree) {
      this.#tree = tree;
      this.#entries = commandEntries(tree);
    } else if (input === this.#input && !leaving) {
      // The argument's values may have arrived since the last frame.
      this.#argument = this.#argumentOf(input);
      this.#clampSelection();
      return;
    }
    this.#retype(input);
    this.#match = matchEntries(this.#entries, input);
    this.#argument = this.#argumentOf(input);
    this.#clampSelection();
  }

  // A new input: the selection starts over and a closed drawer opens again.
  #retype(input: string): void {
    if (input !== this.#input) {
      this.#selected = 0;
      this.#dismissed = false;
    }
    this.#input = input;
  }

  // How many entries the selection moves over: the `@` word's, the argument's or the commands'.
  #count(): number {
    return (this.#mention?.entries ?? this.#argument?.entries ?? this.#match.entries).length;
  }

  #clampSelection(): void {
    this.#selected = Math.min(this.#selected, Math.max(0, this.#count() - 1));
  }

  // The argument being typed after the longest command that has known values for it: one word,
  // with values that match it.
  #argumentOf(input: string): ArgumentState | undefined {
    const complete = this.#sources.arguments;
    const text = input.trimStart();
    if (complete === undefined || !text.startsWith("/") || text.includes("\n")) return undefined;
    let best: CommandEntry | undefined;
    for (const entry of this.#entries) {
      if (text.startsWith(`${entry.line} `) && entry.line.length > (best?.line.length ?? 0)) {
        best = entry;
      }
    }
    if (best === undefined) return undefined;
    const typed = text.slice(best.line.length).trimStart();
    if (/\s/.test(typed)) return undefined;
    const values = complete(best.words.join(" "));
    if (values === undefined) return undefined;
    const entries = matchArguments(values, typed);
    if (entries.length === 0) return undefined;
    return { prefix: `${best.line} `, typed, entries };
  }

  /** Whether it shows. */
  get open(): boolean {
    if (this.#mention !== undefined) return !this.#dismissed && this.#mention.entries.length > 0;
    return !this.#dismissed && this.#input.trimStart().startsWith("/") &&
      !this.#input.includes("\n");
  }

  /** Whether it shows files or resources for an `@` word rather than commands. */
  get mentioning(): boolean {
    return this.#mention !== undefined && this.open;
  }

  /** Whether it shows the values a command's argument can take. */
  get completing(): boolean {
    return this.#argument !== undefined && this.open;
  }

  /** Whether the argument typed is one of the values offered, exactly. */
  get exactArgument(): boolean {
    const argument = this.#argument;
    return argument !== undefined && argument.entries.some((e) => e.value === argument.typed);
  }

  /** The argument as typed, when the drawer offers values for it. */
  get typedArgument(): string | undefined {
    return this.#argument?.typed;
  }

  /** The current matches. */
  get match(): DrawerMatch {
    return this.#match;
  }

  /** The selected entry. */
  get selected(): CommandEntry | undefined {
    return this.#match.entries[this.#selected];
  }

  /** Moves the selection. */
  move(by: number): void {
    const count = this.#count();
    if (count === 0) return;
    this.#selected = (this.#selected + by + count) % count;
  }

  /** Closes it until the input changes. */
  dismiss(): void {
    this.#dismissed = true;
  }

  /**
   * The input the selected entry completes to (`/hello greet`), or undefined when there is no
   * selection or the input already goes past it.
   */
  completion(): string | undefined {
    if (this.#mention !== undefined) {
      const chosen = this.#mention.entries[this.#selected];
      return chosen === undefined
        ? undefined
        : completeMention(this.#input, this.#mention.query, chosen);
    }
    if (this.#argument !== undefined) {
      const chosen = this.#argument.entries[this.#selected];
      return chosen === undefined ? undefined : `${this.#argument.prefix}${chosen.value}`;
    }
    const entry = this.selected;
    if (entry === undefined || this.#match.argumentOf !== undefined) return undefined;
    return entry.line;
  }

  /** The drawer's lines at `width`, at most `rows` of them. */
  lines(width: number, rows: number): StyledLine[] {
    if (rows <= 0) return [];
    if (this.#mention !== undefined) return this.#list(this.#mention.entries, width, rows);
    if (this.#argument !== undefined) {
      const values = this.#argument.entries.map((e) => ({ line: e.value, help: e.help }));
      return this.#list(values, width, rows);
    }
    const { entries, argumentOf } = this.#match;
    if (entries.length === 0) {
      return [[{ text: truncateToCells("  no command matches", width), style: Styles.dim }]];
    }
    if (argumentOf !== undefined) {
      const lines: StyledLine[] = [[
        { text: truncateToCells(`  ${argumentOf.line}`, width), style: Styles.accent },
        {
          text: truncateToCells(
            `  ${argumentOf.help}`,
            Math.max(0, width - argumentOf.line.length - 2),
          ),
          style: Styles.dim,
        },
      ]];
      for (const line of (argumentOf.man || "").split("\n")) {
        if (line.trim() === "" || lines.length >= rows) continue;
        lines.push([{ text: truncateToCells(`    ${line}`, width), style: Styles.dim }]);
      }
      return lines;
    }
    return this.#list(entries, width, rows);
  }

  // Entries, one a line: their text and help in two columns, the selection kept in view.
  #list(
    entries: readonly { readonly line: string; readonly help: string }[],
    width: number,
    rows: number,
  ): StyledLine[] {
    const column = Math.min(40, Math.max(...entries.map((e) => e.line.length)) + 4);
    // Keep the selection in view.
    const first = Math.max(0, Math.min(this.#selected - rows + 1, entries.length - rows));
    const start = Math.max(0, Math.min(first, this.#selected));
    const lines: StyledLine[] = [];
    for (let i = start; i < entries.length && lines.length < rows; i++) {
      const entry = entries[i];
      const selected = i === this.#selected;
      const name = truncateToCells(`  ${entry.line}`, column).padEnd(column + 1);
      const help = truncateToCells(entry.help, Math.max(0, width - column - 1));
      lines.push([
        { text: name, style: selected ? Styles.selected : Styles.accent },
        { text: help, style: selected ? Styles.selected : Styles.dim },
      ]);
    }
    return lines;
  }
}

/** What {@linkcode editKey} works on. */
export interface EditTarget {
  /** The drawer. */
  readonly drawer: Drawer;
  /** The input line. */
  readonly editor: LineEditor;
  /** The live command tree. */
  tree(): readonly CommandRoot[];
  /** Sends the input line (Enter). */
  submit(): void;
}

/**
 * A key for the drawer or the input line: with the drawer open, Up and Down select, Tab
 * completes, Esc closes it, and Enter on a partial word completes it to the selection and sends
 * that (a command's argument too, unless it is empty or one of the values offered; a mention is
 * sent as typed); everything else edits the line. Returns `"escape"` for an Esc nothing here
 * wanted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Drawer, editKey } from "./drawer.ts";
 * import { History, LineEditor } from "./line_editor.ts";
 * const editor = new LineEditor(new History());
 * const sent: string[] = [];
 * const target = { drawer: new Drawer(), editor, tree: () => [], submit: () => sent.push(editor.text) };
 * const key = (name: string, text?: string) => ({ name, text, ctrl: false, alt: false, shift: false });
 * editKey(target, key("text", "hi"));
 * editKey(target, key("enter"));
 * assert.deepEqual(sent, ["hi"]);
 * assert.equal(editKey(target, key("escape")), "escape");
 * ```
 */
export function editKey(target: EditTarget, key: Key): "escape" | undefined {
  const { drawer, editor } = target;
  drawer.update(target.tree(), editor.text);
  if (drawer.open && key.name === "escape") {
    drawer.dismiss();
    return undefined;
  }
  // Values of an argument and `@` words: the same list keys, and Tab inserts without a space
  // after a value (the line may be sent as it is).
  const listing = drawer.completing || drawer.mentioning;
  if (listing && (key.name === "up" || key.name === "down" || key.name === "tab")) {
    if (key.name === "tab") {
      const completion = drawer.completion();
      if (completion !== undefined) editor.set(completion);
      drawer.update(target.tree(), editor.text);
    } else drawer.move(key.name === "up" ? -1 : 1);
    return undefined;
  }
  if (drawer.completing && key.name === "enter" && !key.alt) {
    // A partial value completes to the selection, which then runs; an empty one runs as is.
    const completion = drawer.completion();
    if (completion !== undefined && drawer.typedArgument !== "" && !drawer.exactArgument) {
      editor.set(completion);
    }
  }
  if (
    !drawer.mentioning && !drawer.completing && drawer.open && drawer.match.entries.length > 0
  ) {
    if (key.name === "up" || key.name === "down") {
      drawer.move(key.name === "up" ? -1 : 1);
      return undefined;
    }
    if (key.name === "tab") {
      const completion = drawer.completion();
      if (completion !== undefined) editor.set(`${completion} `);
      drawer.update(target.tree(), editor.text);
      return undefined;
    }
    if (key.name === "enter" && !key.alt) {
      // A partial word completes to the selection, which then runs.
      const completion = drawer.completion();
      const typed = editor.text.trim();
      const exact = drawer.match.entries.some((e) => e.line === typed);
      if (completion !== undefined && !exact && completion.startsWith(typed)) {
        editor.set(completion);
      }
    }
  } else if (key.name === "escape") {
    return "escape";
  }
  if (editor.handle(key) === "submit") target.submit();
  drawer.update(target.tree(), editor.text);
  return undefined;
}
