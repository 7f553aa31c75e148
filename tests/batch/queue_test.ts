// The pure half of the batch contract: Redis URLs, names and ids, keys, and how a batch is shown.

import assert from "node:assert/strict";
import {
  BATCH_ID,
  batchKeys,
  jobId,
  newBatchId,
  parseRedisUrl,
  queueName,
  RedisUrlError,
} from "../../cli/batch/queue.ts";
import { describeCounts, progressBar, resultLine } from "../../cli/batch/report.ts";
import type { JobOutcome } from "../../cli/batch/queue.ts";

Deno.test("parseRedisUrl: host, port, database; defaults; the password never displayed", () => {
  assert.deepEqual(parseRedisUrl("redis://127.0.0.1:6390/4"), {
    display: "redis://127.0.0.1:6390/4",
    host: "127.0.0.1",
    port: 6390,
    db: 4,
    tls: false,
  });
  const plain = parseRedisUrl("redis://queue.internal");
  assert.deepEqual([plain.port, plain.db, plain.display], [6379, 0, "redis://queue.internal/0"]);
  const secured = parseRedisUrl("rediss://amber:s%40cret@10.0.0.5:6380/1");
  assert.equal(secured.tls, true);
  assert.equal(secured.username, "amber");
  assert.equal(secured.password, "s@cret");
  assert.equal(secured.display, "rediss://amber@10.0.0.5:6380/1");
  assert.equal(parseRedisUrl("redis://[::1]:7000/0").host, "::1");
});

Deno.test("parseRedisUrl: a bad URL says what is wrong and what is expected", () => {
  const cases: [string, RegExp][] = [
    ["127.0.0.1:6379", /not a URL|scheme/],
    ["http://127.0.0.1:6379/0", /the scheme must be redis: or rediss:, not http:/],
    ["redis://127.0.0.1:6379/queue", /the path must be a database number, not '\/queue'/],
    ["redis://127.0.0.1:99999/0", /not a URL/],
    ["redis://127.0.0.1:6379/0?x=1", /a query or fragment is not understood/],
  ];
  for (const [url, why] of cases) {
    assert.throws(() => parseRedisUrl(url), (error: unknown) => {
      assert.ok(error instanceof RedisUrlError, url);
      assert.equal(error.name, "RedisUrlError");
      assert.match(error.message, why, url);
      assert.match(error.message, /expected redis:\/\/HOST:PORT\/N/);
      return true;
    });
  }
});

Deno.test("queue names, batch ids and job ids", () => {
  assert.equal(queueName({ workspace: "/a", prompt: "p", provider: "openai" }), "openai");
  assert.equal(queueName({ workspace: "/a", prompt: "p" }), "default");
  const first = newBatchId(new Date("2026-01-02T03:04:05Z"));
  assert.match(first, /^20260102-030405-[0-9a-f]{8}$/);
  assert.ok(BATCH_ID.test(first));
  assert.notEqual(first, newBatchId(new Date("2026-01-02T03:04:05Z")));
  assert.ok(!BATCH_ID.test("a:b") && !BATCH_ID.test("") && !BATCH_ID.test("../x"));
  // BullMQ refuses ids with ':' and ids that are only digits.
  const id = jobId(first, 12);
  assert.ok(!id.includes(":") && !/^\d+$/.test(id));
  const keys = batchKeys(first);
  assert.equal(keys.meta, `amber:batch:${first}:meta`);
  assert.notEqual(keys.outcome(1), keys.outcome(11));
  assert.notEqual(keys.transcript(1, 12), keys.transcript(11, 2));
});

Deno.test("describeCounts and progressBar", () => {
  const counts = {
    total: 10,
    waiting: 3,
    active: 2,
    completed: 4,
    failed: 1,
    cancelled: 0,
    unknown: 0,
  };
  assert.equal(describeCounts(counts), "5/10 done: 4 completed, 1 failed, 2 active, 3 waiting");
  assert.equal(progressBar(counts, 10), `[█████▒▒   ] ${describeCounts(counts)}`);
  const empty = { ...counts, total: 0, waiting: 0, active: 0, completed: 0, failed: 0 };
  assert.equal(progressBar(empty, 4), "[    ] 0/0 done");
  const done = { ...counts, waiting: 0, active: 0, completed: 10, failed: 0 };
  assert.equal(progressBar(done, 4), "[████] 10/10 done: 10 completed");
});

Deno.test("resultLine: the outcome's transcript apart from the other attempts'", async () => {
  const outcome: JobOutcome = {
    batchId: "b",
    line: 2,
    status: "completed",
    answer: "done",
    exitCode: 0,
    usage: { promptTokens: 10, completionTokens: 2 },
    cost: 0.01,
    diff: "diff --git a/x b/x\n",
    attempt: 2,
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T00:00:01.000Z",
  };
  const line = await resultLine(
    { line: 2, state: "completed", outcome, attempts: 3 },
    (attempt) =>
      Promise.resolve(attempt === 3 ? undefined : { attempt, transcript: `t${attempt}` }),
  );
  assert.deepEqual(line, {
    line: 2,
    status: "completed",
    answer: "done",
    exit: 0,
    usage: { promptTokens: 10, completionTokens: 2 },
    cost: 0.01,
    diff: "diff --git a/x b/x\n",
    attempt: 2,
    transcript: "t2",
    otherAttempts: [{ attempt: 1, transcript: "t1" }],
  });
  const failed = await resultLine(
    { line: 5, state: "failed", attempts: 0, failedReason: "bad payload" },
    () => Promise.resolve(undefined),
  );
  assert.deepEqual(failed, { line: 5, status: "failed", error: "bad payload" });
});
