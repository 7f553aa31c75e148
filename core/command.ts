/**
 * Commands: slash-command namespaces a plugin adds to the host's command tree.
 *
 * @module
 */

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

/** A command handler: receives the rest of the line, returns the text the host shows. */
export type CommandHandler = (arg: string) => string | Promise<string>;

/**
 * A command capability: a root, its help, the subtree below it, and one handler per executable
 * leaf keyed by its dotted path below the root.
 *
 * @example
 * ```ts
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

/** The outcome of dispatching a command. */
export type CommandOutcome =
  | { readonly ok: true; readonly text: string }
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
