// `amber batch` against a real redis-server on loopback: submit, status, results, cancel and
// retry, with the jobs run by a small BullMQ worker inside the test (what `amber worker` does,
// reduced to storing outcomes and transcripts under the shared keys).

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Job, UnrecoverableError, Worker } from "bullmq";
import { main } from "../../cli/app.ts";
import {
  type JobData,
  jobId,
  type JobOutcome,
  QUEUE_PREFIX,
  queueName,
} from "../../cli/batch/queue.ts";
import { BatchStore, connectionOptions } from "../../cli/batch/store.ts";
import { runAmber } from "../cli/_subprocess.ts";
import { startRedis } from "./_redis.ts";

interface Ran {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
}

async function amber(...args: string[]): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out, err };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function writeTasks(dir: string, lines: readonly string[]): Promise<string> {
  const file = join(dir, "tasks.jsonl");
  await Deno.writeTextFile(file, lines.join("\n") + "\n");
  return file;
}

type Runner = (job: Job<JobData>, attempt: number, store: BatchStore) => Promise<
  Partial<JobOutcome>
>;

// A worker on the given queues: each job gets an attempt number, its transcript is appended as
// it "runs", and its outcome is stored once; a failed or cancelled outcome fails the BullMQ job
// (as `amber worker` does), so `retry` finds it.
function startWorkers(store: BatchStore, queues: readonly string[], runner: Runner) {
  const workers = queues.map((name) =>
    new Worker<JobData>(name, async (job) => {
      const { batchId, line } = job.data;
      const attempt = await store.startAttempt(batchId, line);
      await store.appendTranscript(batchId, line, attempt, `{"attempt":${attempt}}\n`);
      const ran = await runner(job, attempt, store);
      const outcome: JobOutcome = {
        batchId,
        line,
        status: "completed",
        answer: `answer ${line}`,
        exitCode: 0,
        usage: { promptTokens: 10 * line, completionTokens: line },
        diff: "",
        attempt,
        startedAt: new Date().toISOString(),
        finishedAt: new Date().toISOString(),
        ...ran,
      };
      await store.storeOutcome(outcome);
      if (outcome.status !== "completed") throw new UnrecoverableError(outcome.error ?? "failed");
      return { status: outcome.status };
    }, {
      connection: connectionOptions(store.target, { maxRetriesPerRequest: null }),
      prefix: QUEUE_PREFIX,
      concurrency: 1,
    })
  );
  return { close: () => Promise.all(workers.map((worker) => worker.close())) };
}

