/**
 * `amber config check`.
 *
 * @module
 */

import { configDir } from "@amber/core";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { checkConfig } from "../config_check.ts";

/** `amber config check`. */
export const configCommand: CliCommand = {
  name: "config",
  usage: `  config check                    every problem in the configuration, with file and line`,
  run: config,
};

async function config(context: CommandContext): Promise<number> {
  const { io, words } = context;
  const dir = context.configDir;
  const plugins = context.plugins();
  if (words.length !== 1 || words[0] !== "check") {
    throw new UsageError("usage: amber config check");
  }
  const configDirectory = dir ?? configDir(Deno.env.toObject());
  const check = await checkConfig(configDirectory, plugins, context.workspace);
  if (check.problems.length === 0) {
    io.out(
      `${configDirectory}: no problems; ${check.active.length} of ${check.plugins} plugins active`,
    );
    return 0;
  }
  for (const problem of check.problems) io.out(problem);
  io.out(`${check.problems.length} problem${check.problems.length === 1 ? "" : "s"}`);
  return 1;
}
