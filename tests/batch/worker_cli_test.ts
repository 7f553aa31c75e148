// `amber worker` as a user runs it: what it refuses, and how a signal stops it. The first SIGTERM
// lets the running session end and store its outcome; a second cancels it and puts the job back
// on the queue, with no outcome, for another worker.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { jobId } from "../../cli/batch/queue.ts";
import { BatchStore } from "../../cli/batch/store.ts";
import { MAIN, PERMISSIONS, runAmber } from "../cli/_subprocess.ts";
import { startRedis } from "./_redis.ts";

const KEY = "sk-worker-cli-test-key";

Deno.test("amber worker refuses a missing queue, a bad option, an unreachable Redis", async () => {
  const configDir = await Deno.makeTempDir();
  try {
    const missing = await runAmber(configDir, ["worker"], { env: { AMBER_QUEUE: "" } });
    assert.equal(missing.code, 2);
    assert.match(missing.err, /--queue \(or \$AMBER_QUEUE\) is required/);
    const url = "redis://127.0.0.1:1/0";
    const approve = await runAmber(configDir, ["worker", "--queue", url, "--approve", "ask"]);
    assert.equal(approve.code, 2);
    assert.match(approve.err, /--approve must be auto or deny, got 'ask'/);
    const zero = await runAmber(configDir, ["worker", "--queue", url, "--concurrency", "0"]);
    assert.equal(zero.code, 2);
    assert.match(zero.err, /--concurrency must be a positive whole number, got '0'/);
    const unreachable = await runAmber(configDir, ["worker", "--queue", url]);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.err, /cannot reach Redis at redis:\/\/127\.0\.0\.1:1\/0/);
  } finally {
    await Deno.remove(configDir, { recursive: true });
  }
});

// A worker subprocess; resolves once it runs a job (its request reached the model).
// The signals go one after the other; "SIGINT-echo" is one Ctrl-C under `deno task`: two
// SIGINTs a few ms apart.
type Press = "SIGTERM" | "SIGINT-echo";

async function workerWithJob(...presses: Press[]) {
  await using redis = await startRedis();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "finished", fault: { kind: "slowFirstByte", delayMs: 1500 } });
  const workspace = await Deno.makeTempDir();
  const configDir = await Deno.makeTempDir();
  // The fake provider is on loopback, which a worker allows only when listed.
  await Deno.writeTextFile(`${configDir}/batch.yaml`, `allowBaseUrls: [${server.url}]\n`);
  await using store = await BatchStore.open(redis.url);
  try {
    const spec = {
      workspace,
      prompt: "take your time",
      provider: "openai",
      model: "fake-model",
      baseUrl: `${server.url}/v1`,
    };
    const meta = await store.submit([{ line: 1, spec }], "t.jsonl");
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSIONS, MAIN, "worker", "--queue", redis.url],
      env: { NO_COLOR: "1", AMBER_CONFIG_DIR: configDir, OPENAI_API_KEY: KEY },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const output = child.stderr.pipeThrough(new TextDecoderStream());
    let err = "";
    const reading = (async () => {
      for await (const text of output) err += text;
    })();
    const deadline = Date.now() + 30_000;
    while (server.chats.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal(server.chats.length, 1, err);
    for (const [i, press] of presses.entries()) {
      if (press === "SIGTERM") {
        child.kill("SIGTERM");
      } else {
        child.kill("SIGINT");
        await new Promise((resolve) => setTimeout(resolve, 5));
        child.kill("SIGINT");
      }
      // The second only after the first was taken in.
      while (i === 0 && !err.includes("taking no more jobs")) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    const status = await child.status;
    await reading;
    return {
      code: status.code,
      err,
      outcome: await store.outcome(meta.id, 1),
      state: await store.queue("openai").getJobState(jobId(meta.id, 1)),
      transcript: await store.transcript(meta.id, 1, 1),
    };
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(configDir, { recursive: true });
  }
}

Deno.test("SIGTERM: the worker takes no more jobs and lets the running one end", async () => {
  const { code, err, outcome, state } = await workerWithJob("SIGTERM");
  assert.equal(code, 0, err);
  assert.match(err, /taking no more jobs; 1 running/);
  assert.equal(outcome?.status, "completed");
  assert.equal(outcome?.answer, "finished");
  assert.equal(state, "completed");
});

Deno.test("a second SIGTERM cancels the running session and puts its job back", async () => {
  const { code, err, outcome, state, transcript } = await workerWithJob("SIGTERM", "SIGTERM");
  assert.equal(code, 0, err);
  assert.match(err, /cancelling the running sessions/);
  assert.match(err, /stopped with the worker, back on the queue/);
  assert.equal(outcome, undefined);
  assert.equal(state, "waiting");
  // The cancelled attempt committed, and its transcript is kept for the next one.
  assert.match(transcript, /"end":"cancelled"/);
});

Deno.test("one Ctrl-C that arrives twice (deno task's echo) still lets the session end", async () => {
  const { code, err, outcome, state } = await workerWithJob("SIGINT-echo");
  assert.equal(code, 0, err);
  assert.match(err, /taking no more jobs; 1 running/);
  assert.doesNotMatch(err, /cancelling the running sessions/);
  assert.equal(outcome?.status, "completed");
  assert.equal(state, "completed");
});
