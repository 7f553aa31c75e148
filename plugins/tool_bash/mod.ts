/**
 * The `bash` tool: a shell command in the workspace, in a process group of its own that a
 * timeout or the run's cancellation stops whole.
 *
 * @module
 */

import type {
  EditorService,
  FromJsonSchema,
  Plugin,
  PluginServices,
  ProcessPolicy,
  Tool,
  ToolCallContext,
  ToolResult,
} from "@amber/core";
import { defineTool } from "@amber/core";
import { describeError, resolvePath, toolError } from "../_workspace.ts";
import {
  childEnvironment,
  type GroupExit,
  type ProcessGroup,
  redactSecrets,
  startProcessGroup,
} from "../process_group.ts";
import { toolPlugin } from "../tool_plugin.ts";

/** The timeout of a command whose call does not set one (ms). */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** The longest timeout a call may set (ms). */
export const MAX_TIMEOUT_MS = 600_000;
/** Output beyond this many characters is cut, keeping the end. */
export const MAX_OUTPUT_CHARS = 30_000;

const PARAMETERS = {
  type: "object",
  properties: {
    command: { type: "string", minLength: 1, description: "The command line to run." },
    timeout_ms: {
      type: "integer",
      minimum: 1,
      maximum: MAX_TIMEOUT_MS,
      description: `Stop the command after this many milliseconds. Default ${DEFAULT_TIMEOUT_MS}` +
        `, at most ${MAX_TIMEOUT_MS}.`,
    },
  },
  required: ["command"],
  additionalProperties: false,
} as const;

type BashArgs = FromJsonSchema<typeof PARAMETERS>;

/**
 * Creates the `tool_bash` plugin, which contributes the `bash` tool.
 *
 * `bash` runs `bash -c <command>` in the workspace root as the leader of its own process group,
 * with stdin closed, stderr merged into stdout in order, and the environment of the host's
 * process policy (`services.host.processes`): the parent's without its secrets, whose values are
 * also redacted from the output; without a host policy, without the usual secret shapes. The
 * host also tracks the group, to stop it when amber exits or is signalled. It
 * returns the output, cut to its last 30,000 characters with the cut stated, and the exit code; a
 * non-zero code is reported, not an error, since the command did run. The timeout (default 2
 * min, at most 10) and the run's cancel signal stop the whole group: SIGTERM, then SIGKILL after
 * 2 s; so does the command's own end, for anything it left running in the background. A stopped
 * command's result carries its output so far. While the command runs, its output also streams
 * through `context.output` (redacted, in batches at most 20 a second), for a front end to show
 * in the call's row. Every call asks for approval by default.
 *
 * When an editor drives amber and offers terminals (`services.host.editor.runCommand`), the
 * command runs in one of the editor's terminals instead, which the editor shows live in the
 * call's row (so nothing streams through `context.output`). It runs as `env -u NAME... bash -c`,
 * unsetting every variable amber keeps from its own children (the editor's environment is
 * often where amber's came from); the timeout and the cancel signal kill it through the editor;
 * its output is redacted and cut as above.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolBashPlugin } from "@amber/plugins/tool_bash";
 * const plugin = createToolBashPlugin();
 * assert.equal(plugin.id, "tool_bash");
 * assert.deepEqual(plugin.capabilities().map((c) => c.name), ["bash"]);
 * ```
 */
export function createToolBashPlugin(): Plugin {
  return toolPlugin({
    id: "tool_bash",
    name: "Bash",
    description: "The bash tool: shell commands in the workspace, stopped whole on cancel.",
    tools: ["bash"],
    build: (services) => [bashTool(services)],
  });
}

