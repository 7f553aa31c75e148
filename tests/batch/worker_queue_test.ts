// The worker against a real redis-server, in this process (cli/batch/worker.ts): a bad payload
// fails only its own job, a batch cancel reaches a running session, a provider's rate limit
// spaces the jobs' starts, and a worker stopped mid-job puts the job back for another one, the
// stopped attempt's transcript kept beside the next.

import assert from "node:assert/strict";
import { join } from "node:path";
import { makeBundledPlugins } from "@amber/plugins";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { JOB_NAME, type JobData, jobId } from "../../cli/batch/queue.ts";
import { BatchStore } from "../../cli/batch/store.ts";
import { BatchWorker, type BatchWorkerOptions } from "../../cli/batch/worker.ts";
import { DEFAULT_WORKER_SETTINGS } from "../../cli/batch/worker_settings.ts";
import { startRedis } from "./_redis.ts";

const KEY = "sk-worker-queue-test-key";

async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function setUp() {
  const redis = await startRedis();
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const store = await BatchStore.open(redis.url);
  const workspace = await Deno.makeTempDir();
  const configDir = await Deno.makeTempDir();
  const workers: BatchWorker[] = [];
  // The fake provider is on loopback: the worker lists it (base_url_policy.ts).
  const settings = { ...DEFAULT_WORKER_SETTINGS, allowBaseUrls: [server.url] };
  const options: BatchWorkerOptions = {
    url: redis.url,
    concurrency: 1,
    configDir,
    plugins: makeBundledPlugins,
    name: "test-worker",
    env: () => KEY,
    queuePollMs: 100,
    settings,
  };
  const spec = (prompt: string) => ({
    workspace,
    prompt,
    provider: "openai",
    model: "fake-model",
    baseUrl: `${server.url}/v1`,
  });
  return {
    server,
    store,
    settings,
    spec,
    submit: (...prompts: string[]) =>
      store.submit(prompts.map((prompt, i) => ({ line: i + 1, spec: spec(prompt) })), "t.jsonl"),
    worker: async (extra: Partial<BatchWorkerOptions> = {}) => {
      const worker = await BatchWorker.start({ ...options, ...extra });
      workers.push(worker);
      return worker;
    },
    [Symbol.asyncDispose]: async () => {
      for (const worker of workers) await worker.close({ stop: true });
      await store.close();
      await server.close();
      await redis.stop();
      await Deno.remove(workspace, { recursive: true });
      await Deno.remove(configDir, { recursive: true });
    },
  };
}

Deno.test("a bad payload fails its job with a clear error; the others run", async () => {
  await using t = await setUp();
  t.server.script({ text: "one" }, { text: "two" });
  const meta = await t.submit("first", "second");
  const queue = t.store.queue("openai");
  // A payload no submit writes: an empty prompt; and one with no batch at all.
  await queue.add(
    JOB_NAME,
    { batchId: meta.id, line: 7, spec: { ...t.spec("x"), prompt: " " } },
    { jobId: jobId(meta.id, 7) },
  );
  await queue.add(JOB_NAME, { spec: t.spec("y") } as unknown as JobData, { jobId: "stray" });
  await t.worker();
  const outcomes = await until("every outcome", async () => {
    const found = await Promise.all([1, 2, 7].map((line) => t.store.outcome(meta.id, line)));
    return found.every((outcome) => outcome !== undefined) ? found : undefined;
  });
  assert.deepEqual(outcomes.map((outcome) => outcome!.status), [
    "completed",
    "completed",
    "failed",
  ]);
  assert.deepEqual(outcomes.map((outcome) => outcome!.answer).slice(0, 2).sort(), ["one", "two"]);
  assert.equal(outcomes[2]!.error, "bad job payload: 'prompt' is empty");
  const failed = await until("the failed jobs", async () => {
    const bad = await queue.getJob(jobId(meta.id, 7));
    const stray = await queue.getJob("stray");
    return bad?.failedReason && stray?.failedReason ? [bad, stray] : undefined;
  });
  assert.equal(failed[0].failedReason, "bad job payload: 'prompt' is empty");
  assert.equal(failed[1].failedReason, "bad job payload: the job's data has no batch id and line");
  assert.equal(t.server.chats.length, 2);
});

Deno.test("a batch cancel reaches a running session, which commits", async () => {
  await using t = await setUp();
  t.server.script({ text: "late", fault: { kind: "slowFirstByte", delayMs: 30_000 } });
  const meta = await t.submit("wait");
  await t.worker();
  await until("the job to run", () => t.server.chats.length > 0 || undefined);
  const started = Date.now();
  const summary = await t.store.cancel(meta.id);
  assert.deepEqual(summary.running, [1]);
  const outcome = await until("the outcome", () => t.store.outcome(meta.id, 1));
  assert.ok(Date.now() - started < 10_000);
  assert.equal(outcome.status, "cancelled");
  assert.equal(outcome.exitCode, 130);
  assert.equal(outcome.error, "cancelled");
  assert.match(await t.store.transcript(meta.id, 1, 1), /"end":"cancelled"/);
  const state = await until("BullMQ's state", async () => {
    const state = await t.store.queue("openai").getJobState(jobId(meta.id, 1));
    return state === "completed" ? state : undefined;
  });
  assert.equal(state, "completed");
});

