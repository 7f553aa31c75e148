/**
 * `amber worker --queue redis://HOST:PORT/N` (or `$AMBER_QUEUE`): runs the jobs of
 * `amber batch submit`, on as many machines as there are workers. Each job is one session with
 * its own workspace and config directory (see `batch/run_job.ts`); the provider keys are this
 * machine's environment's, sent only to a provider's own base URL or one `batch.yaml` allows
 * (see `batch/base_url_policy.ts`). The worker takes from every provider's queue, N sessions at
 * once per queue, within the rate limits of `batch.yaml` in the config directory (see
 * `batch/worker_settings.ts`).
 *
 * Ctrl-C or SIGTERM stops taking jobs and lets the running sessions end (their outcomes are
 * stored); a second one cancels them (each commits what it did) and puts their jobs back on the
 * queue for another worker. SIGINTs within 300 ms of a counted one are its echo (one Ctrl-C under
 * `deno task` arrives twice) and do not count. Exit 0 after a stop by signal.
 *
 * @module
 */

import { configDir as defaultConfigDir } from "@amber/core";
import { intOption, UsageError } from "../args.ts";
import { readWorkerSettings } from "../batch/worker_settings.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { loadQueueModule } from "../batch/load_queue_module.ts";
import { InterruptPresses } from "../interrupt_presses.ts";

/** `amber worker`. */
export const workerCommand: CliCommand = {
  name: "worker",
  usage: `  worker --queue redis://HOST:PORT/N
                                  run the jobs of \`amber batch\`: one session per job, each in
                                  its own workspace; keys from this machine's environment
      [--concurrency N]           sessions at once per provider queue (default 1)
      [--approve auto|deny]       tools that need approval: allow (default) or refuse
      [--name NAME]               what outcomes name as their worker (default host:pid)`,
  options: ["queue", "concurrency", "approve", "name"],
  run,
};

async function run(context: CommandContext): Promise<number> {
  const { io, parsed } = context;
  const usage = "usage: amber worker --queue redis://HOST:PORT/N [--concurrency N]";
  if (context.words.length > 0) throw new UsageError(usage);
  const url = parsed.options.get("queue") ?? Deno.env.get("AMBER_QUEUE") ?? "";
  if (url === "") throw new UsageError(`--queue (or $AMBER_QUEUE) is required; ${usage}`);
  const concurrency = intOption(parsed, "concurrency", 1);
  const approve = parsed.options.get("approve") ?? "auto";
  if (approve !== "auto" && approve !== "deny") {
    throw new UsageError(`--approve must be auto or deny, got '${approve}'`);
  }
  const configDir = context.configDir ?? defaultConfigDir(Deno.env.toObject());
  const settings = await readWorkerSettings(configDir);
  const name = parsed.options.get("name") ?? `${await hostName()}:${Deno.pid}`;
  // BullMQ and its Redis client load only when a worker starts, not for `amber --help`.
  const { BatchWorker } = await loadQueueModule<typeof import("../batch/worker.ts")>(
    "./batch/worker.ts",
  );
  const worker = await BatchWorker.start({
    url,
    concurrency,
    configDir,
    plugins: context.plugins,
    approve,
    settings,
    name,
    log: (line) => io.err(`amber worker: ${line}`),
  });
  io.err(`amber worker: ${name} on ${url}, ${concurrency} at once per queue (Ctrl-C stops)`);
  if (settings.allowBaseUrls.length > 0) {
    io.err(
      `amber worker: jobs may also name these base URLs: ${settings.allowBaseUrls.join(", ")}`,
    );
  }
  const { promise: stopped, resolve } = Promise.withResolvers<void>();
  let signals = 0;
  // One Ctrl-C under `deno task` arrives twice; counted twice, it would cancel the sessions it
  // meant to let end. A SIGTERM is always meant.
  const presses = new InterruptPresses();
  const onSignal = (signal: "SIGINT" | "SIGTERM") => {
    if (signal === "SIGINT" && !presses.signal()) return;
    signals++;
    if (signals === 1) {
      io.err(
        `amber worker: taking no more jobs; ${worker.running} running ` +
          "(again to cancel them and put them back on the queue)",
      );
      worker.close().then(resolve, resolve);
    } else if (signals === 2) {
      io.err("amber worker: cancelling the running sessions");
      worker.close({ stop: true }).then(resolve, resolve);
    }
  };
  const listening = (["SIGINT", "SIGTERM"] as const).flatMap((signal) => {
    const listener = () => onSignal(signal);
    try {
      Deno.addSignalListener(signal, listener);
      return [{ signal, listener }];
    } catch {
      // Not a signal this system offers.
      return [];
    }
  });
  await stopped;
  for (const { signal, listener } of listening) Deno.removeSignalListener(signal, listener);
  io.err("amber worker: stopped");
  return 0;
}

// The machine's name without `--allow-sys`: $HOSTNAME when the shell exported it, else the
// file most Linux systems keep it in.
async function hostName(): Promise<string> {
  const fromEnv = Deno.env.get("HOSTNAME")?.trim();
  if (fromEnv) return fromEnv;
  try {
    return (await Deno.readTextFile("/etc/hostname")).trim() || "worker";
  } catch {
    return "worker";
  }
}
