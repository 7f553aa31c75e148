/**
 * `amber cmd <root> <path...> [arg]`: a slash command, headless, within its `command` deadline
 * (see `command_deadline.ts`).
 *
 * @module
 */

import { walkCommandTree } from "@amber/core";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { dispatchWithin } from "../command_deadline.ts";

/** `amber cmd`. */
export const cmdCommand: CliCommand = {
  name: "cmd",
  usage:
    `  cmd <root> <path...> [arg]      run a command of the command tree (amber cmd hello greet amber)`,
  run: cmd,
};

async function cmd(context: CommandContext): Promise<number> {
  const { io, words } = context;
  const host = await context.host();
  const [rootWord, ...rest] = words;
  const roots = host.registries.command.tree();
  const names = roots.map((r) => r.name).join(", ");
  if (rootWord === undefined) {
    throw new UsageError(`usage: amber cmd <root> <path...> [arg]; roots: ${names}`);
  }
  const { root, node, path, used } = walkCommandTree(roots, words);
  if (root === undefined || node === undefined) {
    throw new UsageError(`unknown command root '${rootWord}'; roots: ${names}`);
  }
  const i = used - 1;
  if (node.action === undefined && node.children.length > 0) {
    const where = [rootWord, ...path].join(" ");
    const next = rest[i] === undefined ? "" : ` has no '${rest[i]}';`;
    throw new UsageError(
      `'${where}'${next} choose one of: ${node.children.map((c) => c.name).join(", ")}`,
    );
  }
  const arg = rest.slice(i).join(" ");
  const outcome = await dispatchWithin(host.runtime, host.registries.command, rootWord, path, arg);
  if (outcome.ok) {
    io.out(outcome.text);
    return 0;
  }
  io.err(`amber: ${outcome.error}`);
  return 1;
}
