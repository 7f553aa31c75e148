/**
 * `amber status` and `amber panel <id>`: the status bar and the panels, as text.
 *
 * @module
 */

import { withDeadline } from "@amber/core";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import type { Host } from "../host.ts";
import { accountSettings, type ProviderOverrides } from "../provider_settings.ts";
import { resolveProviderFor } from "../session/provider.ts";

// How long `amber status` waits for the account's balance and quota before drawing without
// them (`-`): a bar that hangs on a slow billing endpoint is worse than one that says unknown.
const ACCOUNT_WAIT_MS = 5_000;

/** `amber status`. */
export const statusCommand: CliCommand = {
  name: "status",
  usage: `  status [--width N]              the status bar, with the account's balance and quota
                                  windows as the interactive session shows them (- unknown)`,
  options: ["width"],
  async run(context: CommandContext): Promise<number> {
    if (context.words.length > 0) throw new UsageError("status takes no arguments");
    const host = await context.host();
    await refreshAccount(host, context.overrides);
    const bar = host.registries.status.compose(context.width, host.snapshot(context.overrides));
    context.io.out(bar.text);
    return 0;
  },
};

// The interactive bar fetches the balance when it opens and learns the quota from responses;
// a one-shot command has no responses, so it asks for both, as `amber wallet` does. A provider
// that cannot be resolved has no account to show: the bar says nothing of it either.
async function refreshAccount(host: Host, overrides: ProviderOverrides): Promise<void> {
  const resolution = resolveProviderFor(host, overrides);
  if (!resolution.ok) return;
  const request = accountSettings(resolution.resolved);
  const { wallet, allowance } = host.registries;
  const both = () => Promise.allSettled([wallet.refresh(request), allowance.refresh(request)]);
  // Settled, both: only the deadline can reject.
  await withDeadline(both, ACCOUNT_WAIT_MS, "the account").catch(() => {});
}

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
