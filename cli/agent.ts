/**
 * One agent turn, headless: the provider client, the session file (new or resumed), the
 * sub-agent service, cancellation by Ctrl-C, approvals asked on the terminal, and the run
 * kernel's events written as text (answer to stdout, tool activity to stderr) or as JSON lines.
 * `amber run` and `amber demo` are both this.
 *
 * @module
 */

import {
  type ApprovalAnswer,
  type ApprovalPolicy,
  type ApprovalRequest,
  type EndCause,
  type Message,
  type ModelPort,
  newSessionId,
  runAgent,
  type RunEvent,
  type RunResult,
  SessionFile,
  type StateCommand,
  type SubagentService,
} from "@amber/core";
import type { Io } from "./command.ts";
import type { Host } from "./host.ts";

/** What a turn runs with. */
export interface TurnOptions {
  /** The started host. */
  readonly host: Host;
  /** The model client. */
  readonly model: ModelPort;
  /** The model name. */
  readonly modelName: string;
  /** The reasoning effort asked of the model. */
  readonly reasoningEffort?: string;
  /** The provider preset, for the session header. */
  readonly provider: string;
  /** The prompt. */
  readonly prompt: string;
  /** The approval policy. */
  readonly approval: ApprovalPolicy;
  /** The most model calls. */
  readonly maxSteps: number;
  /** A session to continue, by id. */
  readonly resume?: string;
  /** Write the event stream as JSON lines instead of text. */
  readonly json: boolean;
  /** Secrets never written to the transcript (the API key). */
  readonly secrets: readonly string[];
  /** Where to write. */
  readonly io: Io;
  /** Cancels the turn (Ctrl-C). */
  readonly signal: AbortSignal;
  /** Asks the user about a tool that needs approval; absent when there is no terminal. */
  readonly ask?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
  /** Called with each response's headers (passive quota readouts). */
  readonly onResponse?: (status: number, headers: Headers) => void;
}

/** How a turn went. */
export interface TurnOutcome {
  /** The kernel's result. */
  readonly result: RunResult;
  /** The session id. */
  readonly sessionId: string;
  /** The exit code `amber run` uses: 0 completed, 1 error or max steps, 130 cancelled. */
  readonly exitCode: number;
}

/**
 * A sub-agent service whose runs are wired in later: the host needs it before its plugins start
 * (so the `task` tool installs), and the kernel that runs sub-agents needs the started host.
 *
 * @example
 * ```ts
 * import { deferredSubagents } from "./agent.ts";
 * const subagents = deferredSubagents();
 * subagents.bind((prompt) => Promise.resolve(`done: ${prompt}`));
 * console.log(await subagents.service.run("x", { signal: new AbortController().signal }));
 * ```
 */
export function deferredSubagents(): {
  readonly service: SubagentService;
  bind(run: SubagentService["run"]): void;
} {
  let bound: SubagentService["run"] | undefined;
  return {
    service: {
      run: (prompt, options) =>
        bound === undefined
          ? Promise.reject(new Error("sub-agents are not available in this host"))
          : bound(prompt, options),
    },
    bind: (run) => {
      bound = run;
    },
  };
}

/**
 * Runs one turn: opens or resumes the session, runs the kernel, writes its events, and commits
 * every step to `sessions/<id>.jsonl`. Sub-agents started by the `task` tool get their own
 * session file and cannot start sub-agents themselves.
 *
 * @example
 * ```ts ignore
 * const outcome = await runTurn({ host, model, modelName, provider, prompt, ... });
 * Deno.exit(outcome.exitCode);
 * ```
 */
export async function runTurn(
  options: TurnOptions,
  bindSubagents?: (
    run: SubagentService["run"],
  ) => void,
): Promise<TurnOutcome> {
  const { host, io } = options;
  let file: SessionFile;
  let history: readonly Message[] = [];
  let historyState: StateCommand[] = [];
  let firstStep = 0;
  if (options.resume !== undefined) {
    const resumed = await SessionFile.resume(host.configDir, options.resume, options.secrets);
    file = resumed.file;
    history = resumed.session.messages;
    historyState = resumed.session.steps.flatMap((step) => [...(step.state ?? [])]);
    firstStep = resumed.session.steps.length;
    if (resumed.tornTo !== undefined) {
      io.err(`amber: the session's last line was cut off; it was moved to ${resumed.tornTo}`);
    }
  } else {
    file = await SessionFile.create(host.configDir, {
      id: newSessionId(new Date()),
      workspace: host.workspace,
      provider: options.provider,
      model: options.modelName,
      title: options.prompt.replace(/\s+/g, " ").slice(0, 80),
    }, options.secrets);
  }

  let tasks = 0;
  bindSubagents?.((prompt, { signal }) =>
    runSubagent({
      ...options,
      prompt,
      signal,
      sessionId: `${file.id}-task${++tasks}`,
    })
  );

  const printer = options.json ? jsonPrinter(io, file.id) : textPrinter(io);
  try {
    const result = await runAgent({
      runtime: host.runtime,
      model: options.model,
      modelName: options.modelName,
      prompt: options.prompt,
      history,
      historyState,
      firstStep,
      session: file,
      approval: options.approval,
      ask: options.ask,
      maxSteps: options.maxSteps,
      signal: options.signal,
      onEvent: printer,
      onResponse: options.onResponse,
      reasoningEffort: options.reasoningEffort,
    });
    return { result, sessionId: file.id, exitCode: exitCodeOf(result.cause) };
  } finally {
    file.close();
  }
}