Deno.test("a provider's rate limit spaces the starts of its jobs across the queue", async () => {
  await using t = await setUp();
  t.server.script({ text: "a" }, { text: "b" }, { text: "c" });
  const meta = await t.submit("a", "b", "c");
  await t.worker({
    concurrency: 3,
    settings: { ...t.settings, rateLimits: { openai: { max: 1, durationMs: 700 } } },
  });
  const outcomes = await until("three outcomes", async () => {
    const found = await Promise.all([1, 2, 3].map((line) => t.store.outcome(meta.id, line)));
    return found.every((outcome) => outcome !== undefined) ? found : undefined;
  });
  const starts = outcomes.map((outcome) => Date.parse(outcome!.startedAt)).sort((a, b) => a - b);
  assert.ok(starts[1] - starts[0] >= 600, `${starts[1] - starts[0]} ms apart`);
  assert.ok(starts[2] - starts[1] >= 600, `${starts[2] - starts[1]} ms apart`);
});

Deno.test("a worker stopped mid-job puts it back; the next attempt runs it", async () => {
  await using t = await setUp();
  t.server.script(
    { text: "never", fault: { kind: "slowFirstByte", delayMs: 30_000 } },
    { text: "second attempt" },
  );
  const meta = await t.submit("work");
  const first = await t.worker({ name: "first" });
  await until("the first attempt", () => t.server.chats.length > 0 || undefined);
  await first.close({ stop: true });
  assert.equal(await t.store.outcome(meta.id, 1), undefined);
  assert.equal(await t.store.queue("openai").getJobState(jobId(meta.id, 1)), "waiting");
  await t.worker({ name: "second" });
  const outcome = await until("the outcome", () => t.store.outcome(meta.id, 1));
  assert.deepEqual(
    [outcome.status, outcome.answer, outcome.attempt, outcome.worker],
    ["completed", "second attempt", 2, "second"],
  );
  // The stopped attempt's transcript is kept beside the one that finished.
  assert.match(await t.store.transcript(meta.id, 1, 1), /"end":"cancelled"/);
  assert.match(await t.store.transcript(meta.id, 1, 2), /second attempt/);
});

Deno.test("a worker's job data in Redis names no key, and outcomes hold the diff", async () => {
  await using t = await setUp();
  t.server.script(
    { toolCalls: [{ name: "write", arguments: { path: "out.txt", content: "made\n" } }] },
    { text: "Wrote it." },
  );
  const meta = await t.submit("write out.txt");
  await t.worker();
  const outcome = await until("the outcome", () => t.store.outcome(meta.id, 1));
  assert.match(outcome.diff, /\+\+\+ b\/out\.txt\n@@ -0,0 \+1 @@\n\+made/);
  const job = await t.store.queue("openai").getJob(jobId(meta.id, 1));
  assert.deepEqual(Object.keys(job!.data).sort(), ["batchId", "line", "spec"]);
  assert.ok(!JSON.stringify(job!.data).includes(KEY));
  assert.equal(await Deno.readTextFile(join(t.spec("").workspace, "out.txt")), "made\n");
});

Deno.test("a job naming a base URL the worker does not allow fails; nothing reaches it", async () => {
  await using t = await setUp();
  await using collector = await FakeProvider.start({ encoders: [openaiEncoder] });
  collector.script({ text: "got the key" });
  t.server.script({ text: "listed" });
  const meta = await t.store.submit([
    { line: 1, spec: { ...t.spec("unlisted"), baseUrl: `${collector.url}/v1` } },
    { line: 2, spec: t.spec("listed") },
  ], "t.jsonl");
  const log: string[] = [];
  await t.worker({ log: (line) => log.push(line) });
  const [unlisted, listed] = await until("both outcomes", async () => {
    const found = await Promise.all([1, 2].map((line) => t.store.outcome(meta.id, line)));
    return found.every((outcome) => outcome !== undefined) ? found : undefined;
  });
  assert.equal(unlisted?.status, "failed");
  assert.match(unlisted?.error ?? "", /baseUrl 'http:\/\/127\.0\.0\.1:\d+\/v1' is not allowed/);
  assert.match(unlisted?.error ?? "", /to allowBaseUrls in .*batch\.yaml/);
  assert.deepEqual(collector.requests, []);
  // The worker's log says why, as status does.
  assert.ok(
    log.includes(`job ${jobId(meta.id, 1)}: failed (exit 1): ${unlisted?.error}`),
    log.join("\n"),
  );
  assert.equal(listed?.status, "completed");
  assert.equal(t.server.chats[0].headers.authorization, `Bearer ${KEY}`);
});
