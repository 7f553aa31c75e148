/**
 * Where a batch lives in Redis, shared by `amber batch` (which submits and reads) and
 * `amber worker` (which runs): the Redis URL, the queues, the job ids, what a job carries and
 * what a finished job stores.
 *
 * - Queues: one BullMQ queue per provider (named by the provider, `default` for jobs that name
 *   none), under the BullMQ prefix {@linkcode QUEUE_PREFIX}, so one rate limiter per provider
 *   holds across every worker. The names in use are kept in the set {@linkcode QUEUES_KEY}.
 * - A job's id is `<batch id>.<line>` and its data a {@linkcode JobData}: the batch, the line and
 *   the validated spec, never a secret (workers take keys from their own environment).
 * - Everything else sits under `amber:batch:<id>:` (see {@linkcode batchKeys}): the metadata, the
 *   queue of each line, one outcome per line (written once: the first writer wins), the attempt
 *   counter and each attempt's transcript, the cancel flag and the lines cancelled while waiting.
 *   A cancel is also published on {@linkcode CANCEL_CHANNEL} with the batch id as the message.
 *
 * @module
 */

import type { TokenUsage } from "@amber/core";
import type { JobSpec } from "./job_spec.ts";

/** A Redis URL that cannot be used. */
export class RedisUrlError extends Error {
  /** An error about `url`, saying why. */
  constructor(url: string, why: string, options?: ErrorOptions) {
    super(`bad Redis URL '${url}': ${why} (expected redis://HOST:PORT/N)`, options);
    this.name = "RedisUrlError";
  }
}

/** Where Redis is: what {@linkcode parseRedisUrl} reads from `redis://[USER:PASSWORD@]HOST:PORT/N`. */
export interface RedisTarget {
  /** The URL without its password: what messages show. */
  readonly display: string;
  /** The host name or address. */
  readonly host: string;
  /** The port (6379 when the URL gives none). */
  readonly port: number;
  /** The database number (0 when the URL gives none). */
  readonly db: number;
  /** The ACL user, if the URL names one. */
  readonly username?: string;
  /** The password, if the URL gives one. */
  readonly password?: string;
  /** `rediss://`: TLS. */
  readonly tls: boolean;
}

/**
 * Reads a Redis URL: `redis://HOST[:PORT][/N]` (or `rediss://` for TLS), with an optional
 * `USER:PASSWORD@`. Throws a {@linkcode RedisUrlError} saying what is wrong.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRedisUrl, RedisUrlError } from "./queue.ts";
 * const target = parseRedisUrl("redis://:hunter2@127.0.0.1:6380/3");
 * assert.deepEqual([target.host, target.port, target.db], ["127.0.0.1", 6380, 3]);
 * assert.equal(target.display, "redis://127.0.0.1:6380/3");
 * assert.throws(() => parseRedisUrl("http://127.0.0.1"), RedisUrlError);
 * ```
 */
export function parseRedisUrl(url: string): RedisTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new RedisUrlError(url, "not a URL", { cause: error });
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new RedisUrlError(url, `the scheme must be redis: or rediss:, not ${parsed.protocol}`);
  }
  if (parsed.hostname === "") throw new RedisUrlError(url, "no host");
  const port = parsed.port === "" ? 6379 : Number(parsed.port);
  const path = parsed.pathname.replace(/^\//, "");
  if (path !== "" && !/^\d+$/.test(path)) {
    throw new RedisUrlError(url, `the path must be a database number, not '/${path}'`);
  }
  if (parsed.search !== "" || parsed.hash !== "") {
    throw new RedisUrlError(url, "a query or fragment is not understood");
  }
  const db = path === "" ? 0 : Number(path);
  const tls = parsed.protocol === "rediss:";
  const username = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  const user = username === "" ? "" : `${parsed.username}@`;
  return {
    display: `${parsed.protocol}//${user}${parsed.host}/${db}`,
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
    port,
    db,
    ...(username === "" ? {} : { username }),
    ...(password === "" ? {} : { password }),
    tls,
  };
}

