/**
 * `amber run "<prompt>"`: one agent turn in the terminal, headless. The answer streams to
 * stdout, tool activity to stderr; `--json` writes the event stream as JSON lines. Ctrl-C
 * cancels the turn (the transcript keeps every committed step) and amber exits as soon as the
 * cancelled step is committed; a second Ctrl-C exits at once. SIGINTs that arrive together (one
 * Ctrl-C that reached amber twice, from the terminal and again through `deno task`) are one.
 * SIGTERM and SIGHUP cancel the same way and exit 143 and 129. However the turn ends (an
 * error, a second signal, another handler's exit), the session's id is said on stderr once the
 * session file exists, so `--resume` can pick up the prompt.
 *
 * @module
 */

import { type ApprovalPolicy, type CommandOutcome, DeadlineError, withDeadline } from "@amber/core";
import type { ApprovalAnswer } from "@amber/core/kernel";
import { intOption, type ParsedArgs, UsageError } from "../args.ts";
import type { CliCommand, CommandContext, Io } from "../command.ts";
import type { Host } from "../host.ts";
import { isMcpLog } from "../mcp_logs.ts";
import { InterruptPresses } from "../interrupt_presses.ts";
import { AgentSession, describeEnd, dollars, exitCodeOf, HeldDiagnostics } from "../session/mod.ts";
import { sanitizeText } from "../tui/lines.ts";
import { runSlashCommand } from "../slash_line.ts";
import { runPrinter } from "./run_printer.ts";

const APPROVALS: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];
// The most lines of a diff shown above an approval question; the rest is counted.
const RUN_DIFF_LINES = 200;

// Signals that end a headless run the way Ctrl-C does, with the shell's exit code for each.
const STOPPING: readonly (readonly [Deno.Signal, number])[] = [["SIGTERM", 143], ["SIGHUP", 129]];

/** `amber run`. */
export const runCommand: CliCommand = {
  name: "run",
  usage: `  run "<prompt>"                  one agent turn: the answer to stdout, tools to stderr
      [--approve ask|auto|deny]   tools that need approval: ask in the terminal (default; deny
                                  without one), allow, or refuse
      [--max-steps N]             at most N model calls (default 50)
      [--resume ID] [--json]      continue a session; write the events as JSON lines
      [--compact-at SHARE]        compact the conversation before a request would fill this
                                  share of the model's context window (0.85 or 85%; else
                                  compaction.at in config.yaml, else 0.85)
  run "/COMMAND args"             run a command first; one that answers with a prompt (an
                                  MCP server's, /mcp__SERVER__PROMPT) sends it to the model`,
  options: ["provider", "model", "base-url", "approve", "max-steps", "resume", "compact-at"],
  flags: ["json"],
  run,
};

