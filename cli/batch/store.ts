/**
 * A batch's side of Redis, for both ends: {@linkcode BatchStore} submits a batch's jobs onto the
 * provider queues (BullMQ), reads where each job stands, cancels and retries, and gives a
 * worker what it records as a job runs (the attempt number, the transcript as it grows, the one
 * outcome) and the cancels it must act on. Key layout: see `queue.ts`.
 *
 * @module
 */

import { Queue } from "bullmq";
import { Redis, type RedisOptions } from "ioredis";
import type { ParsedTask } from "./job_spec.ts";
import {
  BATCH_ID,
  type BatchCounts,
  BATCHES_KEY,
  type BatchKeys,
  batchKeys,
  type BatchMeta,
  CANCEL_CHANNEL,
  countStates,
  JOB_NAME,
  type JobData,
  jobId,
  type JobOutcome,
  type JobRecord,
  type JobState,
  newBatchId,
  parseRedisUrl,
  QUEUE_PREFIX,
  queueName,
  QUEUES_KEY,
  type RedisTarget,
} from "./queue.ts";

/** Redis did not answer at the URL given. */
export class RedisUnreachableError extends Error {
  /** The URL (without its password). */
  readonly url: string;

  /** An error about `url`, with what went wrong as its cause. */
  constructor(url: string, options?: ErrorOptions) {
    const why = options?.cause instanceof Error ? `: ${options.cause.message}` : "";
    super(`cannot reach Redis at ${url}${why}`, options);
    this.name = "RedisUnreachableError";
    this.url = url;
  }
}

/** No batch has this id in this Redis. */
export class UnknownBatchError extends Error {
  /** The id asked for. */
  readonly batchId: string;

  /** An error about `batchId` in the Redis at `url`. */
  constructor(batchId: string, url: string) {
    super(`no batch '${batchId}' in ${url} (\`amber batch status --queue ${url}\` lists them)`);
    this.name = "UnknownBatchError";
    this.batchId = batchId;
  }
}

/** What {@linkcode BatchStore.cancel} did. */
export interface CancelSummary {
  /** Lines taken off the queue before they ran. */
  readonly removed: readonly number[];
  /** Lines running, whose workers were told to cancel. */
  readonly running: readonly number[];
}

/** Options of {@linkcode BatchStore.open}. */
export interface OpenOptions {
  /**
   * Reconnect after a lost connection, waiting as long as it takes (a worker); otherwise a
   * command fails at once when Redis goes (a CLI command). Default false.
   */
  readonly reconnect?: boolean;
  /** How long the first connection may take, in ms (default 5000). */
  readonly connectTimeoutMs?: number;
}

/**
 * The ioredis options that reach `target`: what a BullMQ `connection` takes. A BullMQ Worker
 * needs `maxRetriesPerRequest: null` in `extra`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRedisUrl } from "./queue.ts";
 * import { connectionOptions } from "./store.ts";
 * const options = connectionOptions(parseRedisUrl("redis://127.0.0.1:6390/2"));
 * assert.deepEqual([options.host, options.port, options.db], ["127.0.0.1", 6390, 2]);
 * ```
 */
export function connectionOptions(target: RedisTarget, extra: RedisOptions = {}): RedisOptions {
  return {
    host: target.host,
    port: target.port,
    db: target.db,
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(target.tls ? { tls: {} } : {}),
    ...extra,
  };
}

const isLine = (line: number) => Number.isInteger(line) && line > 0;

/**
 * One connection to the Redis of a batch queue, and the BullMQ queues on it. `open` fails with
 * a {@linkcode RedisUnreachableError} naming the URL when Redis does not answer; a batch id that
 * is not there is an {@linkcode UnknownBatchError}.
 */
export class BatchStore implements AsyncDisposable {
  /** Where Redis is. */
  readonly target: RedisTarget;
  /** The connection (for a worker's own reads and writes under the batch's keys). */
  readonly redis: Redis;
  readonly #queues = new Map<string, Queue<JobData>>();
  readonly #subscribers = new Set<Redis>();
  #closed?: Promise<void>;

  private constructor(target: RedisTarget, redis: Redis) {
    this.target = target;
    this.redis = redis;
  }

  /** Connects to the Redis at `url` (`redis://HOST:PORT/N`). */
  static async open(url: string | RedisTarget, options: OpenOptions = {}): Promise<BatchStore> {
    const target = typeof url === "string" ? parseRedisUrl(url) : url;
    const redis = new Redis(connectionOptions(target, {
      lazyConnect: true,
      connectTimeout: options.connectTimeoutMs ?? 5000,
      ...(options.reconnect
        ? { maxRetriesPerRequest: null, retryStrategy: (n: number) => Math.min(n * 200, 2000) }
        : { maxRetriesPerRequest: 1, retryStrategy: () => null, enableOfflineQueue: false }),
    }));
    // ioredis reports connection trouble as events; the first says why (ECONNREFUSED...), where
    // the rejected connect only says the connection closed.
    let trouble: unknown;
    redis.on("error", (error) => trouble ??= error);
    try {
      await redis.connect();
    } catch (error) {
      // Ended already (no reconnecting): disconnecting it again would hold the process ~2 s.
      if (redis.status !== "end") redis.disconnect();
      throw new RedisUnreachableError(target.display, { cause: trouble ?? error });
    }
    return new BatchStore(target, redis);
  }

