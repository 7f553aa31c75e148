/**
 * `amber run "<prompt>"`: one agent turn in the terminal, headless. The answer streams to
 * stdout, tool activity to stderr; `--json` writes the event stream as JSON lines. Ctrl-C
 * cancels the turn (the transcript keeps every committed step); a second Ctrl-C exits at once.
 * SIGTERM and SIGHUP cancel the same way and exit 143 and 129. However the turn ends (an
 * error, a second signal, another handler's exit), the session's id is said on stderr once the
 * session file exists, so `--resume` can pick up the prompt.
 *
 * @module
 */

import type { ApprovalPolicy } from "@amber/core";
import type { ApprovalAnswer } from "@amber/core/kernel";
import { intOption, UsageError } from "../args.ts";
import type { CliCommand, CommandContext, Io } from "../command.ts";
import { AgentSession, describeEnd, exitCodeOf, HeldDiagnostics } from "../session/mod.ts";
import { sanitizeText } from "../tui/lines.ts";
import { runPrinter } from "./run_printer.ts";

const APPROVALS: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];

// Signals that end a headless run the way Ctrl-C does, with the shell's exit code for each.
const STOPPING: readonly (readonly [Deno.Signal, number])[] = [["SIGTERM", 143], ["SIGHUP", 129]];

/** `amber run`. */
export const runCommand: CliCommand = {
  name: "run",
  usage: `  run "<prompt>"                  one agent turn: the answer to stdout, tools to stderr
      [--approve ask|auto|deny]   tools that need approval: ask in the terminal (default; deny
                                  without one), allow, or refuse
      [--max-steps N]             at most N model calls (default 50)
      [--resume ID] [--json]      continue a session; write the events as JSON lines`,
  options: ["provider", "model", "base-url", "approve", "max-steps", "resume"],
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
  const json = parsed.switches.has("json");

  const controller = new AbortController();
  // Keys are known once the session has resolved its provider; a diagnostic from the plugins'
  // start comes before that, and waits for it.
  const diagnostics = new HeldDiagnostics((d) =>
    io.err(sanitizeText(`amber: plugin '${d.pluginId}' (${d.where}): ${d.message}`))
  );
  let session: AgentSession;
  try {
    session = await AgentSession.open({
      openHost: (services) =>
        context.host({
          ...services,
          signal: controller.signal,
          onDiagnostic: diagnostics.receive,
        }),
      overrides: context.overrides,
      // `amber run` asks by default whatever config.yaml says: a headless run is explicit.
      approval: approve,
      maxSteps,
    });
  } catch (error) {
    diagnostics.release();
    throw error;
  }
  diagnostics.release((text) => session.redact(text));
  const { host } = session;
  session.ready();
  const terminal = Deno.stdin.isTerminal() && Deno.stderr.isTerminal() && !json;

  let announced = false;
  const announce = () => {
    const id = session.id;
    // --json said it first, as its `session` event.
    if (announced || json || id === undefined) return;
    announced = true;
    io.err(`amber: session ${id} (continue with --resume ${id})`);
  };
  // Deno.exit (a second Ctrl-C, a signal handler) skips `finally`, but not this.
  const onUnload = () => announce();
  globalThis.addEventListener("unload", onUnload);
  let interrupts = 0;
  const onInterrupt = () => {
    if (++interrupts > 1) Deno.exit(130);
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
    session.subscribe(runPrinter(io, json));
    const resume = parsed.options.get("resume");
    if (resume !== undefined) await session.resume(resume);
    const result = await session.turn(prompt, {
      signal: controller.signal,
      ask: terminal
        ? (request) =>
          askInTerminal(
            io,
            sanitizeText(session.redact(request.summary)),
            request.correlationId === undefined
              ? undefined
              : sanitizeText(session.redact(request.reason ?? "a tool gate asks to confirm")),
          )
        : undefined,
    });
    const cause = result.cause;
    if (cause.kind !== "completed" && !json) {
      io.err(`amber: ${sanitizeText(session.redact(describeEnd(cause)))}`);
    }
    const account = session.account()!;
    if (Deno.stderr.isTerminal() && !json) {
      await Promise.race([
        host.registries.wallet.refresh(account),
        new Promise((resolve) => setTimeout(resolve, 2000)),
      ]);
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

// A gate's question (`why` set) is asked every time, so it offers no "always".
async function askInTerminal(io: Io, summary: string, why?: string): Promise<ApprovalAnswer> {
  if (why === undefined) io.err(`\n? allow ${summary}  [y] once  [a] always  [n] no`);
  else io.err(`\n? allow ${summary} (${why})  [y] once  [n] no`);
  const answer = (await readLine()).trim().toLowerCase();
  if (why === undefined && (answer === "a" || answer === "always")) return "always";
  if (answer === "y" || answer === "yes" || answer === "once") return "once";
  return "deny";
}

async function readLine(): Promise<string> {
  const buffer = new Uint8Array(1024);
  const chunks: Uint8Array[] = [];
  while (true) {
    const n = await Deno.stdin.read(buffer);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
    if (buffer.subarray(0, n).includes(10)) break;
  }
  return new TextDecoder().decode(
    chunks.length === 1 ? chunks[0] : new Uint8Array(chunks.flatMap((c) => [...c])),
  );
}
