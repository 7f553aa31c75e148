/**
 * `amber batch`: sessions as jobs on a BullMQ queue in Redis, run by `amber worker`s anywhere.
 * `submit` queues one job per line of a JSON Lines tasks file (a bad line is reported by its
 * number and the others go on), `status` counts where a batch's jobs are, `results` writes one
 * JSON line per job, `cancel` takes waiting jobs off the queue and tells the workers to stop the
 * running ones, `retry` queues the failed ones again. The queue is `--queue redis://HOST:PORT/N`,
 * else `$AMBER_QUEUE`.
 *
 * @module
 */

import { dirname, isAbsolute, join, resolve } from "node:path";
import { UsageError } from "../args.ts";
import { type ParsedTask, parseTasks } from "../batch/job_spec.ts";
import { loadQueueModule } from "../batch/load_queue_module.ts";
import { countStates, queueName, RedisUrlError } from "../batch/queue.ts";
import { describeCounts, progressBar, resultLine, type TranscriptRef } from "../batch/report.ts";
import type { BatchStore } from "../batch/store.ts";
import type { CliCommand, CommandContext, Io } from "../command.ts";

const USAGE = "usage: amber batch submit FILE | status [BATCH] | results BATCH [--out FILE] | " +
  "cancel BATCH | retry BATCH, with --queue redis://HOST:PORT/N (or $AMBER_QUEUE)";

/** `amber batch`. */
export const batchCommand: CliCommand = {
  name: "batch",
  usage: `  batch submit FILE               queue one session per line of a JSONL tasks file (keys:
                                  workspace or repo+ref, prompt, provider, model, baseUrl,
                                  plugins, maxSteps, timeoutS, maxCost); prints the batch id
  batch status [BATCH] [--json]   where a batch's jobs are (every batch without BATCH)
  batch results BATCH [--out F]   one JSON line per job: status, answer, exit, usage, cost,
                                  diff, transcript (with --out, transcripts go to F.d/)
  batch cancel BATCH              take waiting jobs off the queue, stop the running ones
  batch retry BATCH               queue the failed jobs again (not of a cancelled batch)
      --queue redis://HOST:PORT/N the queue's Redis (else $AMBER_QUEUE)`,
  options: ["queue", "out"],
  flags: ["json"],
  run,
};

// Where the user typed the command: `deno task amber` runs in the repository and says where
// the user was in INIT_CWD.
const userDir = () => Deno.env.get("INIT_CWD") ?? Deno.cwd();