async function run(context: CommandContext): Promise<number> {
  const { io, parsed } = context;
  const prompt = context.words.join(" ").trim();
  if (prompt === "") throw new UsageError('usage: amber run "<prompt>" [options]');
  const approve = (parsed.options.get("approve") ?? "ask") as ApprovalPolicy;
  if (!APPROVALS.includes(approve)) {
    throw new UsageError(`--approve must be one of ${APPROVALS.join(", ")}, got '${approve}'`);
  }
  const maxSteps = intOption(parsed, "max-steps", 50);
  const compactAt = shareOption(parsed, "compact-at");
  const json = parsed.switches.has("json");

  const controller = new AbortController();
  // Keys are known once the session has resolved its provider; a diagnostic from the plugins'
  // start comes before that, and waits for it.
  // What an MCP server logs (its stderr, its logging notifications) is for the diagnostics, not
  // the run's output; its faults are said like any plugin's.
  const diagnostics = new HeldDiagnostics((d) => {
    if (isMcpLog(d)) return;
    io.err(sanitizeText(`amber: plugin '${d.pluginId}' (${d.where}): ${d.message}`));
  });
  let session: AgentSession;
  try {
    session = await AgentSession.open({
      openHost: (services) =>
        context.host({
          ...services,
          signal: controller.signal,
          onDiagnostic: diagnostics.receive,
          mcp: {
            connect: true,
            oauth: {
              authorize: (url) => io.err(`amber: to sign in to an MCP server, open ${url.href}`),
            },
          },
        }),
      overrides: context.overrides,
      // `amber run` asks by default whatever config.yaml says: a headless run is explicit.
      approval: approve,
      maxSteps,
      ...(compactAt === undefined ? {} : { compactAt }),
    });
  } catch (error) {
    diagnostics.release();
    throw error;
  }
  diagnostics.release((text) => session.redact(text));
  for (const text of session.notices) io.err(sanitizeText(`amber: ${text}`));
  const { host } = session;
  session.ready();
  const terminal = Deno.stdin.isTerminal() && Deno.stderr.isTerminal() && !json;

  let announced = false;
  const announce = () => {
    const id = session.id;
    // --json said it first, as its `session` event.
    if (announced || json || id === undefined) return;
    announced = true;
    io.err(`amber: session ${id} (continue with: amber run --resume ${id} "<prompt>")`);
  };
  // Deno.exit (a second Ctrl-C, a signal handler) skips `finally`, but not this.
  const onUnload = () => announce();
  globalThis.addEventListener("unload", onUnload);
  const presses = new InterruptPresses();
  const onInterrupt = () => {
    if (!presses.signal()) return;
    if (presses.count > 1) Deno.exit(130);
    io.err("\namber: cancelling (Ctrl-C again to quit at once)");
    controller.abort();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  let stoppedWith: number | undefined;
  const stopping = STOPPING.flatMap(([signal, code]) => {
    const handler = () => {
      if (stoppedWith !== undefined) Deno.exit(code);
      stoppedWith = code;
      controller.abort();
    };
    try {
      Deno.addSignalListener(signal, handler);
      return [[signal, handler] as const];
    } catch {
      // Not a signal this system offers (SIGHUP on Windows).
      return [];
    }
  });
  try {
    // The model's reasoning is for a person watching: shown (dimmed) only on a terminal.
    const reasoning = !Deno.stdout.isTerminal()
      ? undefined
      : (Deno.env.get("NO_COLOR") ?? "") === ""
      ? "dim" as const
      : "plain" as const;
    session.subscribe(runPrinter(io, json, reasoning === undefined ? {} : { reasoning }));
    const resume = parsed.options.get("resume");
    if (resume !== undefined) await session.resume(resume);
    await serversReady(host, controller.signal);
    const command = await slashCommand(host, prompt);
    const expanded = command?.ok === true ? command.prompt : undefined;
    if (command !== undefined && expanded === undefined) {
      if (command.ok) io.out(sanitizeText(session.redact(command.text)));
      else io.err(`amber: ${sanitizeText(session.redact(command.error))}`);
      return command.ok ? 0 : 1;
    }
    const result = await session.turn(expanded ?? prompt, {
      ...(command?.ok === true && command.turn !== undefined ? { command: command.turn } : {}),
      signal: controller.signal,
      ask: terminal
        ? async (request, signal) => {
          // What an edit or a write would do, as a diff above the question (already redacted).
          if (request.change !== undefined) {
            const { formatChange } = await import("../tui/diff_view.ts");
            const color = (Deno.env.get("NO_COLOR") ?? "") === "";
            const diff = formatChange(request.change, context.width, color, RUN_DIFF_LINES);
            io.err(`\n${diff.slice(0, -1)}`);
          }
          return askInTerminal(
            io,
            sanitizeText(session.redact(request.summary)),
            request.correlationId === undefined
              ? undefined
              : sanitizeText(session.redact(request.reason ?? "a tool gate asks to confirm")),
            signal,
          );
        }
        : undefined,
    });
    const cause = result.cause;
    if (cause.kind !== "completed" && !json) {
      io.err(`amber: ${sanitizeText(session.redact(describeEnd(cause)))}`);
    }
    if (compactAt !== undefined && session.info.contextWindow === undefined && !json) {
      io.err(
        `amber: --compact-at did nothing: the context window of ${session.model} is unknown ` +
          `(set models.${session.model}.contextWindow in config.yaml)`,
      );
    }
    // Said like the tool lines, on stderr, terminal or not; --json has it on the usage events.
    const spent = session.turnCost;
    if (spent !== undefined && !json) {
      const total = session.cost ?? spent;
      io.err(
        `amber: this turn cost ${dollars(spent)}` +
          (total - spent > 0.0005 ? ` (the session ${dollars(total)})` : ""),
      );
    }
    const account = session.account()!;
    if (Deno.stderr.isTerminal() && !json) {
      // The bar shows the wallet after the turn's spending, worth a short wait; not after a
      // cancel or a signal, when the user asked to get out (the bar then shows the last known).
      if (!controller.signal.aborted) {
        await withDeadline(() => host.registries.wallet.refresh(account), WALLET_WAIT_MS, "wallet")
          .catch((error) => {
            if (!(error instanceof DeadlineError)) throw error;
          });
      }
      const bar = host.registries.status.compose(context.width, {
        ...session.snapshot(),
        promptTokens: result.usage.promptTokens,
        completionTokens: result.usage.completionTokens,
      });
      if (bar.text !== "") io.err(bar.text);
    }
    return stoppedWith ?? exitCodeOf(cause);
  } finally {
    announce();
    globalThis.removeEventListener("unload", onUnload);
    Deno.removeSignalListener("SIGINT", onInterrupt);
    for (const [signal, handler] of stopping) Deno.removeSignalListener(signal, handler);
    session.close();
  }
}

// The MCP servers get `mcp.startupWait` seconds (5 by default) to connect before the first
// request, so that their tools are there for it; a slower one's tools arrive by live refresh.
async function serversReady(host: Host, signal: AbortSignal): Promise<void> {
  if (host.mcp === undefined) return;
  const seconds = host.config.mcp?.startupWait ?? DEFAULT_STARTUP_WAIT_S;
  const { promise: cancelled, resolve } = Promise.withResolvers<void>();
  const onAbort = () => resolve();
  if (signal.aborted) onAbort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.race([host.mcp.ready(seconds * 1000), cancelled]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  // What connected is put in place now, so that a command of a server (a prompt) can be run.
  host.runtime.refresh();
}

/** How long a finished run waits for the wallet's readout for its closing bar, ms. */
const WALLET_WAIT_MS = 2000;

/** `mcp.startupWait` when config.yaml does not set it, in seconds. */
const DEFAULT_STARTUP_WAIT_S = 5;

// A prompt whose first word names a command of the command tree (`/mcp__docs__review main.ts`)
// runs that command: a `prompt` it answers with is what the model is sent; otherwise its text
// (or error) is the run's whole output; so is the error for `/mcp__...` when no such command is
// there. Any other prompt, slash or not, goes to the model as is.
async function slashCommand(host: Host, line: string): Promise<CommandOutcome | undefined> {
  const outcome = await runSlashCommand(host, line);
  if (outcome !== undefined || !line.startsWith("/")) return outcome;
  // An MCP prompt whose server is not there is not a message for the model.
  const first = line.slice(1).split(/\s+/).find((word) => word !== "") ?? "";
  if (!first.startsWith("mcp__")) return undefined;
  const waiting = (host.mcp?.list() ?? []).filter((view) => view.state.status !== "connected");
  const states = waiting.map((view) => `${view.name}: ${view.state.status}`).join(", ");
  return {
    ok: false,
    error: `no command '/${first}'${
      states === "" ? "" : ` (MCP servers not connected: ${states})`
    }; \`amber mcp list\` shows each server and \`amber mcp test NAME\` why one fails`,
  };
}

// A share of the context window: above 0 and at most 1, as a fraction (0.85) or a percent (85%).
function shareOption(parsed: ParsedArgs, name: string): number | undefined {
  const raw = parsed.options.get(name);
  if (raw === undefined) return undefined;
  const text = raw.trim();
  const percent = text.endsWith("%");
  const number = /^\d*\.?\d+$/.test(percent ? text.slice(0, -1) : text)
    ? Number(percent ? text.slice(0, -1) : text) / (percent ? 100 : 1)
    : NaN;
  if (!(number > 0 && number <= 1)) {
    throw new UsageError(
      `--${name} must be a share of the context window above 0 and at most 1 ` +
        `(like 0.85, or 85%), got '${raw}'`,
    );
  }
  return number;
}

// A gate's question (`why` set) is asked every time, so it offers no "always". A cancel (Ctrl-C
// at the question) withdraws it: no answer is a refusal.
async function askInTerminal(
  io: Io,
  summary: string,
  why: string | undefined,
  signal: AbortSignal,
): Promise<ApprovalAnswer> {
  if (why === undefined) io.err(`\n? allow ${summary}  [y] once  [a] always  [n] no`);
  else io.err(`\n? allow ${summary} (${why})  [y] once  [n] no`);
  const answer = (await readLine(signal)).trim().toLowerCase();
  if (why === undefined && (answer === "a" || answer === "always")) return "always";
  if (answer === "y" || answer === "yes" || answer === "once") return "once";
  return "deny";
}

// One line of stdin, or "" once `signal` aborts: the read is cancelled then, since a read left
// pending would keep the process alive after the run has ended.
async function readLine(signal: AbortSignal): Promise<string> {
  if (signal.aborted) return "";
  const reader = Deno.stdin.readable.getReader();
  const cancel = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", cancel, { once: true });
  const chunks: Uint8Array[] = [];
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done || signal.aborted) return "";
      chunks.push(value);
      if (value.includes(10)) break;
    }
  } catch {
    // stdin went away: no answer.
    return "";
  } finally {
    signal.removeEventListener("abort", cancel);
    if (!signal.aborted) reader.releaseLock();
  }
  return new TextDecoder().decode(
    chunks.length === 1 ? chunks[0] : new Uint8Array(chunks.flatMap((c) => [...c])),
  );
}
