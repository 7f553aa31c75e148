// One batch job as a session (cli/batch/run_job.ts): the workspace it runs in (a clone of a
// repo at a ref, a local folder with or without git) and its diff, and each limit stopping the
// session: maxSteps, timeoutS, maxCost, and a cancel from outside.

import assert from "node:assert/strict";
import { join } from "node:path";
import { makeBundledPlugins } from "@amber/plugins";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import type { JobSpec } from "../../cli/batch/job_spec.ts";
import { JobWorkspaceError } from "../../cli/batch/job_workspace.ts";
import { runJob, type RunJobOptions } from "../../cli/batch/run_job.ts";

const KEY = "sk-run-job-test-key";

async function git(cwd: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) throw new Error(new TextDecoder().decode(output.stderr));
  return text;
}

const writeCall = (path: string, content: string): ScriptedTurn => ({
  toolCalls: [{ name: "write", arguments: { path, content } }],
  usage: { promptTokens: 10, completionTokens: 5 },
});

// A fake provider, a worker config directory, and the job's fields that reach the provider.
async function setUp(configYaml?: string) {
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const configDir = await Deno.makeTempDir();
  if (configYaml !== undefined) {
    await Deno.writeTextFile(join(configDir, "config.yaml"), configYaml);
  }
  const dirs: string[] = [configDir];
  const provider = { provider: "openai", model: "fake-model", baseUrl: `${server.url}/v1` };
  // The fake provider is on loopback: the worker lists it, as a user would (base_url_policy.ts).
  const options: RunJobOptions = {
    plugins: makeBundledPlugins,
    configDir,
    env: () => KEY,
    allowBaseUrls: [server.url],
  };
  return {
    server,
    provider,
    options,
    temp: async () => {
      const dir = await Deno.makeTempDir();
      dirs.push(dir);
      return dir;
    },
    [Symbol.asyncDispose]: async () => {
      await server.close();
      for (const dir of dirs) await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("a repo+ref job clones the repository at the ref and reports its diff", async () => {
  await using t = await setUp();
  const source = await t.temp();
  await git(source, "init", "--quiet", "--initial-branch=main");
  await Deno.writeTextFile(join(source, "README.md"), "main\n");
  await git(source, "add", ".");
  await git(source, "commit", "--quiet", "-m", "main");
  await git(source, "checkout", "--quiet", "-b", "feature");
  await Deno.writeTextFile(join(source, "feature.txt"), "from the feature branch\n");
  await git(source, "add", ".");
  await git(source, "commit", "--quiet", "-m", "feature");
  await git(source, "checkout", "--quiet", "main");
  const bare = join(await t.temp(), "origin.git");
  await git(source, "clone", "--quiet", "--bare", source, bare);

  t.server.script(
    writeCall("feature.txt", "changed by the job\n"),
    writeCall("notes/new.txt", "a new file\n"),
    { text: "Changed it." },
  );
  const spec: JobSpec = {
    repo: bare,
    ref: "feature",
    prompt: "Change feature.txt.",
    ...t.provider,
  };
  const result = await runJob(spec, t.options);
  assert.equal(result.exitCode, 0);
  assert.equal(result.answer, "Changed it.");
  // The ref's file was there to change (its old line is the diff's), and the untracked new file
  // is in the diff too.
  assert.match(result.diff, /-from the feature branch\n\+changed by the job/);
  assert.match(result.diff, /\+\+\+ b\/notes\/new\.txt\n@@ -0,0 \+1 @@\n\+a new file/);
  // The clone went with the job; the origin is as it was.
  assert.equal((await git(bare, "log", "--format=%s", "feature")).trim(), "feature\nmain");
  // The job's key reader answers every name with the key: nothing was taken for a folder (the
  // price cache once was, and wrote `sk-run-job-test-key/prices.json` where the test ran).
  await assert.rejects(Deno.stat(join(Deno.cwd(), KEY)), Deno.errors.NotFound);

  await assert.rejects(
    runJob({ ...spec, ref: "no-such-branch" }, t.options),
    (error: Error) =>
      error instanceof JobWorkspaceError &&
      /no branch, tag or commit 'no-such-branch'/.test(error.message),
  );
});

Deno.test("a local git workspace: the diff is the job's, the user's index untouched", async () => {
  await using t = await setUp();
  const workspace = await t.temp();
  await git(workspace, "init", "--quiet");
  await Deno.writeTextFile(join(workspace, "a.txt"), "committed\n");
  await git(workspace, "add", ".");
  await git(workspace, "commit", "--quiet", "-m", "one");
  // Uncommitted before the job: not the job's change.
  await Deno.writeTextFile(join(workspace, "a.txt"), "the user's edit\n");
  await Deno.writeTextFile(join(workspace, "mine.txt"), "untracked before\n");
  const statusBefore = await git(workspace, "status", "--porcelain");
  const objectsBefore = await git(workspace, "count-objects");

  t.server.script(writeCall("b.txt", "from the job\n"), { text: "Done." });
  const result = await runJob({ workspace, prompt: "Add b.txt.", ...t.provider }, t.options);
  assert.equal(result.exitCode, 0);
  assert.match(result.diff, /\+\+\+ b\/b\.txt\n@@ -0,0 \+1 @@\n\+from the job/);
  assert.doesNotMatch(result.diff, /a\.txt|mine\.txt/);
  // The job's file stays in the folder; git's view of it is the user's, plus that file.
  assert.equal(await Deno.readTextFile(join(workspace, "b.txt")), "from the job\n");
  const lines = (text: string) => text.split("\n").filter((line) => line !== "").sort();
  assert.deepEqual(
    lines(await git(workspace, "status", "--porcelain")),
    lines(`${statusBefore}?? b.txt\n`),
  );
  assert.equal(await git(workspace, "count-objects"), objectsBefore);
});

Deno.test("a local folder without git gets a diff, and no .git", async () => {
  await using t = await setUp();
  const workspace = await t.temp();
  await Deno.writeTextFile(join(workspace, "old.txt"), "before\n");
  t.server.script(writeCall("old.txt", "after\n"), { text: "Done." });
  const result = await runJob({ workspace, prompt: "Update old.txt.", ...t.provider }, t.options);
  assert.equal(result.exitCode, 0);
  assert.match(result.diff, /--- a\/old\.txt\n\+\+\+ b\/old\.txt\n@@ -1 \+1 @@\n-before\n\+after/);
  assert.deepEqual([...Deno.readDirSync(workspace)].map((entry) => entry.name).sort(), ["old.txt"]);
});

Deno.test("maxSteps stops the session: exit 1, the steps committed", async () => {
  await using t = await setUp();
  const workspace = await t.temp();
  for (let i = 0; i < 5; i++) t.server.script(writeCall(`f${i}.txt`, `${i}\n`));
  const result = await runJob(
    { workspace, prompt: "Write files.", maxSteps: 2, ...t.provider },
    t.options,
  );
  assert.equal(result.exitCode, 1);
  assert.equal(result.stoppedBy, undefined);
  assert.match(result.end, /stopped after 2 steps/);
  assert.equal(t.server.chats.length, 2);
  assert.match(result.diff, /f0\.txt[\s\S]*f1\.txt/);
});

Deno.test("timeoutS cancels the session, which commits what it did", async () => {
  await using t = await setUp();
  const workspace = await t.temp();
  t.server.script(writeCall("first.txt", "1\n"), {
    text: "never sent",
    fault: { kind: "slowFirstByte", delayMs: 30_000 },
  });
  const started = Date.now();
  const result = await runJob(
    { workspace, prompt: "Write, then think long.", timeoutS: 0.5, ...t.provider },
    t.options,
  );
  assert.ok(Date.now() - started < 10_000);
  assert.equal(result.stoppedBy, "timeout");
  assert.equal(result.exitCode, 130);
  assert.equal(result.end, "timed out after 0.5 s (timeoutS)");
  assert.match(result.diff, /first\.txt/);
  // The committed first step and the cancelled one are in the transcript.
  assert.match(result.transcript, /"name":"write"/);
  assert.match(result.transcript, /"end":"cancelled"/);
});

Deno.test("maxCost stops the session once its cost passes the limit", async () => {
  // Prices from the worker's config.yaml (copied into the job's config directory).
  await using t = await setUp("models:\n  fake-model: {input: 10000, output: 10000}\n");
  const workspace = await t.temp();
  for (let i = 0; i < 5; i++) t.server.script(writeCall(`f${i}.txt`, `${i}\n`));
  // Each step: 15 tokens at $0.01 each = $0.15; past $0.2 after the second.
  const result = await runJob(
    { workspace, prompt: "Write files.", maxCost: 0.2, ...t.provider },
    t.options,
  );
  assert.equal(result.stoppedBy, "maxCost");
  assert.equal(result.exitCode, 1);
  assert.equal(result.end, "stopped when its cost passed $0.2 (maxCost)");
  assert.equal(t.server.chats.length, 2);
  assert.ok(Math.abs((result.cost ?? 0) - 0.3) < 1e-9, `cost ${result.cost}`);
});

Deno.test("a cancel from outside stops the session: exit 130, stoppedBy cancelled", async () => {
  await using t = await setUp();
  const workspace = await t.temp();
  t.server.script({ text: "late", fault: { kind: "slowFirstByte", delayMs: 30_000 } });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const result = await runJob(
    { workspace, prompt: "Wait.", ...t.provider },
    { ...t.options, signal: controller.signal },
  );
  assert.equal(result.stoppedBy, "cancelled");
  assert.equal(result.exitCode, 130);
  assert.equal(result.end, "cancelled");
});

Deno.test("the transcript goes out step by step; keys stay in the worker", async () => {
  await using t = await setUp();
  const workspace = await t.temp();
  t.server.script(writeCall("x.txt", "x\n"), { text: `Done, key ${KEY}.` });
  const chunks: string[] = [];
  const result = await runJob(
    { workspace, prompt: "Write x.", ...t.provider },
    { ...t.options, onTranscript: (chunk) => void chunks.push(chunk) },
  );
  assert.ok(chunks.length >= 2, `${chunks.length} chunks`);
  assert.ok(chunks.every((chunk) => chunk.endsWith("\n")));
  assert.equal(chunks.join(""), result.transcript);
  // The key the worker used reached the provider, and nowhere else.
  assert.equal(t.server.chats[0].headers.authorization, `Bearer ${KEY}`);
  assert.ok(!result.transcript.includes(KEY));
  assert.ok(!result.answer.includes(KEY));
});

Deno.test("a job that cannot run rejects: unknown plugin, missing workspace, no key", async () => {
  await using t = await setUp();
  const workspace = await t.temp();
  await assert.rejects(
    runJob({ workspace, prompt: "hi", plugins: ["no_such_plugin"], ...t.provider }, t.options),
    /no_such_plugin/,
  );
  await assert.rejects(
    runJob({ workspace: join(workspace, "missing"), prompt: "hi", ...t.provider }, t.options),
    (error: Error) =>
      error instanceof JobWorkspaceError &&
      error.message === `workspace '${join(workspace, "missing")}' does not exist on this worker`,
  );
  await assert.rejects(
    runJob({ workspace, prompt: "hi", ...t.provider }, { ...t.options, env: () => undefined }),
    /OPENAI_API_KEY/,
  );
  assert.equal(t.server.chats.length, 0);
});
