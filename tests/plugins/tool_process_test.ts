// The process tools over the CLI's real job service: start, read, stop, exit codes, the output
// cap, keys kept out (by the host's policy when there is one), tracking by the host, and dispose
// stopping every process group.

import { deepStrictEqual, match, ok, rejects, strictEqual } from "node:assert/strict";
import type { ToolResult } from "@amber/core";
import { createToolProcessPlugin } from "@amber/plugins/tool_process";
import { HostProcesses } from "../../cli/host_processes.ts";
import { createJobService, type JobServiceOptions } from "../../cli/jobs.ts";
import { makeRuntime } from "../_helpers.ts";

async function processHarness(options: JobServiceOptions = {}) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-jobs-" }));
  const jobs = createJobService(root, options);
  const { runtime, registries } = makeRuntime({ workspace: { root }, host: { jobs }, allOn: true });
  runtime.register(createToolProcessPlugin());
  await runtime.start();
  return {
    root,
    jobs,
    runtime,
    registries,
    call: (name: string, args: Record<string, unknown>): Promise<ToolResult> =>
      registries.tool.execute(name, args, { signal: new AbortController().signal }),
    async [Symbol.asyncDispose]() {
      await jobs.dispose();
      await runtime.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

// The processes of group `pgid` that are still alive (zombies awaiting their reaper aside).
async function liveInGroup(pgid: number): Promise<string[]> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pgid=,stat=,args="] }).output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => Number(fields[0]) === pgid && !fields[1]?.startsWith("Z"))
    .map((fields) => fields.slice(2).join(" "));
}

// Polls `probe` until it returns a value; gives up (throws) after a generous number of tries.
async function until<T>(probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("gave up waiting");
}

function okOutput(result: ToolResult): string {
  ok(result.ok, `expected ok, got: ${result.error}`);
  return result.output;
}

Deno.test("process tools: one contribution of three tools; start asks for approval", async () => {
  await using h = await processHarness();
  const contributions = h.runtime.info("tool_process").contributions;
  strictEqual(contributions.length, 1);
  deepStrictEqual(contributions[0].ids, ["process_start", "process_read", "process_stop"]);
  const tool = (name: string) => h.registries.tool.get(name)!.tool;
  strictEqual(tool("process_start").requiresApproval?.({ command: "x" }), true);
  strictEqual(tool("process_read").requiresApproval?.({ id: "j1" }) ?? false, false);
  strictEqual(tool("process_stop").requiresApproval?.({ id: "j1" }) ?? false, false);
  strictEqual(tool("process_read").readOnly, true);
  strictEqual(tool("process_start").summarize?.({ command: "npm run dev" }), "start $ npm run dev");
});

Deno.test("process tools: start, read new output, stop the whole group", async () => {
  await using h = await processHarness();
  const started = okOutput(
    await h.call("process_start", { command: "echo $$; echo hello >&2; sleep 100 & sleep 100" }),
  );
  match(started, /^Started job j1: echo \$\$/);
  match(started, /process_read \{"id":"j1"\}/);

  // Read until both lines arrived; each read returns only what is new.
  let seen = "";
  await until(async () => {
    const output = okOutput(await h.call("process_read", { id: "j1" }));
    match(output, /\[job j1 is running\]$/);
    // Every line the job prints ends in a newline, so the status line follows directly.
    seen += output.replace(/\[job j1 is running\]$/, "").replace("(no new output)\n", "");
    return seen.includes("hello") ? true : undefined;
  });
  const pgid = Number(seen.split("\n")[0]);
  ok(pgid > 0, seen);
  strictEqual(seen, `${pgid}\nhello\n`);
  strictEqual(
    okOutput(await h.call("process_read", { id: "j1" })),
    "(no new output)\n[job j1 is running]",
  );
  ok((await liveInGroup(pgid)).length >= 2);

  strictEqual(
    okOutput(await h.call("process_stop", { id: "j1" })),
    "(no new output)\n[job j1 exited with code 143]",
  );
  strictEqual((await liveInGroup(pgid)).length, 0);
  strictEqual(
    okOutput(await h.call("process_read", { id: "j1" })),
    "(no new output)\n[job j1 exited with code 143]",
  );
  deepStrictEqual(h.jobs.list(), [{
    id: "j1",
    command: ["bash", "-c", "echo $$; echo hello >&2; sleep 100 & sleep 100"],
    running: false,
    exitCode: 143,
  }]);
});

Deno.test("process tools: a job that ends on its own reports its exit code", async () => {
  await using h = await processHarness();
  okOutput(await h.call("process_start", { command: "echo done; exit 4" }));
  await until(() => h.jobs.list()[0].running ? undefined : true);
  strictEqual(
    okOutput(await h.call("process_read", { id: "j1" })),
    "done\n[job j1 exited with code 4]",
  );
  // Stopping a finished job is harmless.
  strictEqual(
    okOutput(await h.call("process_stop", { id: "j1" })),
    "(no new output)\n[job j1 exited with code 4]",
  );
});

Deno.test("process tools: unknown ids are errors that list the jobs", async () => {
  await using h = await processHarness();
  const none = await h.call("process_read", { id: "j9" });
  strictEqual(none.ok, false);
  strictEqual(none.error, "unknown job 'j9'; no jobs started");
  okOutput(await h.call("process_start", { command: "true" }));
  strictEqual((await h.call("process_stop", { id: "j9" })).error, "unknown job 'j9'; jobs: j1");
  match((await h.call("process_read", {})).error!, /invalid arguments for tool 'process_read'/);
});

Deno.test("jobs: unread output is capped, oldest dropped with a note", async () => {
  await using h = await processHarness({ maxBuffer: 1000 });
  okOutput(await h.call("process_start", { command: "head -c 5000 /dev/zero | tr '\\0' x" }));
  await until(() => h.jobs.list()[0].running ? undefined : true);
  strictEqual(
    okOutput(await h.call("process_read", { id: "j1" })),
    "[4000 chars of earlier output dropped: it came faster than it was read]\n" +
      `${"x".repeat(1000)}\n[job j1 exited with code 0]`,
  );
});

Deno.test("jobs: keys are stripped from the environment and redacted", async () => {
  Deno.env.set("AMBER_JOB_TEST_API_KEY", "sk-job-0123456789");
  try {
    await using h = await processHarness();
    await Deno.writeTextFile(`${h.root}/key.txt`, "sk-job-0123456789\n");
    okOutput(
      await h.call("process_start", { command: 'echo "[$AMBER_JOB_TEST_API_KEY]"; cat key.txt' }),
    );
    await until(() => h.jobs.list()[0].running ? undefined : true);
    strictEqual(
      okOutput(await h.call("process_read", { id: "j1" })),
      "[]\n[redacted]\n[job j1 exited with code 0]",
    );
  } finally {
    Deno.env.delete("AMBER_JOB_TEST_API_KEY");
  }
});

Deno.test("jobs: the host's policy sets the environment and tracks every job", async () => {
  const key = "sk-job-in-use-0123456789";
  Deno.env.set("AMBER_JOB_ODD", key);
  Deno.env.set("AMBER_JOB_PASSWORD", "hunter2-hunter2");
  Deno.env.set("AMBER_JOB_GH_TOKEN", "ghp-on-purpose");
  const processes = new HostProcesses({
    policy: () => ({ passEnv: ["AMBER_JOB_ODD", "AMBER_JOB_GH_TOKEN"] }),
  });
  processes.withhold(key);
  try {
    await using h = await processHarness({ processes });
    const command = 'echo "[$AMBER_JOB_ODD][$AMBER_JOB_PASSWORD][$AMBER_JOB_GH_TOKEN]"; sleep 100';
    okOutput(await h.call("process_start", { command }));
    strictEqual(processes.running, 1);
    const { output } = await until(async () => {
      const read = await h.jobs.read("j1");
      return read.output === "" ? undefined : read;
    });
    strictEqual(output, "[][][ghp-on-purpose]\n");
    // The host stops what it tracks (as on SIGTERM), and the job service sees the job end.
    await processes.stopAll();
    strictEqual(processes.running, 0);
    deepStrictEqual(h.jobs.list()[0], {
      id: "j1",
      command: ["bash", "-c", command],
      running: false,
      exitCode: 143,
    });
  } finally {
    for (const name of ["AMBER_JOB_ODD", "AMBER_JOB_PASSWORD", "AMBER_JOB_GH_TOKEN"]) {
      Deno.env.delete(name);
    }
  }
});

Deno.test("jobs: dispose stops every running group and refuses new jobs", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-jobs-" }));
  const jobs = createJobService(root);
  try {
    await jobs.start(["bash", "-c", "echo $$ > a; sleep 100 & sleep 100; wait"]);
    await jobs.start(["bash", "-c", "echo $$ > b; exec sleep 100"]);
    const pgids: number[] = [];
    for (const name of ["a", "b"]) {
      pgids.push(
        await until(async () => {
          const text = await Deno.readTextFile(`${root}/${name}`).catch(() => "");
          return text.trim() === "" ? undefined : Number(text.trim());
        }),
      );
    }
    for (const pgid of pgids) ok((await liveInGroup(pgid)).length > 0);
    await jobs.dispose();
    for (const pgid of pgids) deepStrictEqual(await liveInGroup(pgid), []);
    deepStrictEqual(jobs.list().map((job) => job.running), [false, false]);
    await rejects(jobs.start(["true"]), /shut down/);
  } finally {
    await jobs.dispose();
    await Deno.remove(root, { recursive: true });
  }
});
