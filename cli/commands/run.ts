/**
 * `amber run "<prompt>"`: one agent turn in the terminal, headless. The answer streams to
 * stdout, tool activity to stderr; `--json` writes the event stream as JSON lines. Ctrl-C
 * cancels the turn (the transcript keeps every committed step); a second Ctrl-C exits at once.
 *
 * @module
 */

import type { ApprovalAnswer, ApprovalPolicy, ApprovalRequest } from "@amber/core";
import { ProviderClient } from "@amber/providers/client";
import { deferredSubagents, describeEnd, runTurn } from "../agent.ts";
import { intOption, UsageError } from "../args.ts";
import type { CliCommand, CommandContext, Io } from "../command.ts";
import { accountSettings, requireKey, resolveProvider } from "../provider_settings.ts";

const APPROVALS: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];

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
  const subagents = deferredSubagents();
  const host = await context.host({ subagents: subagents.service, signal: controller.signal });
  const resolved = resolveProvider(host, context.overrides);
  const key = requireKey(resolved);
  const dialect = resolved.flavor.dialect();
  const model = new ProviderClient(dialect, resolved.settings, {
    onRetry: (info) =>
      io.err(
        `amber: ${info.message}; retrying in ${(info.delayMs / 1000).toFixed(1)} s ` +
          `(attempt ${info.attempt + 1})`,
      ),
  });
  const account = accountSettings(resolved);
  const terminal = Deno.stdin.isTerminal() && Deno.stderr.isTerminal() && !json;

  let interrupts = 0;
  const onInterrupt = () => {
    if (++interrupts > 1) Deno.exit(130);
    io.err("\namber: cancelling (Ctrl-C again to quit at once)");
    controller.abort();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  try {
    const outcome = await runTurn({
      host,
      model,
      modelName: resolved.model,
      reasoningEffort: resolved.reasoningEffort,
      provider: resolved.preset.name,
      prompt,
      approval: approve,
      maxSteps,
      resume: parsed.options.get("resume"),
      json,
      secrets: key === undefined ? [] : [key],
      io,
      signal: controller.signal,
      ask: terminal ? (request) => askInTerminal(io, request) : undefined,
      onResponse: (_status, headers) => {
        const snapshot = dialect.allowanceFromHeaders?.(headers);
        if (snapshot !== undefined) host.registries.allowance.record(account, snapshot);
      },
    }, subagents.bind);
    const cause = outcome.result.cause;
    if (cause.kind !== "completed" && !json) io.err(`amber: ${describeEnd(cause)}`);
    if (Deno.stderr.isTerminal() && !json) {
      await Promise.race([
        host.registries.wallet.refresh(account),
        new Promise((resolve) => setTimeout(resolve, 2000)),
      ]);
      const usage = outcome.result.usage;
      const bar = host.registries.status.compose(context.width, {
        ...host.snapshot(context.overrides),
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
      });
      if (bar.text !== "") io.err(bar.text);
    }
    if (!json) {
      io.err(`amber: session ${outcome.sessionId} (continue with --resume ${outcome.sessionId})`);
    }
    return outcome.exitCode;
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
  }
}

async function askInTerminal(io: Io, request: ApprovalRequest): Promise<ApprovalAnswer> {
  io.err(`\n? allow ${request.summary}  [y] once  [a] always  [n] no`);
  const answer = (await readLine()).trim().toLowerCase();
  if (answer === "a" || answer === "always") return "always";
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