Deno.test("submit queues the good lines, names the bad ones; status counts the jobs", async () => {
  await using redis = await startRedis();
  const dir = await Deno.makeTempDir();
  try {
    const file = await writeTasks(dir, [
      '{"workspace": "proj", "prompt": "Fix it.", "provider": "openai", "maxSteps": 5}',
      '{"workspace": "/a", "prompt": "Hi.", "colour": "red"}',
      '{"workspace": "/b", "prompt": "Add docs."}',
      "",
      '{"repo": "https://example.com/c.git", "ref": "main", "prompt": "Bump."}',
      '{"workspace": "/d", "prompt": ""}',
    ]);
    const submitted = await amber("batch", "submit", file, "--queue", redis.url);
    assert.equal(submitted.code, 1, "a bad line makes the exit status nonzero");
    assert.equal(submitted.out.length, 1);
    const batchId = submitted.out[0];
    assert.match(batchId, /^\d{8}-\d{6}-[0-9a-f]{8}$/);
    assert.deepEqual(submitted.err, [
      `amber: ${file}:2: unknown key 'colour'; the keys are workspace, repo, ref, prompt, ` +
      "provider, model, baseUrl, plugins, maxSteps, timeoutS, maxCost",
      `amber: ${file}:6: 'prompt' is empty`,
      `amber: 3 jobs queued on ${redis.url} (queues: openai 1, default 2); 2 bad line(s) left out`,
    ]);

    await using store = await BatchStore.open(redis.url);
    assert.deepEqual(await store.queueNames(), ["default", "openai"]);
    const meta = await store.meta(batchId);
    assert.deepEqual([meta.jobs, meta.lines, meta.source], [3, [1, 3, 5], file]);
    // The job carries the batch, the line and the spec (a relative workspace made absolute
    // against the tasks file's folder), and nothing else.
    const job = await store.queue("openai").getJob(jobId(batchId, 1));
    assert.deepEqual(job?.data, {
      batchId,
      line: 1,
      spec: { workspace: join(dir, "proj"), prompt: "Fix it.", provider: "openai", maxSteps: 5 },
    });
    const repoJob = await store.queue("default").getJob(jobId(batchId, 5));
    assert.equal(queueName(repoJob!.data.spec), "default");

    const status = await amber("batch", "status", batchId, "--queue", redis.url, "--json");
    assert.equal(status.code, 0);
    const report = JSON.parse(status.out[0]);
    assert.equal(report.batch, batchId);
    assert.equal(report.cancelled, false);
    assert.deepEqual(report.counts, {
      total: 3,
      waiting: 3,
      active: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      unknown: 0,
    });
    // Without a batch id: every batch.
    const all = await amber("batch", "status", "--queue", redis.url);
    assert.equal(all.out[0], `${batchId}  ${file}  ${meta.submittedAt}\n  0/3 done: 3 waiting`);
    const json = await amber("batch", "status", "--queue", redis.url, "--json");
    assert.deepEqual(JSON.parse(json.out[0]).map((b: { batch: string }) => b.batch), [batchId]);

    // With --json, submit says the same as one JSON object.
    const again = await amber("batch", "submit", file, "--queue", redis.url, "--json");
    assert.equal(again.code, 1);
    const said = JSON.parse(again.out[0]);
    assert.notEqual(said.batch, batchId);
    assert.deepEqual({ ...said, batch: "" }, { batch: "", jobs: 3, badLines: 2 });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("results and retry: a failed job runs again and keeps its first transcript", async () => {
  await using redis = await startRedis();
  const dir = await Deno.makeTempDir();
  await using store = await BatchStore.open(redis.url);
  const workers = startWorkers(store, ["default"], (job, attempt) =>
    Promise.resolve(
      job.data.line === 2 && attempt === 1
        ? { status: "failed", exitCode: 1, answer: "", error: "the provider said no" }
        : { cost: 0.25, diff: "diff --git a/f b/f\n" },
    ));
  try {
    const file = await writeTasks(dir, [
      '{"workspace": "/a", "prompt": "One."}',
      '{"workspace": "/b", "prompt": "Two."}',
    ]);
    const { code, out } = await amber("batch", "submit", file, "--queue", redis.url);
    assert.equal(code, 0);
    const batchId = out[0];
    await until("one completed, one failed", async () => {
      const counts = await store.counts(batchId);
      // The outcome is stored a moment before BullMQ moves the job to its failed set.
      const state = await store.queue("default").getJobState(jobId(batchId, 2));
      return counts.completed === 1 && counts.failed === 1 && state === "failed"
        ? counts
        : undefined;
    });
    const status = await amber("batch", "status", batchId, "--queue", redis.url);
    assert.deepEqual(status.out.slice(1), ["  line 2 failed: the provider said no"]);
    assert.match(status.out[0], /\n {2}2\/2 done: 1 completed, 1 failed$/);

    const results = await amber("batch", "results", batchId, "--queue", redis.url);
    assert.equal(results.code, 0);
    const lines = results.out.map((line) => JSON.parse(line));
    assert.deepEqual(lines[0], {
      line: 1,
      status: "completed",
      answer: "answer 1",
      exit: 0,
      usage: { promptTokens: 10, completionTokens: 1 },
      cost: 0.25,
      diff: "diff --git a/f b/f\n",
      attempt: 1,
      transcript: '{"attempt":1}\n',
    });
    assert.equal(lines[1].status, "failed");
    assert.equal(lines[1].exit, 1);
    assert.equal(lines[1].error, "the provider said no");

    const retried = await amber("batch", "retry", batchId, "--queue", redis.url);
    assert.deepEqual(retried.out, [`batch ${batchId}: 1 failed job(s) queued again (lines 2)`]);
    await until("both completed", async () => {
      const counts = await store.counts(batchId);
      return counts.completed === 2 ? counts : undefined;
    });
    const again = await amber("batch", "retry", batchId, "--queue", redis.url);
    assert.deepEqual(again.out, [`batch ${batchId}: no failed jobs`]);

    // To a file: transcripts beside it, by line and attempt; the first attempt's is kept.
    const outFile = join(dir, "results.jsonl");
    const written = await amber(
      "batch",
      "results",
      batchId,
      "--queue",
      redis.url,
      "--out",
      outFile,
    );
    assert.deepEqual(written.out, []);
    assert.deepEqual(written.err, [`amber: 2 result(s) written to ${outFile}`]);
    const saved = (await Deno.readTextFile(outFile)).trimEnd().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.equal(saved.length, 2);
    const second = saved[1];
    assert.deepEqual([second.status, second.attempt, second.exit], ["completed", 2, 0]);
    assert.equal(second.transcriptFile, join(`${outFile}.d`, "line-2.attempt-2.jsonl"));
    assert.deepEqual(second.otherAttempts, [
      { attempt: 1, transcriptFile: join(`${outFile}.d`, "line-2.attempt-1.jsonl") },
    ]);
    assert.equal(
      await Deno.readTextFile(second.otherAttempts[0].transcriptFile),
      '{"attempt":1}\n',
    );
    assert.equal(await Deno.readTextFile(second.transcriptFile), '{"attempt":2}\n');
  } finally {
    await workers.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cancel takes waiting jobs off the queue and tells the running one to stop", async () => {
  await using redis = await startRedis();
  const dir = await Deno.makeTempDir();
  await using store = await BatchStore.open(redis.url);
  const started = Promise.withResolvers<void>();
  const cancels: string[] = [];
  const told = Promise.withResolvers<void>();
  const stop = await store.onCancel((batchId) => {
    cancels.push(batchId);
    told.resolve();
  });
  const workers = startWorkers(store, ["anthropic"], async () => {
    started.resolve();
    await told.promise;
    return { status: "cancelled", exitCode: 130, error: "the batch was cancelled" };
  });
  try {
    const file = await writeTasks(
      dir,
      [1, 2, 3].map((n) =>
        JSON.stringify({ workspace: "/w", prompt: `Task ${n}.`, provider: "anthropic" })
      ),
    );
    const batchId = (await amber("batch", "submit", file, "--queue", redis.url)).out[0];
    await started.promise;
    const cancelled = await amber("batch", "cancel", batchId, "--queue", redis.url);
    assert.equal(cancelled.code, 0);
    assert.deepEqual(cancelled.out, [
      `batch ${batchId} cancelled: 2 waiting job(s) taken off the queue, 1 running job(s) told ` +
      "to stop",
    ]);
    // The published cancel reaches subscribers a moment after the command returns.
    await told.promise;
    assert.deepEqual(cancels, [batchId]);
    assert.equal(await store.isCancelled(batchId), true);
    const counts = await until("all cancelled", async () => {
      const counts = await store.counts(batchId);
      return counts.cancelled === 3 ? counts : undefined;
    });
    assert.equal(counts.waiting + counts.active + counts.failed, 0);
    const status = await amber("batch", "status", batchId, "--queue", redis.url, "--json");
    assert.equal(JSON.parse(status.out[0]).cancelled, true);
    // A cancelled batch's jobs do not run again: retry says so and queues nothing.
    const retried = await amber("batch", "retry", batchId, "--queue", redis.url);
    assert.equal(retried.code, 1);
    assert.deepEqual(retried.out, []);
    assert.deepEqual(retried.err, [
      `amber: batch ${batchId} was cancelled, so its jobs do not run again; submit its tasks ` +
      "file again to rerun them",
    ]);
    assert.deepEqual(await store.counts(batchId), counts);
    const results = (await amber("batch", "results", batchId, "--queue", redis.url)).out
      .map((line) => JSON.parse(line));
    assert.deepEqual(results.map((r) => [r.line, r.status, r.exit]), [
      [1, "cancelled", 130],
      [2, "cancelled", undefined],
      [3, "cancelled", undefined],
    ]);
  } finally {
    await stop();
    await workers.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an outcome is stored once per job: a second attempt's is refused", async () => {
  await using redis = await startRedis();
  await using store = await BatchStore.open(redis.url);
  const outcome: JobOutcome = {
    batchId: "b1",
    line: 1,
    status: "completed",
    answer: "first",
    exitCode: 0,
    usage: { promptTokens: 1, completionTokens: 1 },
    diff: "",
    attempt: 1,
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T00:00:01.000Z",
  };
  assert.equal(await store.storeOutcome(outcome), true);
  assert.equal(await store.storeOutcome({ ...outcome, answer: "second", attempt: 2 }), false);
  assert.equal((await store.outcome("b1", 1))?.answer, "first");
  assert.deepEqual([await store.startAttempt("b1", 1), await store.startAttempt("b1", 1)], [1, 2]);
});

Deno.test("clear errors: unreachable Redis, unknown batch, bad URL, usage", async () => {
  await using redis = await startRedis();
  const dir = await Deno.makeTempDir();
  try {
    const unknown = await amber("batch", "results", "nope", "--queue", redis.url);
    assert.equal(unknown.code, 1);
    assert.deepEqual(unknown.err, [
      `amber: no batch 'nope' in ${redis.url} (\`amber batch status --queue ${redis.url}\` ` +
      "lists them)",
    ]);
    assert.equal((await amber("batch", "cancel", "a:b", "--queue", redis.url)).code, 1);

    // A port nothing listens on.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    const down = await amber("batch", "status", "--queue", `redis://127.0.0.1:${port}/2`);
    assert.equal(down.code, 1);
    assert.match(
      down.err[0],
      new RegExp(`^amber: cannot reach Redis at redis://127\\.0\\.0\\.1:${port}/2: .*ECONNREFUSED`),
    );

    const bad = await amber("batch", "status", "--queue", "http://127.0.0.1:1");
    assert.equal(bad.code, 2);
    assert.match(bad.err[0], /bad Redis URL 'http:\/\/127\.0\.0\.1:1': the scheme must be redis:/);

    const usage = [
      ["batch"],
      ["batch", "launch", "x"],
      ["batch", "results"],
      ["batch", "cancel", "a", "b"],
      ["batch", "submit", join(dir, "missing.jsonl")],
    ];
    for (const args of usage) {
      const ran = await amber(...args, "--queue", redis.url);
      assert.equal(ran.code, 2, args.join(" "));
    }

    // Only bad lines: nothing is queued, and no batch is made.
    const file = await writeTasks(dir, ['{"prompt": "p"}']);
    const none = await amber("batch", "submit", file, "--queue", redis.url);
    assert.equal(none.code, 1);
    assert.equal(none.err.at(-1), `amber: ${file}: no valid task; nothing queued`);
    await using store = await BatchStore.open(redis.url);
    assert.deepEqual(await store.batchIds(), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the amber process: submit with $AMBER_QUEUE, status, and no --queue at all", async () => {
  await using redis = await startRedis();
  const dir = await Deno.makeTempDir();
  try {
    const file = await writeTasks(dir, ['{"workspace": "/a", "prompt": "One."}']);
    const env = { AMBER_QUEUE: redis.url };
    const submitted = await runAmber(dir, ["batch", "submit", file], { env });
    assert.equal(submitted.code, 0, submitted.err);
    assert.match(submitted.out, /^\d{8}-\d{6}-[0-9a-f]{8}$/);
    assert.equal(submitted.err, `amber: 1 job queued on ${redis.url} (queues: default 1)`);
    const status = await runAmber(dir, ["batch", "status", submitted.out], { env });
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, /\n {2}0\/1 done: 1 waiting$/);
    const missing = await runAmber(dir, ["batch", "status"], { env: { AMBER_QUEUE: "" } });
    assert.equal(missing.code, 2);
    assert.equal(
      missing.err,
      "amber: amber batch status needs --queue redis://HOST:PORT/N (or $AMBER_QUEUE)",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
