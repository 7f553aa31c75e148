/**
 * `amber` in a terminal, with no command: the interactive session. It takes the session flags of
 * `amber run` (`--provider`, `--model`, `--base-url`, `--resume`, `--approve`, `--max-steps`),
 * opens the host with the TUI's UI services and core commands, and runs the loop until the user
 * leaves; the terminal is restored whatever happens. The modules of the TUI are loaded only
 * here, so every other command starts as fast as before.
 *
 * The MCP servers connect in the background (the session never waits for them). A workspace
 * server not approved yet is asked about before the screen starts (the host opens only once the
 * answer is known). A server's sampling request is put to the user each time, then answered
 * through the session's provider; an elicitation is asked field by field in dialogs. What a
 * server logs goes to the diagnostics, not the screen.
 *
 * @module
 */

import type { ApprovalPolicy, Diagnostic } from "@amber/core";
import type { McpServerSpec } from "@amber/mcp";
import { join } from "node:path";
import { intOption, UsageError } from "../args.ts";
import type { CommandContext, HostExtras, Io } from "../command.ts";
import type { Host } from "../host.ts";
import { isMcpLog } from "../mcp_logs.ts";
import type { EnvReader, ProviderOverrides } from "../provider_settings.ts";
import { AgentSession } from "../session/mod.ts";
import { VERSION } from "../version.ts";
import { TuiApp } from "../tui/app.ts";
import { Approvals } from "../tui/approvals.ts";
import { tuiCommands } from "../tui/core_commands.ts";
import { permissionsCommand } from "../tui/permissions_command.ts";
import { Dialogs } from "../tui/dialogs.ts";
import { mcpDialogHandlers } from "../tui/mcp_requests.ts";
import { History } from "../tui/line_editor.ts";
import { scrollbackText } from "../tui/scrollback.ts";
import { TUI_SEGMENTS } from "../tui/status_line.ts";
import { DenoTerminal, guardTerminal, type Terminal } from "../tui/terminal.ts";

const APPROVALS: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];

/** What {@linkcode buildTui} needs. */
export interface TuiOptions {
  /** Opens the host with the TUI's extras (`CommandContext.host`, or `openHost` in a test). */
  readonly openHost: (extras: HostExtras) => Promise<Host>;
  /** The terminal to run in. */
  readonly terminal: Terminal;
  /** `--provider`, `--model`, `--base-url`. */
  readonly overrides: ProviderOverrides;
  /** `--approve`; config.yaml's `approval`, else `ask`, when absent. */
  readonly approve?: ApprovalPolicy;
  /** `--max-steps`; 50 by default. */
  readonly maxSteps?: number;
  /** Draw colours; false with NO_COLOR. */
  readonly color?: boolean;
  /** Reads the key's environment variable; `Deno.env.get` by default. */
  readonly env?: EnvReader;
  /** Frame and tick periods, for tests. */
  readonly frameMs?: number;
  /** How often `tick()` runs, ms. */
  readonly tickMs?: number;
  /**
   * Asks whether a workspace's MCP server not approved yet may start; asked while the host
   * opens, before the screen starts. Without it, such a server is not started.
   */
  readonly approveMcp?: (spec: McpServerSpec) => Promise<boolean>;
  /** Shown first in the transcript; amber's version, the provider and the model by default. */
  readonly greeting?: string;
}

/** A TUI ready to run. */
export interface Tui {
  /** The app. */
  readonly app: TuiApp;
  /** The host it opened. */
  readonly host: Host;
  /** The agent session. */
  readonly session: AgentSession;
  /** Ends what the host's services were given to run (call after the app returns). */
  close(): void;
}

/**
 * Opens the agent session (and with it the host, given the TUI's UI services, core commands and
 * status segments), and builds the app over `terminal`, ready to `run()`.
 *
 * @example
 * ```ts ignore
 * const tui = await buildTui({ openHost, terminal: new DenoTerminal(), overrides: {} });
 * const code = await tui.app.run();
 * tui.close();
 * ```
 */
