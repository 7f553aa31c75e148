/**
 * The `bash` tool in an editor's terminal (`HostServices.editor.runCommand`): the editor runs the
 * command and shows it live in the call's row; amber keeps its secrets out of the command,
 * stops it at the timeout or on cancel, and redacts and cuts its output as for a local run.
 *
 * @module
 */

import type { EditorCommand, EditorCommandResult, ProcessPolicy, ToolResult } from "@amber/core";
import { childEnvironment, redactSecrets } from "../process_group.ts";
import { describeError, toolError } from "../_workspace.ts";
import { commandResult } from "./_result.ts";
import { CommandStopper } from "./_stopper.ts";

/** What one run in an editor terminal needs. */
export interface TerminalRun {
  /** The editor's runner. */
  readonly run: (command: EditorCommand) => Promise<EditorCommandResult>;
  /** The command line, as the model gave it. */
  readonly command: string;
  /** The absolute directory it runs in. */
  readonly cwd: string;
  /** When it is stopped (ms). */
  readonly timeoutMs: number;
  /** The run's cancel signal. */
  readonly signal: AbortSignal;
  /** The most characters of output the result keeps (its end). */
  readonly maxChars: number;
  /** The host's process policy: whose environment the secrets are judged by. */
  readonly processes?: ProcessPolicy;
  /** The model's call running it, whose row shows the terminal (`ToolCallContext.callId`). */
  readonly toolCallId?: string;
}

/**
 * Runs `bash -c` in an editor terminal. The editor's environment is not amber's, but it is often
 * where amber's came from: every variable amber keeps from its own children (the provider keys,
 * what is named like a secret) is unset for the command with `env -u`, and their values are
 * redacted from the output.
 */
export async function runInTerminal(options: TerminalRun): Promise<ToolResult> {
  const { signal, timeoutMs } = options;
  if (signal.aborted) return toolError("cancelled before the command started");
  const { env, secrets } = options.processes?.environment() ?? childEnvironment();
  const script = ["-c", `exec 2>&1; ${options.command}`];
  const unset = withheldNames(env).flatMap((name) => ["-u", name]);
  const controller = new AbortController();
  const stopper = new CommandStopper(signal, timeoutMs, () => controller.abort());
  let ended: EditorCommandResult;
  try {
    ended = await options.run({
      ...(unset.length === 0
        ? { command: "bash", args: script }
        : { command: "env", args: [...unset, "bash", ...script] }),
      cwd: options.cwd,
      // Bytes, not characters: room for the characters the result keeps, in any script.
      outputByteLimit: options.maxChars * 4,
      signal: controller.signal,
      ...(options.toolCallId === undefined ? {} : { toolCallId: options.toolCallId }),
    });
  } catch (error) {
    return toolError(
      `cannot run bash in the editor's terminal: ${redactSecrets(describeError(error), secrets)}`,
    );
  } finally {
    stopper.dispose();
  }
  // A command that ended on its own as it was being stopped did not stop for it.
  const stopped = ended.killed ? stopper.stopped : undefined;
  return commandResult(cut(ended, options.maxChars, secrets), stopped, timeoutMs, {
    ...(ended.exitCode === undefined ? {} : { code: ended.exitCode }),
    ...(ended.signal === undefined ? {} : { signal: ended.signal }),
  });
}

// The output's end, redacted, with a line saying it was cut when the editor or amber cut it.
function cut(ended: EditorCommandResult, max: number, secrets: readonly string[]): string {
  const text = redactSecrets(ended.output, secrets);
  if (!ended.truncated && text.length <= max) return text;
  const total = ended.truncated ? `more than ${text.length}` : `${text.length}`;
  const shown = Math.min(max, text.length);
  return `[output cut: ${total} chars, showing the last ${shown}]\n${text.slice(-shown)}`;
}

// The names of amber's variables its children do not get.
function withheldNames(kept: Readonly<Record<string, string>>): string[] {
  let all: Record<string, string>;
  try {
    all = Deno.env.toObject();
  } catch {
    return [];
  }
  return Object.keys(all).filter((name) => !Object.hasOwn(kept, name)).sort();
}
