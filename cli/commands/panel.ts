/**
 * `amber status` and `amber panel <id>`: the status bar and the panels, as text.
 *
 * @module
 */

import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";

/** `amber status`. */
export const statusCommand: CliCommand = {
  name: "status",
  usage: `  status [--width N]              the status bar`,
  options: ["width"],
  async run(context: CommandContext): Promise<number> {
    if (context.words.length > 0) throw new UsageError("status takes no arguments");
    const host = await context.host();
    const bar = host.registries.status.compose(context.width, host.snapshot(context.overrides));
    context.io.out(bar.text);
    return 0;
  },
};

/** `amber panel`. */
export const panelCommand: CliCommand = {
  name: "panel",
  usage: `  panel <id> [--width N]          a panel's text (panel plugins: the plugin console)`,
  options: ["width"],
  run: panel,
};

async function panel(context: CommandContext): Promise<number> {
  const { io, words, width } = context;
  const host = await context.host();
  const [id, ...extra] = words;
  const panels = host.registries.panel.list();
  const known = panels.map((p) => p.id).join(", ");
  if (id === undefined || extra.length > 0) {
    throw new UsageError(`usage: amber panel <id>; panels: ${known}`);
  }
  const panel = panels.find((p) => p.id === id);
  const lines = panel && host.registries.panel.render(id, width);
  if (panel === undefined || lines === undefined) {
    throw new UsageError(`unknown panel '${id}'; panels: ${known}`);
  }
  io.out(
    [panel.title, "─".repeat(Math.min(width, Math.max(panel.title.length, 1))), ...lines].join(
      "\n",
    ),
  );
  return 0;
}
