/**
 * Amber's command tree as ACP slash commands: the list an editor offers (one entry per root of
 * the live tree, so a plugin switched off takes its commands with it) and the running of a
 * prompt that names one (`/set plugin off hello`).
 *
 * @module
 */

import type { AvailableCommand } from "@agentclientprotocol/sdk";
import { type CommandOutcome, type CommandRoot, walkCommandTree } from "@amber/core";
import { dispatchWithin } from "../command_deadline.ts";
import type { Host } from "../host.ts";

/**
 * The commands of the tree `roots` as the editor lists them: the root's word and help, and an
 * input hint naming its subcommands when it has some.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { availableCommands } from "./slash_commands.ts";
 * const leaf = { path: "", help: "", man: "", children: [] };
 * const roots = [{
 *   ...leaf,
 *   name: "set",
 *   owner: "core",
 *   help: "change a setting",
 *   children: [{ ...leaf, name: "plugin", path: "plugin", action: "core.set.plugin" }],
 * }];
 * assert.deepEqual(availableCommands(roots), [
 *   { name: "set", description: "change a setting", input: { hint: "plugin" } },
 * ]);
 * ```
 */
export function availableCommands(roots: readonly CommandRoot[]): AvailableCommand[] {
  return roots.map((root) => {
    const hint = root.children.map((child) => child.name).join(" | ");
    return {
      name: root.name,
      description: root.help === "" ? `/${root.name}` : root.help,
      ...(hint === "" ? {} : { input: { hint } }),
    };
  });
}

/**
 * Runs the command a prompt names, or answers undefined when its first word names none (the
 * prompt then goes to the model as it is). A word that stops short of a runnable command is an
 * error listing the choices.
 */
export async function runSlashCommand(
  host: Host,
  line: string,
): Promise<CommandOutcome | undefined> {
  if (!line.startsWith("/")) return undefined;
  const words = line.slice(1).split(/\s+/).filter((word) => word !== "");
  const { root, node, path, used } = walkCommandTree(host.registries.command.tree(), words);
  if (root === undefined || node === undefined) return undefined;
  if (node.action === undefined && node.children.length > 0) {
    const where = [root.name, ...path].join(" ");
    return {
      ok: false,
      error: `'/${where}': choose one of: ${node.children.map((c) => c.name).join(", ")}`,
    };
  }
  const arg = words.slice(used).join(" ");
  return await dispatchWithin(host.runtime, host.registries.command, root.name, path, arg);
}
