/**
 * The command roots the interactive session adds to the core's `/set` and `/get`: `/help`,
 * `/plugins`, `/panel`, `/mcp`, `/model`, `/provider`, `/sessions`, `/resume`, `/compact`,
 * `/clear` and `/quit`,
 * installed for owner `core` as the host opens. That is before the app that carries them out
 * exists, so each handler reaches its target through a getter at the moment it runs.
 *
 * @module
 */

import type { CommandCapability, CommandHandler, CommandRoot } from "@amber/core";
import { MCP_MANUAL } from "./mcp_panel.ts";

/** What the core commands act on: the running TUI. */
export interface CommandTarget {
  /** The live command tree, for `/help`. */
  tree(): readonly CommandRoot[];
  /** Opens a panel full screen; returns a message when it cannot. */
  openPanel(id: string): string;
  /** The panels there are, one per line. */
  panels(): string;
  /** `/mcp ARG`: opens the MCP console, or answers a subcommand. */
  mcp(arg: string): Promise<string>;
  /** Switches the model, or (without a name) opens the picker of the provider's models. */
  model(name: string): string;
  /** Switches the provider, or (without a name) opens the picker of the presets. */
  provider(name: string): string;
  /** The saved sessions, one per line. */
  sessions(): Promise<string>;
  /** Continues a saved session, or (without an id) opens the picker of the saved sessions. */
  resume(id: string): Promise<string>;
  /**
   * Starts compacting the conversation, the summary keeping what `instructions` name; returns
   * at once (the transcript says how it goes), or says why there is nothing to compact.
   */
  compact(instructions: string): string;
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
 * import assert from "node:assert/strict";
 * import { helpText } from "./core_commands.ts";
 * const tree = [{ name: "quit", path: "", help: "Leave amber", man: "", owner: "core", children: [] }];
 * assert.match(helpText(tree, ""), /^\/quit  Leave amber\n\nKeys: /);
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
      "@path attach a file · " +
      "PgUp PgDn scroll · Ctrl-O show/hide reasoning · " +
      "Ctrl-X expand/collapse the last tool's output · Ctrl-Y view it whole (/ search) · " +
      "Ctrl-C cancel, twice to quit",
  );
  return lines.join("\n");
}

/**
 * The TUI's core command roots, acting on whatever `target()` returns when they run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventBus } from "@amber/core";
 * import { createCommandRegistry } from "@amber/registries/commands";
 * import { tuiCommands } from "./core_commands.ts";
 * const commands = createCommandRegistry();
 * const services = {
 *   owner: "core",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/" },
 * };
 * for (const root of tuiCommands(() => undefined)) commands.install("core", root, services);
 * assert.equal(
 *   commands.tree().map((root) => root.name).join(" "),
 *   "help plugins panel mcp model provider sessions resume compact clear quit",
 * );
 * assert.deepEqual(await commands.dispatch("quit", [], ""), {
 *   ok: false,
 *   error: "'/quit' failed: the interactive session is not running",
 * });
 * ```
 */
export function tuiCommands(target: () => CommandTarget | undefined): CommandCapability[] {
  const app = (): CommandTarget => {
    const found = target();
    if (found === undefined) throw new Error("the interactive session is not running");
    return found;
  };
  const root = (
    name: string,
    help: string,
    handler: CommandHandler,
    man?: string,
  ): CommandCapability => ({
    kind: "command",
    name,
    root: name,
    help,
    ...(man === undefined ? {} : { man }),
    subtree: {},
    handlers: { "": handler },
  });
  return [
    root(
      "help",
      "Show the commands, or one command's help: /help [command]",
      (arg) => helpText(app().tree(), arg),
    ),
    root(
      "plugins",
      "The plugin console: every plugin by category; Enter or Space switches one (Esc closes)",
      () => app().openPanel("plugins"),
    ),
    root(
      "panel",
      "Open a panel full screen: /panel <id> (without an id, list them)",
      (arg) => arg.trim() === "" ? app().panels() : app().openPanel(arg.trim()),
    ),
    // One root, its subcommands parsed from the argument: `/mcp` alone opens the console, and a
    // root with children cannot run itself.
    root(
      "mcp",
      "The MCP servers, live; /mcp list | tools NAME | reconnect NAME | approve NAME",
      (arg) => app().mcp(arg),
      MCP_MANUAL,
    ),
    root(
      "model",
      "Switch the model: /model [name] (alone, pick from the provider's models)",
      (arg) => app().model(arg.trim()),
    ),
    root(
      "provider",
      "Switch the provider preset: /provider [name] (alone, pick from the presets)",
      (arg) => app().provider(arg.trim()),
    ),
    root("sessions", "List the saved sessions, newest first", () => app().sessions()),
    root(
      "resume",
      "Continue a saved session: /resume [id] (alone, pick from the sessions)",
      (arg) => app().resume(arg.trim()),
    ),
    root(
      "compact",
      "Compact the conversation now, the summary keeping what you name: /compact [what to keep]",
      (arg) => app().compact(arg.trim()),
      "Replaces the older part of the conversation with a summary (the last turns stay as they\n" +
        "are), so that a long session fits the model's context window again. It also happens by\n" +
        "itself before a request would fill compaction.at (0.85) of the window. The session file\n" +
        "keeps the full history; --resume goes on from the compacted conversation.",
    ),
    root("clear", "Clear the screen and start a new session", () => app().clear()),
    root(
      "quit",
      "Leave amber (Ctrl-C twice, or Ctrl-D on an empty line, too)",
      () => app().quit(),
    ),
  ];
}
