/**
 * The command roots the interactive session adds to the core's `/set` and `/get`: `/help`,
 * `/plugins`, `/panel`, `/model`, `/provider`, `/sessions`, `/resume`, `/clear` and `/quit`.
 * The registry's core roots are fixed when the host is opened, before the app that carries the
 * commands out exists, so each handler reaches the app through a getter at the moment it runs.
 *
 * @module
 */

import type { CommandRoot } from "@amber/core";
import type { CoreCommandRoots } from "@amber/registries/commands";

/** What the core commands act on: the running TUI. */
export interface CommandTarget {
  /** The live command tree, for `/help`. */
  tree(): readonly CommandRoot[];
  /** Opens a panel full screen; returns a message when it cannot. */
  openPanel(id: string): string;
  /** The panels there are, one per line. */
  panels(): string;
  /** Shows or switches the model. */
  model(name: string): string;
  /** Shows or switches the provider. */
  provider(name: string): string;
  /** The saved sessions, one per line. */
  sessions(): Promise<string>;
  /** Continues a saved session. */
  resume(id: string): Promise<string>;
  /** Clears the screen and starts a new session. */
  clear(): string;
  /** Leaves. */
  quit(): string;
}

/**
 * `/help` text: every root with its help, or one command's subcommands and manual.
 *
 * @example
 * ```ts
 * import { helpText } from "./core_commands.ts";
 * const tree = [{ name: "quit", path: "", help: "Leave amber", man: "", owner: "core", children: [] }];
 * console.log(helpText(tree, "")); // "/quit  Leave amber\n\nKeys: ..."
 * ```
 */
export function helpText(tree: readonly CommandRoot[], arg: string): string {
  const word = arg.trim().replace(/^\//, "").split(/\s+/)[0] ?? "";
  if (word !== "") {
    const root = tree.find((r) => r.name === word);
    if (root === undefined) {
      return `no command '/${word}'; commands: ${tree.map((r) => `/${r.name}`).join(", ")}`;
    }
    const lines = [`/${root.name}  ${root.help}`];
    if (root.man) lines.push(root.man);
    for (const child of root.children) lines.push(`  /${root.name} ${child.name}  ${child.help}`);
    if (root.owner !== "core") lines.push(`(from plugin '${root.owner}')`);
    return lines.join("\n");
  }
  const width = Math.max(...tree.map((r) => r.name.length)) + 3;
  const lines = tree.map((root) => `/${root.name}`.padEnd(width) + root.help);
  lines.push(
    "",
    "Keys: Enter send · Ctrl-J or Alt-Enter new line · ↑↓ history · Tab complete · " +
      "PgUp PgDn scroll · Ctrl-O show/hide reasoning · Ctrl-C cancel, twice to quit",
  );
  return lines.join("\n");
}

/**
 * The TUI's core command roots, acting on whatever `target()` returns when they run.
 *
 * @example
 * ```ts
 * import { createCommandRegistry } from "@amber/registries/commands";
 * import { tuiCommandRoots } from "./core_commands.ts";
 * const commands = createCommandRegistry({ coreRoots: tuiCommandRoots(() => undefined) });
 * console.log(commands.tree().map((root) => root.name).join(" "));
 * // "help plugins panel model provider sessions resume clear quit"
 * console.log(await commands.dispatch("quit", [], "")); // { ok: false, error: "'/quit' failed: the interactive session is not running" }
 * ```
 */
export function tuiCommandRoots(target: () => CommandTarget | undefined): CoreCommandRoots {
  const app = (): CommandTarget => {
    const found = target();
    if (found === undefined) throw new Error("the interactive session is not running");
    return found;
  };
  return {
    help: {
      help: "Show the commands, or one command's help: /help [command]",
      handlers: { "": (arg) => helpText(app().tree(), arg) },
    },
    plugins: {
      help: "The plugin console: every plugin by category (Esc closes)",
      handlers: { "": () => app().openPanel("plugins") },
    },
    panel: {
      help: "Open a panel full screen: /panel <id> (without an id, list them)",
      handlers: {
        "": (arg) => arg.trim() === "" ? app().panels() : app().openPanel(arg.trim()),
      },
    },
    model: {
      help: "Show the model, or switch to another: /model [name]",
      handlers: { "": (arg) => app().model(arg.trim()) },
    },
    provider: {
      help: "Show the provider, or switch to another preset: /provider [name]",
      handlers: { "": (arg) => app().provider(arg.trim()) },
    },
    sessions: {
      help: "List the saved sessions, newest first",
      handlers: { "": () => app().sessions() },
    },
    resume: {
      help: "Continue a saved session: /resume <id>",
      handlers: { "": (arg) => app().resume(arg.trim()) },
    },
    clear: {
      help: "Clear the screen and start a new session",
      handlers: { "": () => app().clear() },
    },
    quit: {
      help: "Leave amber (Ctrl-C twice, or Ctrl-D on an empty line, too)",
      handlers: { "": () => app().quit() },
    },
  };
}
