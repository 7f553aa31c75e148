/**
 * Commands: slash-command namespaces a plugin adds to the host's command tree.
 *
 * @module
 */

import { describeValueType } from "./errors.ts";
import type { OwnedRegistry } from "./registry.ts";

/**
 * A node of a command subtree, the shape of completions.json.
 */
export interface CommandNode {
  /** One line of help. */
  readonly help?: string;
  /** The manual text. */
  readonly man?: string;
  /** Child nodes by name. */
  readonly children?: { readonly [name: string]: CommandNode };
}

/**
 * What a command handler may return instead of plain text: text the host shows, and a prompt
 * the front end sends to the model as the user's message (an MCP prompt, a template). Either
 * may be left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { CommandHandler } from "@amber/core";
 * const review: CommandHandler = (arg) => ({ prompt: `Review ${arg} for bugs.` });
 * assert.deepEqual(await review("main.ts"), { prompt: "Review main.ts for bugs." });
 * ```
 */
export interface CommandReply {
  /** Text the host shows. */
  readonly text?: string;
  /** Text the front end sends to the model as the user's message. */
  readonly prompt?: string;
  /** What the turn `prompt` starts runs with (its model, its tools), for that turn only. */
  readonly turn?: CommandTurn;
}

/**
 * What the turn a command's prompt starts runs with, for that turn only: a markdown command's
 * `model` and `allowed-tools`. The session's own model and tools are back for the next turn.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { CommandHandler } from "@amber/core";
 * const review: CommandHandler = (arg) => ({
 *   prompt: `Review ${arg}.`,
 *   turn: { from: "/review (review.md)", model: "small-model", allowedTools: ["Read"] },
 * });
 * const reply = await review("main.ts");
 * assert.equal(typeof reply === "object" && reply.turn?.model, "small-model");
 * ```
 */
export interface CommandTurn {
  /** The command and its file, as errors and refusals name them: `/review (review.md)`. */
  readonly from: string;
  /** The model that answers the turn in place of the session's. */
  readonly model?: string;
  /**
   * The only tools the turn may call (names or globs, as a skill's `allowed-tools`); it narrows
   * the session's tools, never widens them.
   */
  readonly allowedTools?: readonly string[];
}

/**
 * A command handler: receives the rest of the line, returns the text the host shows, or a
 * {@linkcode CommandReply} that may also carry a prompt for the model.
 */
export type CommandHandler = (
  arg: string,
) => string | CommandReply | Promise<string | CommandReply>;

/**
 * What is wrong with `value` as what a {@linkcode CommandHandler} returned, or `undefined` when
 * it is text or a {@linkcode CommandReply}: a reply is an object whose `text` and `prompt` are
 * text when present, with at least one of them, and a `prompt` that is not blank (the front end
 * would send an empty message). The command registry and the sandbox both check with it, so a
 * handler is held to the same shape wherever it runs. The words fit after "its handler".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandReplyProblem } from "@amber/core";
 * assert.equal(commandReplyProblem("done"), undefined);
 * assert.equal(commandReplyProblem({ prompt: "Explain this." }), undefined);
 * assert.equal(commandReplyProblem(5), "returned number, not text or a reply");
 * assert.equal(commandReplyProblem({ output: "x" }), "returned a reply with neither text nor prompt");
 * assert.equal(commandReplyProblem({ prompt: 1 }), "returned a reply whose prompt is number, not text");
 * assert.equal(
 *   commandReplyProblem({ prompt: "Go.", turn: { from: "/go", allowedTools: "read" } }),
 *   "returned a reply whose turn is not { from, model?, allowedTools? } of text",
 * );
 * ```
 */
export function commandReplyProblem(value: unknown): string | undefined {
  if (typeof value === "string") return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `returned ${describeValueType(value)}, not text or a reply`;
  }
  const { text, prompt } = value as { readonly text?: unknown; readonly prompt?: unknown };
  if (text === undefined && prompt === undefined) {
    return "returned a reply with neither text nor prompt";
  }
  if (text !== undefined && typeof text !== "string") {
    return `returned a reply whose text is ${describeValueType(text)}, not text`;
  }
  if (prompt !== undefined && typeof prompt !== "string") {
    return `returned a reply whose prompt is ${describeValueType(prompt)}, not text`;
  }
  if (prompt !== undefined && prompt.trim() === "") return "returned an empty prompt";
  const { turn } = value as { readonly turn?: unknown };
  if (turn !== undefined && !isCommandTurn(turn)) {
    return "returned a reply whose turn is not { from, model?, allowedTools? } of text";
  }
  return undefined;
}

function isCommandTurn(value: unknown): value is CommandTurn {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { from, model, allowedTools } = value as Record<string, unknown>;
  return typeof from === "string" &&
    (model === undefined || typeof model === "string") &&
    (allowedTools === undefined ||
      (Array.isArray(allowedTools) && allowedTools.every((entry) => typeof entry === "string")));
}

