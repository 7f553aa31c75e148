/**
 * The running side of a batch: {@linkcode BatchWorker} takes jobs from amber's BullMQ queues
 * (one per provider, each with that provider's rate limiter from `batch.yaml`, shared by every
 * worker) and runs each as one session (`run_job.ts`). What it records is in `queue.ts`: the
 * attempt number, the transcript of each attempt as it grows, and one outcome per job (the
 * first stored wins, so a job that ran twice after a stall still has one).
 *
 * Guarantees come from BullMQ: a job's lock is renewed while its session runs; a worker that
 * dies stops renewing it, and after `lockDurationMs` the stall check of any worker puts the job
 * back on its queue, where another worker runs it as its next attempt (the dead attempt's
 * transcript stays beside the new one). A batch cancel (published by `amber batch cancel`)
 * aborts its running sessions, which commit what they did. Closing gracefully lets the running
 * sessions end; closing with `stop` cancels them and puts their jobs back on the queue at once.
 *
 * @module
 */

import { type Job, UnrecoverableError, WaitingError, Worker } from "bullmq";
import type { ApprovalPolicy, Plugin } from "@amber/core";
import { isMcpLog } from "../mcp_logs.ts";
import type { EnvReader } from "../provider_settings.ts";
import { type JobSpec, validateJobSpec } from "./job_spec.ts";
import {
  type JobData,
  type JobOutcome,
  type OutcomeStatus,
  parseRedisUrl,
  QUEUE_PREFIX,
} from "./queue.ts";
import { type JobResult, runJob } from "./run_job.ts";
import { BatchStore, connectionOptions } from "./store.ts";
import { DEFAULT_WORKER_SETTINGS, type WorkerSettings } from "./worker_settings.ts";

/** What {@linkcode BatchWorker.start} takes. */
export interface BatchWorkerOptions {
  /** The queue's Redis: `redis://HOST:PORT/N`. */
  readonly url: string;
  /** Sessions run at once, per provider queue. */
  readonly concurrency: number;
  /** The worker's config directory (its `config.yaml` is each job's). */
  readonly configDir: string;
  /** The plugins each job's host starts with. */
  readonly plugins: () => readonly Plugin[];
  /** Tools that need approval in a job: `auto` (allow, the default) or `deny`. */
  readonly approve?: Exclude<ApprovalPolicy, "ask">;
  /**
   * Rate limits, stall detection and the base URLs jobs may name; BullMQ's defaults, no limits
   * and only the providers' own URLs when absent.
   */
  readonly settings?: WorkerSettings;
  /** What the outcomes name as their worker. */
  readonly name: string;
  /** Reads the worker's environment (provider keys); `Deno.env.get` by default. */
  readonly env?: EnvReader;
  /** Says what the worker does (a job started, ended, put back); one line each. */
  readonly log?: (line: string) => void;
  /** How often the list of queues is read again, in ms (new providers' batches). */
  readonly queuePollMs?: number;
}

/** What a job that ran returns to BullMQ (the outcome itself is in its Redis key). */
export interface JobReturn {
  /** The outcome's status. */
  readonly status: OutcomeStatus;
  /** The exit status. */
  readonly exitCode: number;
  /** The attempt that ran. */
  readonly attempt: number;
  /** False when another attempt had stored the job's outcome first. */
  readonly stored: boolean;
}

// A running job: what cancels its session, and the batch it belongs to.
interface Running {
  readonly batchId: string;
  readonly controller: AbortController;
}

/** Jobs of amber's queues being run on this machine; see the module documentation. */
export class BatchWorker {
  readonly #options: BatchWorkerOptions;
  readonly #settings: WorkerSettings;
  readonly #store: BatchStore;
  readonly #workers = new Map<string, Worker<JobData, JobReturn>>();
  readonly #running = new Set<Running>();
  #stopCancels: (() => Promise<void>) | undefined;
  #poll: ReturnType<typeof setInterval> | undefined;
  #closing = false;
  #stopping = false;
  #closed: Promise<void> | undefined;

  private constructor(options: BatchWorkerOptions, store: BatchStore) {
    this.#options = options;
    this.#settings = options.settings ?? DEFAULT_WORKER_SETTINGS;
    this.#store = store;
  }