function bashTool(services: PluginServices): Tool<BashArgs> {
  const root = services.workspace.root;
  return defineTool({
    name: "bash",
    description: "Run a shell command with `bash -c` in the workspace root and return its " +
      "combined stdout and stderr and its exit code. Use it for builds, tests, git, and " +
      "inspecting the system; prefer read, search, edit and write for files. There is no " +
      "terminal and no input: commands must not wait for a keypress or a password. Output over " +
      `${MAX_OUTPUT_CHARS} characters is cut to its end. The command is stopped at the timeout ` +
      `(default ${DEFAULT_TIMEOUT_MS} ms), and anything it leaves running in the background is ` +
      "stopped when it ends: use process_start for servers and watchers.",
    parameters: PARAMETERS,
    verb: "running",
    requiresApproval: () => true,
    summarize(args) {
      const command = String(args.command ?? "");
      const line = command.split("\n")[0];
      const short = line.length > 80 ? `${line.slice(0, 77)}...` : line;
      return `$ ${short}${command.includes("\n") ? " ..." : ""}`;
    },
    execute: (args, context) =>
      runBash(root, args, context, services.host.processes, services.host.editor),
  });
}

/** Output kept while it streams in: the tail, plus how much there was in all. */
class TailBuffer {
  #text = "";
  #total = 0;
  constructor(readonly max: number) {}

  push(text: string): void {
    this.#total += text.length;
    this.#text += text;
    // Trim now and then rather than per chunk: slicing a long string on every chunk is quadratic.
    if (this.#text.length > 2 * this.max) this.#text = this.#text.slice(-this.max);
  }

  render(secrets: readonly string[]): string {
    const text = redactSecrets(this.#text, secrets);
    if (this.#total <= this.max) return text;
    return `[output cut: ${this.#total} chars, showing the last ${this.max}]\n${
      text.slice(-this.max)
    }`;
  }
}

async function runBash(
  root: string,
  args: BashArgs,
  context: ToolCallContext,
  processes: ProcessPolicy | undefined,
  editor: EditorService | undefined,
): Promise<ToolResult> {
  const signal = context.signal;
  if (signal.aborted) return toolError("cancelled before the command started");
  const timeoutMs = Math.min(args.timeout_ms ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
  // What runs a command loads with the first one: a session that runs none never loads it.
  const [{ LiveOutput }, { commandResult }, { CommandStopper }, { runInTerminal }] = await Promise
    .all([
      import("./_live_output.ts"),
      import("./_result.ts"),
      import("./_stopper.ts"),
      import("./_terminal.ts"),
    ]);
  if (editor?.runCommand !== undefined) {
    return await runInTerminal({
      run: (command) => editor.runCommand!(command),
      command: args.command,
      cwd: resolvePath(root, "."),
      timeoutMs,
      signal,
      maxChars: MAX_OUTPUT_CHARS,
      processes,
      toolCallId: context.callId,
    });
  }
  const { env, secrets } = processes?.environment() ?? childEnvironment();
  const output = new TailBuffer(MAX_OUTPUT_CHARS);
  const stream = context.output;
  const live = stream === undefined ? undefined : new LiveOutput((chunk) => stream(chunk), secrets);
  let group: ProcessGroup;
  try {
    group = await startProcessGroup({
      // stderr joins stdout inside the shell, so the two stay in the order they were written.
      argv: ["bash", "-c", `exec 2>&1; ${args.command}`],
      cwd: resolvePath(root, "."),
      env,
      onOutput: (text) => {
        output.push(text);
        live?.push(text);
      },
    });
  } catch (error) {
    return toolError(`cannot run bash: ${describeError(error)}`);
  }
  // The host stops it if amber exits or is signalled mid-command, and finds it after a kill -9.
  processes?.track(group, ["bash", "-c", args.command]);

  const stopper = new CommandStopper(signal, timeoutMs, () => group.stop());
  let exit: GroupExit;
  try {
    exit = await group.finished;
  } finally {
    stopper.dispose();
    // The output has ended: its last batch reaches the call's row before the result does.
    live?.close();
  }

  return commandResult(output.render(secrets), stopper.stopped, timeoutMs, exit);
}
