/**
 * The background process tools, `process_start`, `process_read` and `process_stop`: one
 * contribution built on the host's job service.
 *
 * @module
 */

import type { JobInfo, JobService, Plugin, Tool, ToolResult } from "@amber/core";
import { defineTool } from "@amber/core";
import { describeError, keepTail, toolError } from "../_workspace.ts";
import { toolPlugin } from "../tool_plugin.ts";

/** What one `process_read` shows at most, keeping the newest output (characters). */
export const MAX_READ_CHARS = 30_000;

const ID_PARAMETERS = {
  type: "object",
  properties: {
    id: { type: "string", minLength: 1, description: 'The job id process_start returned ("j1").' },
  },
  required: ["id"],
  additionalProperties: false,
} as const;

/**
 * Creates the `tool_process` plugin. Its one capability, `process`, contributes three tools
 * together (one ledger entry, removed together): `process_start` {command} runs `bash -c
 * <command>` in the background and returns its job id; `process_read` {id} returns the output
 * since the last read (the newest 30,000 characters) and whether the job still runs or how it
 * exited; `process_stop` {id} stops the job's whole process group and returns what it printed
 * last. They are built on `services.host.jobs`; without a job service the capability declines
 * and the plugin stays active. Starting a process asks for approval; reading and stopping one
 * the agent started does not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolProcessPlugin } from "@amber/plugins/tool_process";
 * const plugin = createToolProcessPlugin();
 * assert.equal(plugin.id, "tool_process");
 * assert.deepEqual(plugin.capabilities().map((c) => c.name), ["process"]);
 * ```
 */
export function createToolProcessPlugin(): Plugin {
  return toolPlugin({
    id: "tool_process",
    name: "Processes",
    description: "Background processes: process_start, process_read, process_stop.",
    tools: ["process_start", "process_read", "process_stop"],
    capability: "process",
    build: (services) => {
      const jobs = services.host.jobs;
      // No job service, no tools: the capability declines and the plugin stays active.
      return jobs === undefined ? [] : processTools(jobs);
    },
  });
}

function processTools(jobs: JobService): Tool[] {
  const start = defineTool({
    name: "process_start",
    description: "Start a long-running command in the background (a dev server, a watcher, a " +
      "slow build) with `bash -c` in the workspace root, and return its job id at once. Read " +
      "its output with process_read and stop it with process_stop. For a command that finishes " +
      "on its own, use bash instead.",
    parameters: {
      type: "object",
      properties: {
        command: {
          type: "string",
          minLength: 1,
          description: "The command line to run in the background.",
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    verb: "starting",
    requiresApproval: () => true,
    summarize: (args) => `start $ ${String(args.command)}`,
    async execute({ command }): Promise<ToolResult> {
      let job: JobInfo;
      try {
        job = await jobs.start(["bash", "-c", command]);
      } catch (error) {
        return toolError(`cannot start the process: ${describeError(error)}`);
      }
      return {
        ok: true,
        output: `Started job ${job.id}: ${command}\nRead its output with process_read ` +
          `{"id":"${job.id}"}; stop it with process_stop {"id":"${job.id}"}.`,
        data: job,
      };
    },
  });

  const read = defineTool({
    name: "process_read",
    description: "Return the output a background job printed since the last process_read " +
      `(at most the newest ${MAX_READ_CHARS} characters), and whether it is still running or ` +
      "its exit code.",
    parameters: ID_PARAMETERS,
    verb: "reading output",
    readOnly: true,
    summarize: (args) => `read job ${String(args.id)}`,
    async execute({ id }): Promise<ToolResult> {
      try {
        const { output, info } = await jobs.read(id);
        return { ok: true, output: report(output, info, "(no new output)"), data: info };
      } catch (error) {
        return toolError(describeError(error));
      }
    },
  });

  const stop = defineTool({
    name: "process_stop",
    description: "Stop a background job and everything it started (SIGTERM, then SIGKILL " +
      "after 2 s), and return the output it printed since the last read.",
    parameters: ID_PARAMETERS,
    verb: "stopping",
    summarize: (args) => `stop job ${String(args.id)}`,
    async execute({ id }): Promise<ToolResult> {
      try {
        await jobs.stop(id);
        const { output, info } = await jobs.read(id);
        return { ok: true, output: report(output, info, "(no new output)"), data: info };
      } catch (error) {
        return toolError(describeError(error));
      }
    },
  });

  return [start, read, stop];
}

function report(output: string, info: JobInfo, empty: string): string {
  const text = output === "" ? empty : keepTail(output, MAX_READ_CHARS);
  const state = info.running
    ? `[job ${info.id} is running]`
    : `[job ${info.id} exited with code ${info.exitCode ?? "unknown"}]`;
  return `${text}${text.endsWith("\n") ? "" : "\n"}${state}`;
}
