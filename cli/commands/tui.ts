/**
 * `amber` in a terminal, with no command: the interactive session. It takes the session flags of
 * `amber run` (`--provider`, `--model`, `--base-url`, `--resume`, `--approve`, `--max-steps`),
 * opens the host with the TUI's UI services and core commands, and runs the loop until the user
 * leaves; the terminal is restored whatever happens. The modules of the TUI are loaded only
 * here, so every other command starts as fast as before.
 *
 * @module
 */

import type {
  ApprovalPolicy,
  Diagnostic,
  PluginRuntime,
  PluginServices,
  Registries,
} from "@amber/core";
import { join } from "node:path";
import { deferredSubagents } from "../agent.ts";
import { intOption, UsageError } from "../args.ts";
import type { CommandContext } from "../command.ts";
import { VERSION } from "../version.ts";
import { TuiApp } from "../tui/app.ts";
import { Approvals } from "../tui/approvals.ts";
import { tuiCommandRoots } from "../tui/core_commands.ts";
import { Dialogs } from "../tui/dialogs.ts";
import { History } from "../tui/line_editor.ts";
import { AgentSession } from "../tui/session.ts";
import { TUI_SEGMENTS } from "../tui/status_line.ts";
import { DenoTerminal, guardTerminal } from "../tui/terminal.ts";

const APPROVALS: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];

/**
 * Whether `amber` with these words should open the interactive session: no command was given,
 * and both stdin and stdout are terminals.
 *
 * @example
 * ```ts
 * import { wantsTui } from "./tui.ts";
 * console.log(wantsTui([], () => false)); // false
 * ```
 */
export function wantsTui(
  words: readonly string[],
  isTerminal: () => boolean = () => Deno.stdin.isTerminal() && Deno.stdout.isTerminal(),
): boolean {
  return words.length === 0 && isTerminal();
}

/**
 * Runs the interactive session; resolves to the exit code.
 *
 * @example
 * ```ts ignore
 * const code = await runTui(context);
 * ```
 */
export async function runTui(context: CommandContext): Promise<number> {
  const { parsed, io } = context;
  const approve = (parsed.options.get("approve") ?? undefined) as ApprovalPolicy | undefined;
  if (approve !== undefined && !APPROVALS.includes(approve)) {
    throw new UsageError(`--approve must be one of ${APPROVALS.join(", ")}, got '${approve}'`);
  }
  const maxSteps = intOption(parsed, "max-steps", 50);
  const stop = new AbortController();
  const dialogs = new Dialogs();
  const subagents = deferredSubagents();
  // Diagnostics would scribble over the screen on stderr: they become notices instead (those
  // from before the app runs are shown when it starts).
  const early: Diagnostic[] = [];
  let app: TuiApp | undefined;
  const onDiagnostic = (d: Diagnostic) => {
    if (app === undefined) early.push(d);
    else dialogs.notify(`plugin '${d.pluginId}' (${d.where}): ${d.message}`, "warn");
  };
  const host = await context.host({
    subagents: subagents.service,
    signal: stop.signal,
    ui: dialogs,
    commands: tuiCommandRoots(() => app),
    onDiagnostic,
  });
  installSegments(host.runtime.registries, host.runtime);
  const history = await History.load(join(host.configDir, "history.jsonl"));
  const approvals = new Approvals(dialogs);
  const session = new AgentSession({
    host,
    overrides: context.overrides,
    approval: approve ?? host.config.approval ?? "ask",
    maxSteps,
    ask: (request, signal) => app!.ask(request, signal),
    onRetry: (message) => dialogs.notify(message, "warn"),
    bindSubagents: subagents.bind,
  });
  const terminal = new DenoTerminal();
  const noColor = (Deno.env.get("NO_COLOR") ?? "") !== "";
  app = new TuiApp({
    terminal,
    host,
    session,
    dialogs,
    approvals,
    history,
    color: !noColor,
    greeting: `amber ${VERSION} · ${session.provider || "no provider"} · ${
      session.model || "no model"
    } · /help for commands · Ctrl-C twice quits`,
  });
  for (const d of early) {
    dialogs.notify(`plugin '${d.pluginId}' (${d.where}): ${d.message}`, "warn");
  }
  const resume = parsed.options.get("resume");
  if (resume !== undefined) {
    // An unknown session is said before the screen changes, as `amber run --resume` does.
    app.transcript.notice(await app.resume(resume), "dim");
  }
  const unguard = guardTerminal(terminal, () => app?.interrupt());
  let code: number;
  try {
    code = await app.run();
  } finally {
    terminal.restore();
    unguard();
    stop.abort();
    session.close();
  }
  if (session.id !== undefined) {
    io.err(`amber: session ${session.id} (continue with: amber --resume ${session.id})`);
  }
  return code;
}

function installSegments(registries: Registries, runtime: PluginRuntime): void {
  const services: PluginServices = {
    owner: "core",
    tools: registries.tool,
    events: runtime.events,
    config: () => runtime.config(),
    host: {},
    workspace: { root: Deno.cwd() },
  };
  for (const segment of TUI_SEGMENTS) {
    // A plugin may already own one of these names: then its segment stays and ours is left out.
    registries.status.install("core", segment, services);
  }
}
