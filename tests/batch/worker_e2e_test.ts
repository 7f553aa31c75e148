// The end to end: a real redis-server on 127.0.0.1, `amber worker` subprocesses, twenty
// jobs submitted with `amber batch submit` on amber's fake provider, one worker killed with
// SIGKILL in the middle of its jobs. BullMQ's stall check puts them back and the other workers
// run them; every job ends exactly once, with one outcome; the dead attempts' transcripts are
// kept beside the new ones; `amber batch results` collects everything; and no provider key is
// anywhere in Redis. The killed worker's jobs are back within the window docs/batch.md gives:
// between half a lock and a lock plus a stall check after the kill.

import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { BatchStore } from "../../cli/batch/store.ts";
import { MAIN, PERMISSIONS, runAmber } from "../cli/_subprocess.ts";
import { startRedis } from "./_redis.ts";

const KEY = "sk-e2e-worker-key-0123456789";
const JOBS = 20;

// An `amber worker` subprocess whose stderr lines are kept, to wait on.
class WorkerProcess {
  readonly lines: string[] = [];
  readonly #child: Deno.ChildProcess;
  readonly #done: Promise<void>;

  constructor(name: string, url: string, configDir: string, tmpDir: string) {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSIONS, MAIN, "worker", "--queue", url, "--concurrency", "2"]
        .concat(["--name", name]),
      env: { NO_COLOR: "1", AMBER_CONFIG_DIR: configDir, OPENAI_API_KEY: KEY, TMPDIR: tmpDir },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    this.#child = child;
    this.#done = (async () => {
      let rest = "";
      for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) {
        const parts = (rest + text).split("\n");
        rest = parts.pop()!;
        this.lines.push(...parts);
      }
      if (rest !== "") this.lines.push(rest);
    })();
  }

  async waitFor(pattern: RegExp, ms = 60_000): Promise<string> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const line = this.lines.find((line) => pattern.test(line));
      if (line !== undefined) return line;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no line like ${pattern} in:\n${this.lines.join("\n")}`);
  }

  // The ids of the jobs it started and of those it ended.
  jobs(what: "started" | "ended"): string[] {
    const pattern = what === "started"
      ? /^amber worker: job (\S+): started/
      : /^amber worker: job (\S+): (completed|failed|cancelled)/;
    return this.lines.flatMap((line) => pattern.exec(line)?.[1] ?? []);
  }

  kill(signal: Deno.Signal): void {
    try {
      this.#child.kill(signal);
    } catch {
      // Gone already.
    }
  }

  async status(): Promise<Deno.CommandStatus> {
    const status = await this.#child.status;
    await this.#done;
    return status;
  }
}

// Every value stored in the Redis, as text.
async function everything(store: BatchStore): Promise<string> {
  const redis = store.redis;
  const parts: string[] = [];
  for (const key of await redis.keys("*")) {
    const type = await redis.type(key);
    const value = type === "string"
      ? await redis.get(key)
      : type === "list"
      ? await redis.lrange(key, 0, -1)
      : type === "hash"
      ? await redis.hgetall(key)
      : type === "set"
      ? await redis.smembers(key)
      : type === "zset"
      ? await redis.zrange(key, 0, -1)
      : type === "stream"
      ? await redis.xrange(key, "-", "+")
      : `(${type})`;
    parts.push(key, JSON.stringify(value));
  }
  return parts.join("\n");
}

Deno.test({
  name: "three workers, twenty jobs, one worker killed mid-job: every job done exactly once",
  fn: async () => {
    await using redis = await startRedis();
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    const root = await Deno.makeTempDir({ prefix: "amber-e2e-" });
    const workers: WorkerProcess[] = [];
    try {
      const configDir = join(root, "config");
      await Deno.mkdir(configDir);
      // The workers' temporary folder, where each job has its scratch folder while it runs.
      const tmpDir = join(root, "tmp");
      await Deno.mkdir(tmpDir);
      // A dead worker's lock lapses after 3 s (long enough that a live worker on a loaded
      // machine renews its own in time); the live ones look for such jobs every 0.5 s. The fake
      // provider is on loopback, which workers allow only when listed.
      const lockMs = 3000;
      const intervalMs = 500;
      await Deno.writeTextFile(
        join(configDir, "batch.yaml"),
        `lockDurationMs: ${lockMs}\nstalledIntervalMs: ${intervalMs}\n` +
          `allowBaseUrls: [${server.url}]\n`,
      );
      // The first worker's two jobs wait long for the model: it is killed while they do.
      const slow: ScriptedTurn = {
        text: "never",
        fault: { kind: "slowFirstByte", delayMs: 30_000 },
      };
      server.script(slow, slow);
      for (let i = 0; i < JOBS + 10; i++) {
        server.script({ text: "done", usage: { promptTokens: 3, completionTokens: 1 } });
      }
      const lines: string[] = [];
      for (let i = 1; i <= JOBS; i++) {
        const workspace = join(root, `ws${i}`);
        await Deno.mkdir(workspace);
        lines.push(JSON.stringify({
          workspace,
          prompt: `task number ${i}`,
          provider: "openai",
          model: "fake-model",
          baseUrl: `${server.url}/v1`,
        }));
      }
      const tasks = join(root, "tasks.jsonl");
      await Deno.writeTextFile(tasks, lines.join("\n") + "\n");

      const first = new WorkerProcess("w1", redis.url, configDir, tmpDir);
      workers.push(first);
      await first.waitFor(/^amber worker: w1 on /);
      const submitted = await runAmber(configDir, ["batch", "submit", tasks, "--queue", redis.url]);
      assert.equal(submitted.code, 0, submitted.err);
      const batchId = submitted.out.trim();
      // Both of its jobs are in flight (their requests reached the model) before the others
      // start.
      while (server.chats.length < 2 || first.jobs("started").length < 2) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const inFlight = first.jobs("started");
      assert.equal(inFlight.length, 2);
      for (const name of ["w2", "w3"]) {
        const worker = new WorkerProcess(name, redis.url, configDir, tmpDir);
        workers.push(worker);
        await worker.waitFor(new RegExp(`^amber worker: ${name} on `));
      }
      await workers[1].waitFor(/: started/);
      first.kill("SIGKILL");
      const killedAt = Date.now();
      assert.equal((await first.status()).signal, "SIGKILL");
      assert.deepEqual(first.jobs("ended"), []);
      // Both jobs are found stalled no sooner than the half lock left at the last renewal, and
      // no later than the lock and a stall check (plus room for a loaded machine's timers).
      const stalledIds = () =>
        workers.slice(1).flatMap((w) => w.lines)
          .flatMap((line) => /^amber worker: job (\S+): stalled/.exec(line)?.[1] ?? []);
      while (stalledIds().length < 2 && Date.now() - killedAt < 30_000) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const backAfter = Date.now() - killedAt;
      assert.ok(backAfter >= lockMs / 2 - 100, `back after ${backAfter} ms`);
      assert.ok(backAfter <= lockMs + intervalMs + 6000, `back after ${backAfter} ms`);

      await using store = await BatchStore.open(redis.url);
      const deadline = Date.now() + 90_000;
      while ((await store.counts(batchId)).completed < JOBS && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.deepEqual(await store.counts(batchId), {
        total: JOBS,
        waiting: 0,
        active: 0,
        completed: JOBS,
        failed: 0,
        cancelled: 0,
        unknown: 0,
      });

      // Exactly once: each job ended on exactly one live worker, and no attempt found its
      // outcome taken.
      const ended = [...workers[1].jobs("ended"), ...workers[2].jobs("ended")].sort();
      const ids = Array.from({ length: JOBS }, (_, i) => `${batchId}.${i + 1}`).sort();
      assert.deepEqual(ended, ids);
      const lost = workers.flatMap((w) => w.lines).filter((l) => /stored first/.test(l));
      assert.deepEqual(lost, []);
      // They came back through BullMQ's stall check, run by the live workers.
      assert.deepEqual(stalledIds().sort(), [...inFlight].sort());

      // The results, collected by `amber batch results`.
      const out = join(root, "results.jsonl");
      const collected = await runAmber(configDir, [
        "batch",
        "results",
        batchId,
        "--queue",
        redis.url,
        "--out",
        out,
      ]);
      assert.equal(collected.code, 0, collected.err);
      const results = (await Deno.readTextFile(out)).trim().split("\n").map((line) =>
        JSON.parse(line)
      );
      assert.equal(results.length, JOBS);
      const killed = new Set(inFlight.map((id) => Number(id.split(".").at(-1))));
      for (const result of results) {
        assert.equal(result.status, "completed");
        assert.equal(result.answer, "done");
        assert.equal(result.exit, 0);
        const transcript = await Deno.readTextFile(result.transcriptFile);
        assert.match(transcript, new RegExp(`"task number ${result.line}"`));
        if (killed.has(result.line)) {
          // The dead attempt's transcript is kept beside the new one.
          assert.equal(result.attempt, 2);
          assert.deepEqual(result.otherAttempts.map((ref: { attempt: number }) => ref.attempt), [
            1,
          ]);
          const dead = await Deno.readTextFile(result.otherAttempts[0].transcriptFile);
          assert.match(dead, new RegExp(`"task number ${result.line}"`));
        } else {
          assert.equal(result.attempt, 1);
          assert.equal(result.otherAttempts, undefined);
        }
      }

      // The key reached the provider from the workers' environment, and never Redis.
      assert.ok(server.chats.every((chat) => chat.headers.authorization === `Bearer ${KEY}`));
      const stored = await everything(store);
      assert.match(stored, /task number 20/);
      assert.ok(!stored.includes(KEY));

      // A signal stops an idle worker at once.
      for (const worker of workers.slice(1)) worker.kill("SIGTERM");
      for (const worker of workers.slice(1)) assert.equal((await worker.status()).code, 0);
      // Every job a live worker ran took its scratch folder away; only the two the killed one
      // was running are left (nothing ran to remove them).
      const left = [];
      for await (const entry of Deno.readDir(tmpDir)) left.push(entry.name);
      assert.equal(left.length, 2, left.join(", "));
      assert.ok(left.every((name) => name.startsWith("amber-job-")), left.join(", "));
    } finally {
      for (const worker of workers) worker.kill("SIGKILL");
      for (const worker of workers) await worker.status();
      await Deno.remove(root, { recursive: true });
    }
  },
});
