/**
 * `amber tools`.
 *
 * @module
 */

import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { table } from "../text_table.ts";

/** `amber tools`. */
export const toolsCommand: CliCommand = {
  name: "tools",
  usage: `  tools                           every tool with its owner, access and approval`,
  run: tools,
};

async function tools(context: CommandContext): Promise<number> {
  const { io } = context;
  if (context.words.length > 0) throw new UsageError("tools takes no arguments");
  const host = await context.host();
  const rows = host.registries.tool.list().map((entry) => [
    entry.tool.name,
    entry.owner,
    entry.tool.readOnly ? "read-only" : "writes",
    entry.tool.requiresApproval ? "decided per call" : "never",
  ]);
  io.out(rows.length === 0 ? "(no tools)" : table(["tool", "owner", "access", "approval"], rows));
  return 0;
}
