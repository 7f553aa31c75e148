/**
 * The slash engine: a line typed at the prompt that starts with `/` is a command. The words are
 * matched against the live command tree (core roots and every active plugin's), as deep as they
 * go; what is left is the argument. Dispatch resolves the handler from the live registry at that
 * moment, so a plugin switched off a second ago is simply an unknown command.
 *
 * @module
 */

import {
  type CommandOutcome,
  type CommandRegistry,
  type CommandRoot,
  walkCommandTree,
} from "@amber/core";

/** A command line split into the node it names and its argument. */
export interface SlashCommand {
  /** The root word. */
  readonly root: string;
  /** The path below the root. */
  readonly path: readonly string[];
  /** The rest of the line, as typed (leading spaces trimmed). */
  readonly arg: string;
}

/**
 * Splits `/root sub ... arg` against `tree`: after the root, each word that names a child of the
 * node reached so far goes into the path; the rest of the line is the argument. Undefined when
 * the line is not a command (no leading `/`, or nothing after it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSlash } from "./slash.ts";
 * const tree = [{
 *   name: "hello", path: "", help: "", man: "", owner: "hello",
 *   children: [{ name: "greet", path: "greet", help: "", man: "", children: [] }],
 * }];
 * assert.deepEqual(parseSlash("/hello greet  Ada Lovelace", tree), {
 *   root: "hello",
 *   path: ["greet"],
 *   arg: "Ada Lovelace",
 * });
 * ```
 */
export function parseSlash(line: string, tree: readonly CommandRoot[]): SlashCommand | undefined {
  const text = line.trimStart();
  if (!text.startsWith("/")) return undefined;
  const body = text.slice(1);
  // Words with their positions: the argument is the rest of the line as typed, not re-joined.
  const words = [...body.matchAll(/\S+/g)];
  if (words.length === 0 || words[0].index !== 0) return undefined;
  const { path, used } = walkCommandTree(tree, words.map((word) => word[0]));
  const arg = used < words.length ? body.slice(words[used].index).trimEnd() : "";
  return { root: words[0][0], path, arg };
}

/**
 * Runs a command line through the registry: parses it against the live tree and dispatches it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCommandRegistry } from "@amber/registries/commands";
 * import { runSlash } from "./slash.ts";
 * const commands = createCommandRegistry({
 *   coreRoots: { echo: { help: "Echo", handlers: { "": (arg) => arg } } },
 * });
 * assert.deepEqual(await runSlash(commands, "/echo hi there"), { ok: true, text: "hi there" });
 * ```
 */
export async function runSlash(registry: CommandRegistry, line: string): Promise<CommandOutcome> {
  const parsed = parseSlash(line, registry.tree());
  if (parsed === undefined) return { ok: false, error: "type a command after /" };
  return await registry.dispatch(parsed.root, parsed.path, parsed.arg);
}