/** What {@linkcode runSubagent} runs with. */
export interface SubagentOptions {
  /** The started host. */
  readonly host: Host;
  /** The model client of the parent run. */
  readonly model: ModelPort;
  /** The model name. */
  readonly modelName: string;
  /** The reasoning effort. */
  readonly reasoningEffort?: string;
  /** The provider preset, for the session header. */
  readonly provider: string;
  /** The sub-agent's task. */
  readonly prompt: string;
  /** Its own session id. */
  readonly sessionId: string;
  /** Secrets never written to its transcript. */
  readonly secrets: readonly string[];
  /** The approval policy of the parent run. */
  readonly approval: ApprovalPolicy;
  /** Asks the user, as the parent run does. */
  readonly ask?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
  /** The most model calls. */
  readonly maxSteps: number;
  /** Cancels it. */
  readonly signal: AbortSignal;
}

/**
 * Runs a sub-agent (the `task` tool): a nested run on the parent's provider and environment,
 * with its own session file, that cannot start sub-agents itself. Resolves to its final answer;
 * rejects when it ends any other way.
 *
 * @example
 * ```ts ignore
 * const answer = await runSubagent({ host, model, modelName, provider, prompt, sessionId, ... });
 * ```
 */
export async function runSubagent(options: SubagentOptions): Promise<string> {
  const { host } = options;
  const child = await SessionFile.create(host.configDir, {
    id: options.sessionId,
    workspace: host.workspace,
    provider: options.provider,
    model: options.modelName,
    title: options.prompt.replace(/\s+/g, " ").slice(0, 80),
  }, options.secrets);
  try {
    const result = await runAgent({
      runtime: host.runtime,
      model: options.model,
      modelName: options.modelName,
      reasoningEffort: options.reasoningEffort,
      prompt: options.prompt,
      session: child,
      approval: options.approval,
      ask: options.ask,
      maxSteps: options.maxSteps,
      signal: options.signal,
      // A sub-agent cannot start sub-agents: the recursion would have no bound but max steps.
      hostGate: ({ call }) =>
        call.name === "task"
          ? { kind: "block", reason: "a sub-agent cannot start another sub-agent" }
          : { kind: "allow" },
    });
    if (result.cause.kind !== "completed") {
      throw new Error(`the sub-agent ended without an answer: ${describeEnd(result.cause)}`);
    }
    const last = [...result.messages].reverse().find((m) => m.role === "assistant");
    return last?.content ?? "";
  } finally {
    child.close();
  }
}

/**
 * The exit code of a run that ended this way.
 *
 * @example
 * ```ts
 * import { exitCodeOf } from "./agent.ts";
 * console.log(exitCodeOf({ kind: "cancelled" })); // 130
 * ```
 */
export function exitCodeOf(cause: EndCause): number {
  switch (cause.kind) {
    case "completed":
      return 0;
    case "cancelled":
      return 130;
    default:
      return 1;
  }
}

/**
 * A run's end in words.
 *
 * @example
 * ```ts
 * import { describeEnd } from "./agent.ts";
 * console.log(describeEnd({ kind: "maxSteps", steps: 3 })); // "stopped after 3 steps (--max-steps)"
 * ```
 */
export function describeEnd(cause: EndCause): string {
  switch (cause.kind) {
    case "completed":
      return "completed";
    case "cancelled":
      return "cancelled";
    case "maxSteps":
      return `stopped after ${cause.steps} steps (--max-steps)`;
    case "error":
      return cause.failure.kind === "capabilityBound"
        ? cause.failure.error.message
        : cause.failure.message;
  }
}

// The answer streams to stdout as it comes; tool activity and everything else go to stderr, so
// `amber run ... > answer.md` captures just the answer.
function textPrinter(io: Io): (event: RunEvent) => void {
  const write = io.write ?? ((text: string) => io.out(text));
  let midLine = false;
  const endLine = () => {
    if (midLine) write("\n");
    midLine = false;
  };
  return (event) => {
    switch (event.type) {
      case "text":
        write(event.delta);
        midLine = !event.delta.endsWith("\n");
        break;
      case "toolStart":
        endLine();
        io.err(`⚙ ${event.summary}`);
        break;
      case "toolEnd":
        io.err(
          event.result.ok
            ? `  ✓ ${event.call.name} (${Math.round(event.durationMs)} ms)`
            : `  ✗ ${event.call.name}: ${firstLine(event.result.error ?? "failed")}`,
        );
        break;
      case "steer":
        endLine();
        io.err(`↻ ${event.guard}: ${event.feedback}`);
        break;
      case "end":
        endLine();
        break;
    }
  };
}

function jsonPrinter(io: Io, sessionId: string): (event: RunEvent) => void {
  io.out(JSON.stringify({ type: "session", id: sessionId }));
  return (event) => {
    if (event.type === "end" && event.cause.kind === "error") {
      // A CapabilityBoundError does not serialise on its own; its message says it all.
      io.out(
        JSON.stringify({
          type: "end",
          cause: { kind: "error", message: describeEnd(event.cause) },
        }),
      );
      return;
    }
    io.out(JSON.stringify(event));
  };
}

function firstLine(text: string): string {
  const line = text.split("\n")[0];
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