  /** The BullMQ queue `name` (one per provider), on this connection. */
  queue(name: string): Queue<JobData> {
    let queue = this.#queues.get(name);
    if (queue === undefined) {
      queue = new Queue<JobData>(name, { connection: this.redis, prefix: QUEUE_PREFIX });
      this.#queues.set(name, queue);
    }
    return queue;
  }

  /** The names of every queue a batch has used (what a worker should take jobs from). */
  async queueNames(): Promise<string[]> {
    return (await this.redis.smembers(QUEUES_KEY)).sort();
  }

  /**
   * Queues one job per task under a new batch id and records the batch; resolves to its
   * metadata.
   */
  async submit(
    tasks: readonly ParsedTask[],
    source: string,
    now: Date = new Date(),
  ): Promise<BatchMeta> {
    const id = newBatchId(now);
    const keys = batchKeys(id);
    const meta: BatchMeta = {
      id,
      submittedAt: now.toISOString(),
      source,
      jobs: tasks.length,
      lines: tasks.map((task) => task.line),
    };
    const byQueue = Map.groupBy(tasks, (task) => queueName(task.spec));
    // The batch is recorded before its jobs exist, so a worker never meets a job of no batch.
    const write = this.redis.multi().set(keys.meta, JSON.stringify(meta));
    for (const [name, group] of byQueue) {
      write.sadd(QUEUES_KEY, name);
      for (const task of group) write.hset(keys.queues, String(task.line), name);
    }
    await write.zadd(BATCHES_KEY, now.getTime(), id).exec();
    for (const [name, group] of byQueue) {
      await this.queue(name).addBulk(group.map((task) => ({
        name: JOB_NAME,
        data: { batchId: id, line: task.line, spec: task.spec },
        opts: { jobId: jobId(id, task.line), attempts: 1 },
      })));
    }
    return meta;
  }

  /** The ids of every batch, oldest first. */
  async batchIds(): Promise<string[]> {
    return await this.redis.zrange(BATCHES_KEY, 0, -1);
  }

  /** A batch's metadata. */
  async meta(batchId: string): Promise<BatchMeta> {
    const text = BATCH_ID.test(batchId) ? await this.redis.get(batchKeys(batchId).meta) : null;
    if (text === null) throw new UnknownBatchError(batchId, this.target.display);
    return JSON.parse(text) as BatchMeta;
  }

  /** Every job of a batch: its state, outcome and attempts, in line order. */
  async jobs(batchId: string): Promise<JobRecord[]> {
    const meta = await this.meta(batchId);
    const keys = batchKeys(batchId);
    const queues = await this.redis.hgetall(keys.queues);
    const cancelled = new Set(await this.redis.smembers(keys.cancelledLines));
    return await Promise.all(meta.lines.map(async (line): Promise<JobRecord> => {
      const name = queues[String(line)];
      const queue = name === undefined ? undefined : this.queue(name);
      // The queue's state before the outcome: a job that finishes between the two reads is
      // then seen with its outcome, never as completed without one.
      const state = await queue?.getJobState(jobId(batchId, line)) ?? "unknown";
      const [outcome, attempts] = await Promise.all([
        this.outcome(batchId, line),
        this.redis.get(keys.attempts(line)),
      ]);
      const started = Number(attempts ?? 0);
      if (outcome !== undefined) {
        return { line, state: outcome.status, outcome, attempts: started };
      }
      if (cancelled.has(String(line))) return { line, state: "cancelled", attempts: started };
      if (state === "failed") {
        const reason = (await queue?.getJob(jobId(batchId, line)))?.failedReason;
        return { line, state, attempts: started, ...(reason ? { failedReason: reason } : {}) };
      }
      // A job that completed without an outcome lost it (deleted by hand): unknown.
      const mapped: JobState = state === "active"
        ? "active"
        : state === "unknown" || state === "completed"
        ? "unknown"
        : "waiting";
      return { line, state: mapped, attempts: started };
    }));
  }

  /** How many jobs of a batch are where. */
  async counts(batchId: string): Promise<BatchCounts> {
    return countStates(await this.jobs(batchId));
  }

