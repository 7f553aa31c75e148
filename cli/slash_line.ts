/**
 * A prompt line that names a command of the live command tree (`/set plugin off hello`), run as
 * that command: the one way `amber run` and `amber acp` treat such a prompt.
 *
 * @module
 */

import { type CommandOutcome, walkCommandTree } from "@amber/core";
import { dispatchWithin } from "./command_deadline.ts";
import type { Host } from "./host.ts";

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
  // No turn runs now, so this is a step boundary: a command file edited since the last step is
  // read again before its command is looked up and expanded.
  host.runtime.refresh();
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