export async function buildTui(options: TuiOptions): Promise<Tui> {
  const stop = new AbortController();
  const dialogs = new Dialogs();
  // Diagnostics would scribble over the screen on stderr: they become notices instead (those
  // from before the app runs are shown when it starts).
  const early: Diagnostic[] = [];
  // The app is made last, but the host's commands need it: they find it here when they run.
  const ref: { app?: TuiApp } = {};
  // Shown only once the session has opened (the app is made after it): it knows the keys to
  // redact.
  const firstFrame = Promise.withResolvers<void>();
  const notice = (d: Diagnostic) =>
    dialogs.notify(session.redact(`plugin '${d.pluginId}' (${d.where}): ${d.message}`), "warn");
  const onDiagnostic = (d: Diagnostic) => {
    // What an MCP server logs is for the diagnostics (`amber doctor`), not the screen.
    if (isMcpLog(d)) return;
    if (ref.app === undefined) early.push(d);
    else notice(d);
  };
  const session = await AgentSession.open({
    openHost: (services) =>
      options.openHost({
        ...services,
        signal: stop.signal,
        ui: dialogs,
        frontEnd: {
          commands: [
            ...tuiCommands(() => ref.app?.commands),
            permissionsCommand(() => ref.app && { permissions: session.permissions, dialogs }),
          ],
          segments: TUI_SEGMENTS,
        },
        onDiagnostic,
        mcp: {
          connect: true,
          // Loading the SDK and starting the servers wait for the first frame: the prompt is
          // there at once, whatever is configured.
          after: firstFrame.promise,
          ...(options.approveMcp === undefined ? {} : { approve: options.approveMcp }),
          oauth: {
            authorize: (url) =>
              dialogs.notify(`to sign in to an MCP server, open ${url.href}`, "info"),
          },
        },
      }),
    overrides: options.overrides,
    approval: options.approve,
    maxSteps: options.maxSteps,
    env: options.env,
  });
  const host = session.host;
  // Each sampling request is approved by the user, then answered by the session's provider.
  host.mcp?.setHandlers(
    mcpDialogHandlers(dialogs, (params, signal) => session.sample(params, signal)),
  );
  const history = await History.load(join(host.configDir, "history.jsonl"));
  const app = new TuiApp({
    terminal: options.terminal,
    session,
    dialogs,
    approvals: new Approvals(dialogs, session.permissions),
    history,
    color: options.color ?? true,
    frameMs: options.frameMs,
    tickMs: options.tickMs,
    greeting: options.greeting ??
      `amber ${VERSION} · ${session.provider || "no provider"} · ${
        session.model || "no model"
      } · /help for commands · Ctrl-C twice quits`,
    onFirstFrame: () => firstFrame.resolve(),
  });
  ref.app = app;
  for (const d of early) notice(d);
  for (const text of session.notices) dialogs.notify(text, "warn");
  return {
    app,
    host,
    session,
    close: () => {
      stop.abort();
      session.close();
    },
  };
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
  const approve = parsed.options.get("approve") as ApprovalPolicy | undefined;
  if (approve !== undefined && !APPROVALS.includes(approve)) {
    throw new UsageError(`--approve must be one of ${APPROVALS.join(", ")}, got '${approve}'`);
  }
  const terminal = new DenoTerminal();
  const color = (Deno.env.get("NO_COLOR") ?? "") === "";
  const tui = await buildTui({
    openHost: (extras) => context.host(extras),
    terminal,
    overrides: context.overrides,
    approve,
    maxSteps: intOption(parsed, "max-steps", 50),
    color,
    approveMcp: (spec) => Promise.resolve(askToStart(spec)),
  });
  const { app } = tui;
  const resume = parsed.options.get("resume");
  if (resume !== undefined) {
    // An unknown session is said before the screen changes, as `amber run --resume` does.
    try {
      app.transcript.notice(await app.commands.resume(resume), "dim");
    } catch (error) {
      tui.close();
      throw error;
    }
  }
  return await runInTerminal(tui, terminal, io, {
    color,
    after: (id) => `amber: session ${id} (continue with: amber --resume ${id})`,
  });
}

/** How {@linkcode runInTerminal} leaves the conversation behind. */
export interface LeaveOptions {
  /** Colour the transcript written to the scrollback. */
  readonly color: boolean;
  /** The line written after it, given the session's id (how to continue it). */
  readonly after: (id: string) => string;
}

/**
 * Runs a built TUI in `terminal` until the user leaves, restoring the terminal whatever
 * happens; then, on the normal screen, writes the conversation (the transcript's lines, so the
 * scrollback keeps what the alternate screen showed) to `io.out` and `options.after`'s line to
 * `io.err` when a session was recorded. Resolves to the app's exit code.
 *
 * @example
 * ```ts ignore
 * const terminal = new DenoTerminal();
 * const tui = await buildTui({ openHost, terminal, overrides: {} });
 * const code = await runInTerminal(tui, terminal, io, {
 *   color: true,
 *   after: (id) => `amber: session ${id}`,
 * });
 * ```
 */
export async function runInTerminal(
  tui: Tui,
  terminal: Terminal,
  io: Io,
  options: LeaveOptions,
): Promise<number> {
  const { app, session } = tui;
  const unguard = guardTerminal(terminal, () => app.interrupt());
  let code: number;
  try {
    code = await app.run();
  } finally {
    terminal.restore();
    unguard();
    tui.close();
  }
  const text = scrollbackText(app.transcript, terminal.size().columns, options.color);
  if (text !== "") io.out(text);
  if (session.id !== undefined) io.err(options.after(session.id));
  return code;
}

/**
 * The question a workspace's MCP server is approved with, before it first starts: its name, the
 * file that declared it and what would run (the command line, or the URL), as written there
 * (a `${VAR}` is shown, not its value).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startQuestion } from "./tui.ts";
 * assert.equal(
 *   startQuestion({
 *     name: "files", pluginId: "mcp.files", source: "./.mcp.json", fromWorkspace: true,
 *     entry: { transport: "stdio", command: "npx", args: ["-y", "files-server", "${HOME}"] },
 *   }),
 *   "Start MCP server 'files' from ./.mcp.json: npx -y files-server ${HOME}?",
 * );
 * ```
 */
export function startQuestion(spec: McpServerSpec): string {
  const entry = spec.entry;
  const what = entry.command !== undefined
    ? [entry.command, ...(entry.args ?? [])].join(" ")
    : `${entry.url ?? ""}${entry.transport === "sse" ? " (sse)" : ""}`;
  return `Start MCP server '${spec.name}' from ${spec.source}: ${what}?`;
}

// Asked on the terminal as it is, before the screen starts: the host (and so the app) opens
// only once the answer is known. Deno's `confirm` adds " [y/N] " and takes y or Y for yes.
function askToStart(spec: McpServerSpec): boolean {
  if (!Deno.stdin.isTerminal()) return false;
  return confirm(startQuestion(spec));
}