/**
 * A command capability: a root, its help, the subtree below it, and one handler per executable
 * leaf keyed by its dotted path below the root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { CommandCapability } from "@amber/core";
 * const hello: CommandCapability = {
 *   kind: "command",
 *   name: "hello",
 *   root: "hello",
 *   help: "Say hello",
 *   man: "Usage: /hello greet <name>",
 *   subtree: { greet: { help: "Greet someone by name" } },
 *   handlers: { greet: (arg) => `Hello, ${arg || "world"}!` },
 * };
 * assert.equal(await hello.handlers.greet("amber"), "Hello, amber!");
 * ```
 */
export interface CommandCapability {
  /** The dispatch key. */
  readonly kind: "command";
  /** Unique within the plugin. */
  readonly name: string;
  /** The root word: `/hello`. */
  readonly root: string;
  /** One line of help for the root. */
  readonly help: string;
  /** The manual. */
  readonly man?: string;
  /** The nodes below the root. */
  readonly subtree: { readonly [name: string]: CommandNode };
  /**
   * Handlers by dotted path below the root ("greet", "config.set"); `""` makes a root without
   * children executable itself. A leaf without one is inert.
   */
  readonly handlers: { readonly [path: string]: CommandHandler };
}

/**
 * A node of the merged command tree.
 */
export interface CommandTreeNode {
  /** The node's word. */
  readonly name: string;
  /** Its dotted path below the root ("" for the root itself). */
  readonly path: string;
  /** One line of help. */
  readonly help: string;
  /** The manual. */
  readonly man: string;
  /**
   * `plugin.<id>.<root>.<path>` (or `core.<root>.<path>`) for an executable leaf; undefined if
   * inert. The root is in it so that one plugin's two roots never derive the same action.
   */
  readonly action?: string;
  /** Child nodes, in declaration order. */
  readonly children: readonly CommandTreeNode[];
}

/** A root of the merged command tree with its owner. */
export interface CommandRoot extends CommandTreeNode {
  /** The plugin that contributed it, or `core`. */
  readonly owner: string;
}

/**
 * The outcome of dispatching a command. `prompt`, when present, is for the front end to send to
 * the model as the user's message.
 */
export type CommandOutcome =
  | {
    readonly ok: true;
    readonly text: string;
    readonly prompt?: string;
    /** What the turn `prompt` starts runs with, for that turn only. */
    readonly turn?: CommandTurn;
  }
  | { readonly ok: false; readonly error: string };

/**
 * The command registry contract.
 */
export interface CommandRegistry extends OwnedRegistry<CommandCapability> {
  /** The merged tree, rebuilt at every change. */
  tree(): readonly CommandRoot[];
  /**
   * Runs the leaf at `root` + `path`, resolving its handler from the live registry now. A
   * throwing handler, an inert leaf and an unknown path are errors that list what exists.
   */
  dispatch(root: string, path: readonly string[], arg: string): Promise<CommandOutcome>;
}

/** How far a line's words reach into the command tree. */
export interface CommandWalk {
  /** The root the first word names, if any. */
  readonly root?: CommandRoot;
  /** The deepest node the words reach (the root itself when no child matched). */
  readonly node?: CommandTreeNode;
  /** The child names matched below the root. */
  readonly path: readonly string[];
  /** How many words were used: the root and the path; the rest is the argument. */
  readonly used: number;
}

/**
 * Matches words against a command tree: the first names a root, and each next word that names a
 * child of the node reached so far joins the path. The headless `amber cmd`, the TUI's slash
 * line and the plugin test host all read a command line this way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { walkCommandTree } from "@amber/core";
 * const tree = [{
 *   name: "hello", path: "", help: "", man: "", owner: "hello",
 *   children: [{ name: "greet", path: "greet", help: "", man: "", children: [] }],
 * }];
 * const walk = walkCommandTree(tree, ["hello", "greet", "Ada"]);
 * assert.deepEqual(walk.path, ["greet"]);
 * assert.equal(walk.used, 2);
 * ```
 */
export function walkCommandTree(
  tree: readonly CommandRoot[],
  words: readonly string[],
): CommandWalk {
  const root = words.length === 0 ? undefined : tree.find((r) => r.name === words[0]);
  if (root === undefined) return { path: [], used: Math.min(1, words.length) };
  let node: CommandTreeNode = root;
  const path: string[] = [];
  let used = 1;
  for (; used < words.length; used++) {
    const child: CommandTreeNode | undefined = node.children.find((c) => c.name === words[used]);
    if (child === undefined) break;
    path.push(child.name);
    node = child;
  }
  return { root, node, path, used };
}