  /**
   * Cancels a batch: sets its cancel flag, takes every job that has not started off its queue,
   * and publishes the cancel (running jobs' workers stop their sessions, which commit what they
   * did). A worker checks the flag before it starts a job, so one taken meanwhile stops too.
   */
  async cancel(batchId: string): Promise<CancelSummary> {
    const keys = batchKeys(batchId);
    const records = await this.jobs(batchId);
    // The flag first (a worker starting a job checks it), the cancel published last: a running
    // job told earlier would end and free its worker to take a job not yet taken off the queue.
    await this.redis.set(keys.cancelled, new Date().toISOString(), "NX");
    const queues = await this.redis.hgetall(keys.queues);
    const removed: number[] = [];
    const running: number[] = [];
    for (const record of records) {
      if (record.state === "active") running.push(record.line);
      if (record.state !== "waiting") continue;
      const queue = this.queue(queues[String(record.line)] ?? "");
      // 0: a worker holds it now; it sees the flag and cancels.
      if (await queue.remove(jobId(batchId, record.line)) === 1) {
        await this.redis.sadd(keys.cancelledLines, String(record.line));
        removed.push(record.line);
      } else {
        running.push(record.line);
      }
    }
    await this.redis.publish(CANCEL_CHANNEL, batchId);
    return { removed, running };
  }

  /** Whether the batch was cancelled. */
  async isCancelled(batchId: string): Promise<boolean> {
    return await this.redis.exists(batchKeys(batchId).cancelled) === 1;
  }

  /**
   * Puts a batch's failed jobs back on their queues (their failed outcomes are dropped, so each
   * can store a new one); resolves to the lines retried.
   */
  async retry(batchId: string): Promise<number[]> {
    const keys = batchKeys(batchId);
    const queues = await this.redis.hgetall(keys.queues);
    const retried: number[] = [];
    for (const record of await this.jobs(batchId)) {
      if (record.state !== "failed") continue;
      const queue = this.queue(queues[String(record.line)] ?? "");
      const id = jobId(batchId, record.line);
      const state = await queue.getJobState(id);
      const job = await queue.getJob(id);
      if (job === undefined || (state !== "failed" && state !== "completed")) continue;
      await this.redis.del(keys.outcome(record.line));
      await job.retry(state);
      retried.push(record.line);
    }
    return retried;
  }

  /** A worker starts an attempt at a job: resolves to its number (1 for the first). */
  async startAttempt(batchId: string, line: number): Promise<number> {
    return await this.redis.incr(batchKeys(batchId).attempts(line));
  }

  /** Appends a piece of an attempt's transcript (the session file's new lines) as it grows. */
  async appendTranscript(
    batchId: string,
    line: number,
    attempt: number,
    chunk: string,
  ): Promise<void> {
    if (chunk === "") return;
    await this.redis.rpush(batchKeys(batchId).transcript(line, attempt), chunk);
  }

  /** An attempt's transcript as written so far ("" when none was). */
  async transcript(batchId: string, line: number, attempt: number): Promise<string> {
    return (await this.redis.lrange(batchKeys(batchId).transcript(line, attempt), 0, -1)).join("");
  }

  /**
   * Stores a job's outcome unless one is stored already; resolves to whether this one was. A
   * worker whose outcome was refused (another attempt finished first) must not report its own.
   */
  async storeOutcome(outcome: JobOutcome): Promise<boolean> {
    if (!isLine(outcome.line)) throw new RangeError(`not a line number: ${outcome.line}`);
    const key = batchKeys(outcome.batchId).outcome(outcome.line);
    return await this.redis.set(key, JSON.stringify(outcome), "NX") === "OK";
  }

  /** A job's outcome, if it has one. */
  async outcome(batchId: string, line: number): Promise<JobOutcome | undefined> {
    const text = await this.redis.get(batchKeys(batchId).outcome(line));
    return text === null ? undefined : JSON.parse(text) as JobOutcome;
  }

  /** The keys of a batch (for what this class does not wrap). */
  keys(batchId: string): BatchKeys {
    return batchKeys(batchId);
  }

  /**
   * Calls `listener` with the id of every batch cancelled from now on (on a connection of its
   * own, as a subscribed Redis connection does nothing else); resolves to a function that stops.
   */
  async onCancel(listener: (batchId: string) => void): Promise<() => Promise<void>> {
    const subscriber = this.redis.duplicate({ lazyConnect: true });
    subscriber.on("error", () => {});
    subscriber.on("message", (channel: string, message: string) => {
      if (channel === CANCEL_CHANNEL) listener(message);
    });
    try {
      await subscriber.connect();
      await subscriber.subscribe(CANCEL_CHANNEL);
    } catch (error) {
      subscriber.disconnect();
      throw new RedisUnreachableError(this.target.display, { cause: error });
    }
    this.#subscribers.add(subscriber);
    return async () => {
      if (!this.#subscribers.delete(subscriber)) return;
      await subscriber.quit().catch(() => subscriber.disconnect());
    };
  }

  /** Closes the queues and the connections; twice is harmless. */
  close(): Promise<void> {
    return this.#closed ??= (async () => {
      await Promise.all([...this.#queues.values()].map((queue) => queue.close()));
      await Promise.all(
        [...this.#subscribers].map((s) => s.quit().catch(() => s.disconnect())),
      );
      this.#subscribers.clear();
      await this.redis.quit().catch(() => this.redis.disconnect());
    })();
  }

  /** {@linkcode BatchStore.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