async function run(context: CommandContext): Promise<number> {
  const [verb, ...rest] = context.words;
  const url = context.parsed.options.get("queue") ?? Deno.env.get("AMBER_QUEUE");
  if (verb === undefined) throw new UsageError(USAGE);
  const arity: Record<string, [number, number]> = {
    submit: [1, 1],
    status: [0, 1],
    results: [1, 1],
    cancel: [1, 1],
    retry: [1, 1],
  };
  const [least, most] = arity[verb] ?? [-1, -1];
  if (least < 0) throw new UsageError(`unknown batch command '${verb}'; ${USAGE}`);
  if (rest.length < least || rest.length > most) throw new UsageError(USAGE);
  if (url === undefined || url === "") {
    throw new UsageError(`amber batch ${verb} needs --queue redis://HOST:PORT/N (or $AMBER_QUEUE)`);
  }
  const store = await loadQueueModule<typeof import("../batch/store.ts")>("./batch/store.ts");
  try {
    // A file with no valid line is said before anything connects.
    const tasks = verb === "submit" ? await readTasks(rest[0], context.io) : undefined;
    if (tasks !== undefined && tasks.valid.length === 0) {
      context.io.err(`amber: ${rest[0]}: no valid task; nothing queued`);
      return 1;
    }
    const opened = await store.BatchStore.open(url);
    try {
      if (tasks !== undefined) return await submit(opened, rest[0], tasks, context);
      if (verb === "status") return await status(opened, rest[0], context);
      if (verb === "results") return await results(opened, rest[0], context);
      if (verb === "cancel") return await cancel(opened, rest[0], context.io);
      return await retry(opened, rest[0], context.io);
    } finally {
      await opened.close();
    }
  } catch (error) {
    if (error instanceof RedisUrlError) throw new UsageError(error.message);
    if (error instanceof store.RedisUnreachableError || error instanceof store.UnknownBatchError) {
      context.io.err(`amber: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

interface ReadTasks {
  readonly valid: readonly ParsedTask[];
  readonly bad: number;
}

// The tasks file's lines: the bad ones said on stderr, a relative workspace made absolute
// against the file's folder (where its author meant it).
async function readTasks(file: string, io: Io): Promise<ReadTasks> {
  const path = resolve(userDir(), file);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw new UsageError(`${file}: no such file`);
    throw error;
  }
  const { tasks, errors } = parseTasks(text, file);
  for (const error of errors) io.err(`amber: ${error.message}`);
  const valid = tasks.map((task) => {
    const workspace = task.spec.workspace;
    if (workspace === undefined || isAbsolute(workspace)) return task;
    return { ...task, spec: { ...task.spec, workspace: resolve(dirname(path), workspace) } };
  });
  return { valid, bad: errors.length };
}

async function submit(
  store: BatchStore,
  file: string,
  tasks: ReadTasks,
  context: CommandContext,
): Promise<number> {
  const meta = await store.submit(tasks.valid, file);
  const perQueue = new Map<string, number>();
  for (const task of tasks.valid) {
    const name = queueName(task.spec);
    perQueue.set(name, (perQueue.get(name) ?? 0) + 1);
  }
  if (context.parsed.switches.has("json")) {
    context.io.out(JSON.stringify({ batch: meta.id, jobs: meta.jobs, badLines: tasks.bad }));
  } else {
    const queues = [...perQueue].map(([name, count]) => `${name} ${count}`).join(", ");
    context.io.out(meta.id);
    context.io.err(
      `amber: ${meta.jobs} job${meta.jobs === 1 ? "" : "s"} queued on ${store.target.display} ` +
        `(queues: ${queues})` + (tasks.bad > 0 ? `; ${tasks.bad} bad line(s) left out` : ""),
    );
  }
  return tasks.bad > 0 ? 1 : 0;
}

async function status(
  store: BatchStore,
  batchId: string | undefined,
  context: CommandContext,
): Promise<number> {
  const json = context.parsed.switches.has("json");
  const ids = batchId === undefined ? await store.batchIds() : [batchId];
  const reports = [];
  for (const id of ids) {
    const meta = await store.meta(id);
    const jobs = await store.jobs(id);
    const counts = countStates(jobs);
    const failed = jobs.filter((job) => job.state === "failed").map((job) => ({
      line: job.line,
      error: job.outcome?.error ?? job.failedReason ?? `exit ${job.outcome?.exitCode}`,
    }));
    reports.push({ meta, counts, cancelled: await store.isCancelled(id), failed });
  }
  if (json) {
    const shaped = reports.map((r) => ({
      batch: r.meta.id,
      submittedAt: r.meta.submittedAt,
      source: r.meta.source,
      cancelled: r.cancelled,
      counts: r.counts,
      failed: r.failed,
    }));
    context.io.out(JSON.stringify(batchId === undefined ? shaped : shaped[0]));
    return 0;
  }
  if (reports.length === 0) {
    context.io.out(`no batches in ${store.target.display}`);
    return 0;
  }
  const terminal = Deno.stdout.isTerminal();
  for (const { meta, counts, cancelled, failed } of reports) {
    const head = `${meta.id}  ${meta.source}  ${meta.submittedAt}${cancelled ? "  cancelled" : ""}`;
    const bar = terminal
      ? progressBar(counts, Math.min(40, Math.max(10, context.width - 60)))
      : describeCounts(counts);
    context.io.out(`${head}\n  ${bar}`);
    if (batchId !== undefined) {
      for (const { line, error } of failed) context.io.out(`  line ${line} failed: ${error}`);
    }
  }
  return 0;
}

async function results(
  store: BatchStore,
  batchId: string,
  context: CommandContext,
): Promise<number> {
  const out = context.parsed.options.get("out");
  const target = out === undefined ? undefined : resolve(userDir(), out);
  const folder = target === undefined ? undefined : `${target}.d`;
  if (folder !== undefined) await Deno.mkdir(folder, { recursive: true });
  const lines: string[] = [];
  let unfinished = 0;
  for (const record of await store.jobs(batchId)) {
    if (record.state === "waiting" || record.state === "active") unfinished++;
    const line = await resultLine(record, async (attempt): Promise<TranscriptRef | undefined> => {
      const text = await store.transcript(batchId, record.line, attempt);
      if (text === "") return undefined;
      if (folder === undefined) return { attempt, transcript: text };
      const file = join(folder, `line-${record.line}.attempt-${attempt}.jsonl`);
      await Deno.writeTextFile(file, text);
      return { attempt, transcriptFile: file };
    });
    lines.push(JSON.stringify(line));
  }
  if (target === undefined) {
    for (const line of lines) context.io.out(line);
  } else {
    await Deno.writeTextFile(target, lines.map((line) => `${line}\n`).join(""));
    context.io.err(`amber: ${lines.length} result(s) written to ${out}`);
  }
  if (unfinished > 0) context.io.err(`amber: ${unfinished} job(s) not finished yet`);
  return 0;
}

async function cancel(store: BatchStore, batchId: string, io: Io): Promise<number> {
  const { removed, running } = await store.cancel(batchId);
  io.out(
    `batch ${batchId} cancelled: ${removed.length} waiting job(s) taken off the queue, ` +
      `${running.length} running job(s) told to stop`,
  );
  return 0;
}

async function retry(store: BatchStore, batchId: string, io: Io): Promise<number> {
  // A worker cancels a cancelled batch's jobs as it takes them: queued again, they would only be
  // cancelled once more.
  if (await store.isCancelled(batchId)) {
    io.err(
      `amber: batch ${batchId} was cancelled, so its jobs do not run again; ` +
        "submit its tasks file again to rerun them",
    );
    return 1;
  }
  const lines = await store.retry(batchId);
  io.out(
    lines.length === 0
      ? `batch ${batchId}: no failed jobs`
      : `batch ${batchId}: ${lines.length} failed job(s) queued again (lines ${lines.join(", ")})`,
  );
  return 0;
}
