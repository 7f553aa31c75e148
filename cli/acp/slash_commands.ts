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
