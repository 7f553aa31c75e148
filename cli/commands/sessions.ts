/**
 * `amber sessions`: the transcripts in the config directory, newest first, each with what it
 * cost and how often it was compacted.
 *
 * @module
 */

import { configDir } from "@amber/core";
import { listSessions } from "@amber/core/kernel";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { dollars } from "../session/figures.ts";
import { table } from "../text_table.ts";

/** `amber sessions`. */
export const sessionsCommand: CliCommand = {
  name: "sessions",
  usage: `  sessions                        every session, newest first, with its cost (continue one
                                  with amber run --resume ID "<prompt>")`,
  async run(context: CommandContext): Promise<number> {
    if (context.words.length > 0) throw new UsageError("sessions takes no arguments");
    const dir = context.configDir ?? configDir(Deno.env.toObject());
    const sessions = await listSessions(dir);
    if (sessions.length === 0) {
      context.io.out("(no sessions)");
      return 0;
    }
    context.io.out(table(
      ["id", "created", "steps", "cost", "model", "first prompt"],
      sessions.map((s) => [
        s.id,
        s.created.slice(0, 19).replace("T", " "),
        s.compactions > 0 ? `${s.steps} (${s.compactions} compacted)` : String(s.steps),
        s.cost === undefined || !Number.isFinite(s.cost) ? "-" : dollars(s.cost),
        s.model ?? "-",
        s.problem ? `(${s.problem}) ${s.title}` : s.title,
      ]),
    ));
    return 0;
  },
};