  /**
   * Connects to Redis and starts taking jobs from every queue a batch has used (read again
   * every `queuePollMs`). Rejects with `RedisUnreachableError` when Redis does not answer.
   */
  static async start(options: BatchWorkerOptions): Promise<BatchWorker> {
    const store = await BatchStore.open(options.url, { reconnect: true });
    const worker = new BatchWorker(options, store);
    try {
      worker.#stopCancels = await store.onCancel((batchId) => worker.#cancelBatch(batchId));
      await worker.#followQueues();
    } catch (error) {
      await worker.close();
      throw error;
    }
    worker.#poll = setInterval(() => {
      worker.#followQueues().catch((error) => worker.#log(`cannot read the queues: ${error}`));
    }, options.queuePollMs ?? 2000);
    return worker;
  }

  /** How many sessions run now. */
  get running(): number {
    return this.#running.size;
  }

  /**
   * Stops taking jobs and closes. Without `stop`, the running sessions end first and store
   * their outcomes; with it, they are cancelled (committing what they did) and their jobs go
   * back to the queue for another worker, with no outcome. A second call may add `stop`.
   */
  close(options: { readonly stop?: boolean } = {}): Promise<void> {
    this.#closing = true;
    if (options.stop) {
      this.#stopping = true;
      for (const running of this.#running) running.controller.abort();
    }
    return this.#closed ??= (async () => {
      clearInterval(this.#poll);
      await Promise.all([...this.#workers.values()].map((worker) => worker.close()));
      await this.#stopCancels?.();
      await this.#store.close();
    })();
  }

  #log(line: string): void {
    this.#options.log?.(line);
  }

  async #followQueues(): Promise<void> {
    if (this.#closing) return;
    for (const name of await this.#store.queueNames()) {
      if (this.#workers.has(name) || this.#closing) continue;
      const limit = this.#settings.rateLimits[name];
      const worker = new Worker<JobData, JobReturn>(
        name,
        (job, token) => this.#process(job, token),
        {
          connection: connectionOptions(parseRedisUrl(this.#options.url), {
            maxRetriesPerRequest: null,
          }),
          prefix: QUEUE_PREFIX,
          concurrency: this.#options.concurrency,
          name: this.#options.name,
          lockDuration: this.#settings.lockDurationMs,
          stalledInterval: this.#settings.stalledIntervalMs,
          maxStalledCount: this.#settings.maxStalledCount,
          ...(limit === undefined
            ? {}
            : { limiter: { max: limit.max, duration: limit.durationMs } }),
        },
      );
      worker.on("error", (error) => this.#log(`queue ${name}: ${error.message}`));
      // Said by the worker whose stall check found it: its worker stopped renewing its lock.
      worker.on(
        "stalled",
        (id) => this.#log(`job ${id}: stalled (its worker died?), queued again`),
      );
      this.#workers.set(name, worker);
      this.#log(`taking jobs from queue ${name}`);
    }
  }

  #cancelBatch(batchId: string): void {
    for (const running of this.#running) {
      if (running.batchId === batchId) running.controller.abort();
    }
  }

  async #process(job: Job<JobData, JobReturn>, token: string | undefined): Promise<JobReturn> {
    const data = job.data as Partial<JobData> | undefined;
    const batchId = typeof data?.batchId === "string" ? data.batchId : undefined;
    const line = typeof data?.line === "number" ? data.line : undefined;
    const where = `job ${job.id}`;
    let spec: JobSpec;
    try {
      if (batchId === undefined || line === undefined) {
        throw new Error("the job's data has no batch id and line");
      }
      spec = validateJobSpec(data?.spec);
    } catch (error) {
      const message = `bad job payload: ${(error as Error).message}`;
      this.#log(`${where}: ${message}`);
      if (batchId !== undefined && line !== undefined) {
        const attempt = await this.#store.startAttempt(batchId, line);
        const now = new Date().toISOString();
        await this.#store.storeOutcome({
          ...this.#empty(batchId, line, attempt, now),
          status: "failed",
          exitCode: 1,
          error: message,
        });
      }
      throw new UnrecoverableError(message);
    }
    const attempt = await this.#store.startAttempt(batchId, line);
    const startedAt = new Date().toISOString();
    if (await this.#store.isCancelled(batchId)) {
      return await this.#finish({
        ...this.#empty(batchId, line, attempt, startedAt),
        status: "cancelled",
        exitCode: 130,
        error: "the batch was cancelled",
      });
    }
    const running: Running = { batchId, controller: new AbortController() };
    this.#running.add(running);
    // Taken just as the worker was told to stop now: it goes straight back.
    if (this.#stopping) running.controller.abort();
    this.#log(`${where}: started (line ${line} of batch ${batchId}, attempt ${attempt})`);
    let outcome: JobOutcome;
    try {
      const result = await runJob(spec, {
        plugins: this.#options.plugins,
        configDir: this.#options.configDir,
        allowBaseUrls: this.#settings.allowBaseUrls,
        signal: running.controller.signal,
        onTranscript: (chunk) => this.#store.appendTranscript(batchId, line, attempt, chunk),
        // A plugin's fault is the operator's to see; what an MCP server logs is not.
        onDiagnostic: (d) => {
          if (!isMcpLog(d)) {
            this.#log(`${where}: plugin '${d.pluginId}' (${d.where}): ${d.message}`);
          }
        },
        ...(this.#options.approve === undefined ? {} : { approve: this.#options.approve }),
        ...(this.#options.env === undefined ? {} : { env: this.#options.env }),
      });
      outcome = this.#outcome(batchId, line, attempt, startedAt, result);
    } catch (error) {
      outcome = {
        ...this.#empty(batchId, line, attempt, startedAt),
        status: "failed",
        exitCode: 1,
        error: (error as Error).message ?? String(error),
      };
    } finally {
      this.#running.delete(running);
    }
    if (this.#stopping && running.controller.signal.aborted) {
      // The worker is stopping, not the job: it goes back to its queue for another worker.
      await job.moveToWait(token);
      this.#log(`${where}: stopped with the worker, back on the queue`);
      throw new WaitingError();
    }
    return await this.#finish(outcome, where);
  }

  // Stores the outcome (unless another attempt did first) and ends the job in BullMQ's terms:
  // a failed outcome fails the job (so `amber batch retry` finds it), never to be retried by
  // BullMQ itself.
  async #finish(outcome: JobOutcome, where = `job ${outcome.batchId}.${outcome.line}`) {
    const stored = await this.#store.storeOutcome(outcome);
    // Why a job did not complete is said here too: the operator watching the worker sees it
    // without asking `amber batch status`.
    this.#log(
      `${where}: ${outcome.status} (exit ${outcome.exitCode})` +
        (outcome.error === undefined || outcome.error === outcome.status
          ? ""
          : `: ${outcome.error}`) +
        (stored ? "" : "; another attempt's outcome was stored first"),
    );
    if (stored && outcome.status === "failed") {
      throw new UnrecoverableError(outcome.error ?? "the session failed");
    }
    return {
      status: outcome.status,
      exitCode: outcome.exitCode,
      attempt: outcome.attempt,
      stored,
    };
  }

  #empty(batchId: string, line: number, attempt: number, startedAt: string) {
    return {
      batchId,
      line,
      answer: "",
      usage: { promptTokens: 0, completionTokens: 0 },
      diff: "",
      attempt,
      worker: this.#options.name,
      startedAt,
      finishedAt: new Date().toISOString(),
    };
  }

  #outcome(
    batchId: string,
    line: number,
    attempt: number,
    startedAt: string,
    result: JobResult,
  ): JobOutcome {
    const status: OutcomeStatus = result.exitCode === 0
      ? "completed"
      : result.stoppedBy === "cancelled" || result.stoppedBy === "timeout"
      ? "cancelled"
      : "failed";
    return {
      batchId,
      line,
      status,
      answer: result.answer,
      exitCode: result.exitCode,
      ...(status === "completed" ? {} : { error: result.end }),
      usage: result.usage,
      ...(result.cost === undefined ? {} : { cost: result.cost }),
      diff: result.diff,
      attempt,
      worker: this.#options.name,
      startedAt,
      finishedAt: new Date().toISOString(),
    };
  }
}
