/**
 * Amber's command tree as ACP slash commands: the list an editor offers (one entry per root of
 * the live tree, so a plugin switched off takes its commands with it). A prompt that names one
 * (`/set plugin off hello`) runs through `../slash_line.ts`, as in `amber run`.
 *
 * @module
 */

import type { AvailableCommand } from "@agentclientprotocol/sdk";
import type { CommandRoot } from "@amber/core";

/**
 * The commands of the tree `roots` as the editor lists them: the root's word and help, and an
 * input hint naming its subcommands when it has some, else what its usage line
 * (`Usage: /review [path]`, as a markdown command's `argument-hint` gives it) says follows the
 * word. A help that ends with that usage loses it: the editor shows the hint.
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
 * }, {
 *   ...leaf,
 *   name: "review",
 *   owner: "files.commands.workspace",
 *   help: "Review code: /review [path]",
 *   man: "Usage: /review [path]\nfrom review.md",
 *   action: "review",
 * }];
 * assert.deepEqual(availableCommands(roots), [
 *   { name: "set", description: "change a setting", input: { hint: "plugin" } },
 *   { name: "review", description: "Review code", input: { hint: "[path]" } },
 * ]);
 * ```
 */
export function availableCommands(roots: readonly CommandRoot[]): AvailableCommand[] {
  return roots.map((root) => {
    const hint = root.children.length > 0
      ? root.children.map((child) => child.name).join(" | ")
      : usageHint(root);
    // A help that ends with the usage (`Review code: /review [path]`) says it once, as the hint.
    const usage = `: /${root.name} ${hint}`;
    const help = hint !== "" && root.help.endsWith(usage)
      ? root.help.slice(0, -usage.length)
      : root.help;
    return {
      name: root.name,
      description: help === "" ? `/${root.name}` : help,
      ...(hint === "" ? {} : { input: { hint } }),
    };
  });
}

// What the first line of a leaf root's manual says follows its word: `Usage: /review [path]`.
function usageHint(root: CommandRoot): string {
  const usage = `Usage: /${root.name} `;
  const first = root.man.split("\n", 1)[0];
  return first.startsWith(usage) ? first.slice(usage.length).trim() : "";
}
