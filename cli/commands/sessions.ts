/**
 * `amber sessions`: the transcripts in the config directory, newest first.
 *
 * @module
 */

import { configDir } from "@amber/core";
import { listSessions } from "@amber/core/kernel";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { table } from "../text_table.ts";

/** `amber sessions`. */
export const sessionsCommand: CliCommand = {
  name: "sessions",
  usage: `  sessions                        every session, newest first (continue one with
                                  amber run --resume ID "<prompt>")`,
  async run(context: CommandContext): Promise<number> {
    if (context.words.length > 0) throw new UsageError("sessions takes no arguments");
    const dir = context.configDir ?? configDir(Deno.env.toObject());
    const sessions = await listSessions(dir);
    if (sessions.length === 0) {
      context.io.out("(no sessions)");
      return 0;
    }
    context.io.out(table(
      ["id", "created", "steps", "model", "first prompt"],
      sessions.map((s) => [
        s.id,
        s.created.slice(0, 19).replace("T", " "),
        String(s.steps),
        s.model ?? "-",
        s.problem ? `(${s.problem}) ${s.title}` : s.title,
      ]),
    ));
    return 0;
  },
};
