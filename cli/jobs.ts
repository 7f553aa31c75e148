/**
 * The CLI's background jobs: real processes the `process_*` tools start, read and stop.
 *
 * @module
 */

import type { JobInfo, JobService, ProcessPolicy } from "@amber/core";
import {
  childEnvironment,
  type ProcessGroup,
  redactSecrets,
  startProcessGroup,
  STOP_GRACE_MS,
} from "@amber/plugins/process_group";

/** Output a job keeps unread, in characters, unless told otherwise. */
export const DEFAULT_JOB_BUFFER = 100_000;

/** Options of {@linkcode createJobService}. */
export interface JobServiceOptions {
  /** Unread output kept per job; the oldest beyond it is dropped, with a note (characters). */
  readonly maxBuffer?: number;
  /** Between SIGTERM and SIGKILL when a job is stopped (ms). */
  readonly graceMs?: number;
  /**
   * The host's process policy: the jobs' environment, and the tracking that stops them when amber
   * exits or is killed. Without one a job gets the environment without the usual secret shapes.
   */
  readonly processes?: ProcessPolicy;
}

/** A job service that can also be shut down. */
export type DisposableJobService = JobService & {
  /** Stops every job still running and waits until each is gone; later starts are refused. */
  dispose(): Promise<void>;
};

// Output not yet read, and how much of it was dropped for want of a reader.
interface Unread {
  text: string;
  dropped: number;
}

interface Job {
  readonly id: string;
  readonly command: readonly string[];
  readonly group: ProcessGroup;
  readonly unread: Unread;
  readonly secrets: readonly string[];
  exitCode?: number;
}

/**
 * Creates the job service: each job is `command` run in `workspaceRoot` as the leader of its own
 * process group (so stopping it stops what it started), stdin closed, stderr merged into stdout
 * in order, and the environment of the host's process policy, which leaves out its secrets
 * (their values are also redacted from what `read` returns). Unread output is capped; when a job outruns its
 * reader the oldest part is dropped and the next read says how much. `read` and `stop` of an
 * unknown id reject with an error that lists the known ones.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createJobService } from "./jobs.ts";
 * const jobs = createJobService(Deno.cwd());
 * const job = await jobs.start(["bash", "-c", "echo started; sleep 100"]);
 * assert.deepEqual([job.id, job.running], ["j1", true]);
 * const stopped = await jobs.stop(job.id);
 * assert.deepEqual([stopped.running, stopped.exitCode], [false, 143]);
 * await jobs.dispose();
 * ```
 */
export function createJobService(
  workspaceRoot: string,
  options: JobServiceOptions = {},
): DisposableJobService {
  const maxBuffer = options.maxBuffer ?? DEFAULT_JOB_BUFFER;
  const graceMs = options.graceMs ?? STOP_GRACE_MS;
  const jobs = new Map<string, Job>();
  let next = 1;
  let disposed = false;

  const info = (job: Job): JobInfo =>
    job.exitCode === undefined
      ? { id: job.id, command: job.command, running: true }
      : { id: job.id, command: job.command, running: false, exitCode: job.exitCode };

  const find = (id: string): Job => {
    const job = jobs.get(id);
    if (job !== undefined) return job;
    const known = [...jobs.keys()];
    throw new Error(
      `unknown job '${id}'; ${known.length > 0 ? `jobs: ${known.join(", ")}` : "no jobs started"}`,
    );
  };

  return {
    async start(command: readonly string[]): Promise<JobInfo> {
      if (disposed) throw new Error("the job service has been shut down");
      if (command.length === 0 || command[0] === "") throw new Error("empty command");
      const environment = options.processes?.environment() ?? childEnvironment();
      const id = `j${next++}`;
      const unread: Unread = { text: "", dropped: 0 };
      const group = await startProcessGroup({
        // The wrapper merges stderr into stdout inside the child, keeping their order.
        argv: ["bash", "-c", 'exec "$@" 2>&1', "amber-job", ...command],
        cwd: workspaceRoot,
        env: environment.env,
        onOutput(text) {
          unread.text += text;
          // Trim in steps, not per chunk: the exact count is settled at read time.
          if (unread.text.length > 2 * maxBuffer) trim(unread);
        },
      });
      options.processes?.track(group, command);
      const job: Job = { id, command: [...command], group, unread, secrets: environment.secrets };
      group.finished.then((exit) => {
        job.exitCode = exit.code;
      });
      jobs.set(id, job);
      return info(job);
    },

    read(id: string): Promise<{ readonly output: string; readonly info: JobInfo }> {
      try {
        const job = find(id);
        const unread = job.unread;
        trim(unread);
        const note = unread.dropped > 0
          ? `[${unread.dropped} chars of earlier output dropped: it came faster than it was read]\n`
          : "";
        const output = note + redactSecrets(unread.text, job.secrets);
        unread.text = "";
        unread.dropped = 0;
        return Promise.resolve({ output, info: info(job) });
      } catch (error) {
        return Promise.reject(error);
      }
    },

    async stop(id: string): Promise<JobInfo> {
      const job = find(id);
      const exit = await job.group.stop(graceMs);
      job.exitCode = exit.code;
      return info(job);
    },

    list(): readonly JobInfo[] {
      return [...jobs.values()].map(info);
    },

    async dispose(): Promise<void> {
      disposed = true;
      await Promise.all(
        [...jobs.values()].map(async (job) => {
          const exit = await job.group.stop(graceMs);
          job.exitCode = exit.code;
        }),
      );
    },
  };

  function trim(unread: Unread): void {
    if (unread.text.length <= maxBuffer) return;
    unread.dropped += unread.text.length - maxBuffer;
    unread.text = unread.text.slice(-maxBuffer);
  }
}