/** The BullMQ prefix of amber's queues: a queue's keys are `amber:queue:<name>:...`. */
export const QUEUE_PREFIX = "amber:queue";

/** The queue of jobs that name no provider: the worker runs them with its configured one. */
export const DEFAULT_QUEUE = "default";

/** The Redis set of every queue name a batch has used; workers read it to know what to take. */
export const QUEUES_KEY = "amber:queues";

/** The sorted set of batch ids, scored by submit time (ms since the epoch). */
export const BATCHES_KEY = "amber:batches";

/** The channel a batch cancel is published on; the message is the batch id. */
export const CANCEL_CHANNEL = "amber:batch:cancel";

/** The name of every job in amber's queues. */
export const JOB_NAME = "session";

/**
 * The queue a job runs from: its provider's, or {@linkcode DEFAULT_QUEUE}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { queueName } from "./queue.ts";
 * assert.equal(queueName({ prompt: "hi", workspace: ".", provider: "anthropic" }), "anthropic");
 * assert.equal(queueName({ prompt: "hi", workspace: "." }), "default");
 * ```
 */
export function queueName(spec: JobSpec): string {
  return spec.provider ?? DEFAULT_QUEUE;
}

/** What a batch id may look like: it becomes part of Redis keys and job ids. */
export const BATCH_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * A new batch id: the submit time (UTC, to the second) and eight random hex digits, so ids sort
 * by time and two submits in one second differ.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newBatchId } from "./queue.ts";
 * assert.match(newBatchId(new Date("2026-12-02T05:40:00Z")), /^20261202-054000-[0-9a-f]{8}$/);
 * ```
 */
export function newBatchId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const random = crypto.getRandomValues(new Uint8Array(4));
  return `${stamp}-${Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The BullMQ job id of a batch's line (BullMQ ids may not hold `:`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jobId } from "./queue.ts";
 * assert.equal(jobId("20261202-054000-0badcafe", 7), "20261202-054000-0badcafe.7");
 * ```
 */
export function jobId(batchId: string, line: number): string {
  return `${batchId}.${line}`;
}

/** What a queued job carries: where it comes from and what it runs. No secrets, ever. */
export interface JobData {
  /** The batch it belongs to. */
  readonly batchId: string;
  /** Its line in the tasks file. */
  readonly line: number;
  /** What it runs (validated at submit; a worker validates it again). */
  readonly spec: JobSpec;
}

/** What is known of a batch from its submit. */
export interface BatchMeta {
  /** Its id. */
  readonly id: string;
  /** When it was submitted (ISO 8601). */
  readonly submittedAt: string;
  /** The tasks file it came from, as the user named it. */
  readonly source: string;
  /** How many jobs were queued. */
  readonly jobs: number;
  /** The queued lines, in file order. */
  readonly lines: readonly number[];
}

/** How a job that ran ended. */
export type OutcomeStatus = "completed" | "failed" | "cancelled";

/**
 * What a worker stores when a job's session ends, once per job. The transcripts are kept apart
 * (one list per attempt, written as the session goes, so a dead attempt's survives it).
 */
export interface JobOutcome {
  /** The batch. */
  readonly batchId: string;
  /** The line. */
  readonly line: number;
  /** `completed` (exit 0), `cancelled` (the batch was cancelled, or the time ran out), `failed`. */
  readonly status: OutcomeStatus;
  /** The session's final answer ("" when it gave none). */
  readonly answer: string;
  /** The exit status `amber run` would have had: 0, 1, or 130 when cancelled. */
  readonly exitCode: number;
  /** Why it failed or stopped, when it did. */
  readonly error?: string;
  /** The tokens of every model call of the session. */
  readonly usage: TokenUsage;
  /** Its cost in dollars, when the prices are known. */
  readonly cost?: number;
  /** The workspace's `git diff` after the session ("" when nothing changed). */
  readonly diff: string;
  /** Which attempt this was (1 first); earlier ones died without an outcome. */
  readonly attempt: number;
  /** Who ran it (host name and process id, or what the worker calls itself). */
  readonly worker?: string;
  /** When the attempt started (ISO 8601). */
  readonly startedAt: string;
  /** When it ended (ISO 8601). */
  readonly finishedAt: string;
}

/** Where one job stands: its outcome's status, or the queue's state while it has none. */
export type JobState =
  | OutcomeStatus
  | "waiting"
  | "active"
  | "unknown";

/** The Redis keys of one batch (none of them holds a secret). */
export interface BatchKeys {
  /** A JSON {@linkcode BatchMeta}. */
  readonly meta: string;
  /** A hash: line → queue name. */
  readonly queues: string;
  /** Set when the batch is cancelled: the time (ISO 8601). */
  readonly cancelled: string;
  /** A set of the lines taken off the queue before they ran. */
  readonly cancelledLines: string;
  /** A line's outcome: a JSON {@linkcode JobOutcome}, set once. */
  outcome(line: number): string;
  /** A line's attempt counter (incremented as each attempt starts). */
  attempts(line: number): string;
  /** A list: the transcript of one attempt of a line, in chunks as they were written. */
  transcript(line: number, attempt: number): string;
}

/**
 * The keys of the batch `batchId`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { batchKeys } from "./queue.ts";
 * const keys = batchKeys("b1");
 * assert.equal(keys.outcome(3), "amber:batch:b1:outcome:3");
 * assert.equal(keys.transcript(3, 2), "amber:batch:b1:transcript:3:2");
 * ```
 */
export function batchKeys(batchId: string): BatchKeys {
  const base = `amber:batch:${batchId}`;
  return {
    meta: `${base}:meta`,
    queues: `${base}:queues`,
    cancelled: `${base}:cancelled`,
    cancelledLines: `${base}:cancelled-lines`,
    outcome: (line) => `${base}:outcome:${line}`,
    attempts: (line) => `${base}:attempts:${line}`,
    transcript: (line, attempt) => `${base}:transcript:${line}:${attempt}`,
  };
}

/** How many jobs of a batch are where. */
export interface BatchCounts {
  /** Every job queued. */
  readonly total: number;
  /** Queued, not started. */
  readonly waiting: number;
  /** Running on a worker now. */
  readonly active: number;
  /** Ended with exit status 0. */
  readonly completed: number;
  /** Ended otherwise, or could not run. */
  readonly failed: number;
  /** Taken off the queue, or stopped, by a cancel. */
  readonly cancelled: number;
  /** Gone from the queue without an outcome (removed by hand). */
  readonly unknown: number;
}

/** Everything stored about one job of a batch. */
export interface JobRecord {
  /** Its line in the tasks file. */
  readonly line: number;
  /** Where it stands. */
  readonly state: JobState;
  /** Its outcome, once it has one. */
  readonly outcome?: JobOutcome;
  /** How many attempts started (0 before the first). */
  readonly attempts: number;
  /** Why BullMQ failed it, when it did without an outcome (a bad payload, too many stalls). */
  readonly failedReason?: string;
}

/**
 * How many of `jobs` are in each state.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countStates } from "./queue.ts";
 * const counts = countStates([{ state: "completed" }, { state: "waiting" }]);
 * assert.deepEqual([counts.total, counts.completed, counts.waiting, counts.failed], [2, 1, 1, 0]);
 * ```
 */
export function countStates(jobs: readonly Pick<JobRecord, "state">[]): BatchCounts {
  const counts = {
    total: 0,
    waiting: 0,
    active: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
    unknown: 0,
  };
  for (const job of jobs) {
    counts.total++;
    counts[job.state]++;
  }
  return counts;
}
