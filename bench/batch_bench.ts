// Sessions as jobs on the queue: jobs per second through BullMQ on a real redis-server (started
// here on 127.0.0.1, nothing persisted), and what the queue adds per job beside running the same
// sessions in one process. The fake provider answers each model call at once with a short text,
// so a job is amber's own work: a temp config directory, the host and its plugins, one session
// turn, the workspace's before/after snapshot for the diff, the session file.
//
// queue:  `BatchStore.submit` of N jobs, then an in-process `BatchWorker` (concurrency C) runs
//         them; timed from the submit to the last outcome stored in Redis (one EXISTS over the
//         outcome keys every 5 ms). The worker is started once per concurrency, before timing.
// direct: the same N jobs through `runJob` in this process, C at a time; no Redis.
//
// The two alternate in every round (the order reversing each round) and the medians are printed:
// jobs per second each way, the queue's overhead per job, (queue - direct) / N, and at
// concurrency 1 the median time on the worker from one job's outcome to the next job's start.
//
// deno run -A bench/batch_bench.ts [--jobs=N] [--concurrency=1,4] [rounds]

import { makeBundledPlugins } from "@amber/plugins";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import type { JobSpec } from "../cli/batch/job_spec.ts";
import { batchKeys, QUEUES_KEY } from "../cli/batch/queue.ts";
import { runJob } from "../cli/batch/run_job.ts";
import { BatchStore } from "../cli/batch/store.ts";
import { BatchWorker } from "../cli/batch/worker.ts";
import { DEFAULT_WORKER_SETTINGS } from "../cli/batch/worker_settings.ts";
import { startRedis } from "../tests/batch/_redis.ts";
import { benchArgs, inOrder, median } from "./_cases.ts";

const args = benchArgs(5);
const JOBS = Number(args.option("jobs") ?? 40);
const CONCURRENCY = (args.option("concurrency") ?? "1,4").split(",").map(Number);
const KEY = "sk-bench";
// What tests/batch/_redis.ts starts.
const REDIS = Deno.env.get("REDIS_SERVER") ?? "redis-server";

// Everything runs in here, so that `deno task bench` (which finds this file too, without the
// permission to start a redis-server) can be told how to run it instead.
async function main(): Promise<void> {
  await using redis = await startRedis();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const workspace = await Deno.makeTempDir({ prefix: "amber-bench-ws-" });
  const configDir = await Deno.makeTempDir({ prefix: "amber-bench-config-" });
  await using store = await BatchStore.open(redis.url);

  const spec = (i: number): JobSpec => ({
    workspace,
    prompt: `job ${i}`,
    provider: "openai",
    model: "fake-model",
    baseUrl: `${server.url}/v1`,
  });
  // The fake provider is on loopback, which a worker sends its key to only when listed.
  const allowBaseUrls = [server.url];
  const answer = (count: number) => {
    for (let i = 0; i < count; i++) server.script({ text: "done" });
  };

  // Submits N jobs and waits for every outcome; resolves to the milliseconds taken, and the gaps
  // between one job's end and the next one's start on the worker (its outcomes' times, in ms).
  async function throughQueue(): Promise<{ ms: number; gaps: number[] }> {
    answer(JOBS);
    const tasks = Array.from({ length: JOBS }, (_, i) => ({ line: i + 1, spec: spec(i) }));
    const started = performance.now();
    const meta = await store.submit(tasks, "bench.jsonl");
    const keys = batchKeys(meta.id);
    const outcomes = tasks.map((task) => keys.outcome(task.line));
    while (await store.redis.exists(...outcomes) < JOBS) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const ms = performance.now() - started;
    const times = (await Promise.all(tasks.map((task) => store.outcome(meta.id, task.line))))
      .map((outcome) => [Date.parse(outcome!.startedAt), Date.parse(outcome!.finishedAt)])
      .sort((a, b) => a[0] - b[0]);
    return { ms, gaps: times.slice(1).map(([start], i) => start - times[i][1]) };
  }

  // The same jobs in this process, `concurrency` at a time.
  async function direct(concurrency: number): Promise<number> {
    answer(JOBS);
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < JOBS) {
        const i = next++;
        await runJob(spec(i), {
          plugins: makeBundledPlugins,
          configDir,
          env: () => KEY,
          allowBaseUrls,
        });
      }
    }));
    return performance.now() - started;
  }

  console.log(
    `batch: ${JOBS} jobs per run, ${args.rounds} rounds, fake provider answering at once ` +
      `(Deno ${Deno.version.deno})`,
  );
  // The queue's name exists once a batch used it; the worker takes from it from its start.
  await store.redis.sadd(QUEUES_KEY, "openai");
  for (const concurrency of CONCURRENCY) {
    const worker = await BatchWorker.start({
      url: redis.url,
      concurrency,
      configDir,
      plugins: makeBundledPlugins,
      name: "bench",
      env: () => KEY,
      settings: { ...DEFAULT_WORKER_SETTINGS, allowBaseUrls },
    });
    // One run each way first, thrown away: module loading and the JIT.
    await throughQueue();
    await direct(concurrency);
    const times: { queue: number[]; direct: number[] } = { queue: [], direct: [] };
    const gaps: number[] = [];
    for (let round = 0; round < args.rounds; round++) {
      for (const which of inOrder(round, ["queue", "direct"] as const)) {
        if (which === "direct") {
          times.direct.push(await direct(concurrency));
          continue;
        }
        const run = await throughQueue();
        times.queue.push(run.ms);
        gaps.push(...run.gaps);
      }
    }
    await worker.close();
    const queue = median(times.queue);
    const inProcess = median(times.direct);
    console.log(
      `  concurrency ${concurrency}: queue ${(JOBS / queue * 1000).toFixed(1)} jobs/s ` +
        `(${(queue / JOBS).toFixed(1)} ms/job), direct ${(JOBS / inProcess * 1000).toFixed(1)} ` +
        `jobs/s (${(inProcess / JOBS).toFixed(1)} ms/job); the queue adds ` +
        `${((queue - inProcess) / JOBS).toFixed(1)} ms/job (x${(queue / inProcess).toFixed(2)})` +
        // One job after another: the worker's time from storing an outcome to starting the next.
        (concurrency === 1 ? `; between jobs on the worker ${median(gaps)} ms (median)` : ""),
    );
  }
  await Deno.remove(workspace, { recursive: true });
  await Deno.remove(configDir, { recursive: true });
}

if (Deno.permissions.querySync({ name: "run", command: REDIS }).state === "granted") {
  await main();
} else {
  console.log("bench/batch_bench.ts starts a redis-server: deno run -A bench/batch_bench.ts");
}
