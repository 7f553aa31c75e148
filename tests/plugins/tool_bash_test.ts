// The bash tool with real subprocesses: output order, cap, exit codes, timeout, cancellation of
// the whole process group, keys kept out of the child's environment and the output (the usual
// secret shapes, and the host's policy: the key in use, provider keys, passEnv), and tracking.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { ProcessPolicy, ToolResult } from "@amber/core";
import { redactSecrets, startProcessGroup } from "@amber/plugins/process_group";
import { createToolBashPlugin } from "@amber/plugins/tool_bash";
import { HostProcesses } from "../../cli/host_processes.ts";
import { makeRuntime } from "../_helpers.ts";

async function bashHarness() {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-bash-" }));
  const { runtime, registries } = makeRuntime({ workspace: { root }, allOn: true });
  runtime.register(createToolBashPlugin());
  await runtime.start();
  return {
    root,
    tool: registries.tool.get("bash")!.tool,
    bash: (args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> =>
      registries.tool.execute("bash", args, { signal: signal ?? new AbortController().signal }),
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** The processes of group `pgid` that are still alive (zombies awaiting their reaper aside). */
async function liveInGroup(pgid: number): Promise<string[]> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pgid=,stat=,args="] }).output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => Number(fields[0]) === pgid && !fields[1]?.startsWith("Z"))
    .map((fields) => fields.slice(2).join(" "));
}

/** Polls `probe` until it returns a value; gives up (throws) after a generous number of tries. */
async function until<T>(probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("gave up waiting");
}

async function pgidFile(path: string): Promise<number> {
  return await until(async () => {
    try {
      const text = (await Deno.readTextFile(path)).trim();
      return text === "" ? undefined : Number(text);
    } catch {
      return undefined;
    }
  });
}

Deno.test("bash: merged output in order, exit code, workspace cwd", async () => {
  await using h = await bashHarness();
  const result = await h.bash({ command: "echo one; echo two >&2; echo three; pwd" });
  strictEqual(result.ok, true);
  strictEqual(result.output, `one\ntwo\nthree\n${h.root}\n[exit code 0]`);
  strictEqual((result.data as { exitCode: number }).exitCode, 0);
  const failed = await h.bash({ command: "exit 3" });
  strictEqual(failed.ok, true, "a non-zero exit is reported, not an error");
  strictEqual(failed.output, "(no output)\n[exit code 3]");
  strictEqual(
    (await h.bash({ command: "printf 'no newline'" })).output,
    "no newline\n[exit code 0]",
  );
  const syntax = await h.bash({ command: "if then" });
  match(syntax.output, /syntax error/);
  match(syntax.output, /\[exit code 2\]$/);
});

Deno.test("bash: output beyond 30,000 characters keeps the end and says so", async () => {
  await using h = await bashHarness();
  const result = await h.bash({ command: "head -c 61234 /dev/zero | tr '\\0' a; printf END" });
  strictEqual(
    result.output,
    `[output cut: 61237 chars, showing the last 30000]\n${"a".repeat(29997)}END\n[exit code 0]`,
  );
});

Deno.test("bash: the timeout stops the whole group and keeps the output so far", async () => {
  await using h = await bashHarness();
  const result = await h.bash({
    command: "echo $$ > pgid; echo started; sleep 100 & sleep 100; wait",
    timeout_ms: 300,
  });
  strictEqual(result.ok, false);
  strictEqual(result.output, "started\n");
  strictEqual(
    result.error,
    "timed out after 300 ms: the command was stopped. Output so far:\nstarted\n",
  );
  const pgid = Number((await Deno.readTextFile(`${h.root}/pgid`)).trim());
  strictEqual((await liveInGroup(pgid)).length, 0);
});

Deno.test("bash: cancelling the run kills the whole process tree", async () => {
  await using h = await bashHarness();
  const controller = new AbortController();
  const running = h.bash(
    { command: "echo $$ > pgid; sleep 100 & sleep 100; wait" },
    controller.signal,
  );
  const pgid = await pgidFile(`${h.root}/pgid`);
  // The group exists, with bash and both sleeps in it.
  const before = await until(async () => {
    const live = await liveInGroup(pgid);
    return live.filter((args) => args.startsWith("sleep")).length === 2 ? live : undefined;
  });
  ok(before.some((args) => args.startsWith("bash")), before.join("; "));
  controller.abort();
  const result = await running;
  strictEqual(result.ok, false);
  strictEqual(result.error, "cancelled: the command was stopped. It printed nothing.");
  strictEqual((await liveInGroup(pgid)).length, 0);
  // kill -0 on the group: no such process.
  const probe = await new Deno.Command("bash", {
    args: ["-c", `kill -0 -- -${pgid} 2>/dev/null && echo alive || echo gone`],
  }).output();
  const state = new TextDecoder().decode(probe.stdout).trim();
  // A zombie not yet reaped still answers kill -0; ps above already showed none is running.
  ok(state === "gone" || (await liveInGroup(pgid)).length === 0, state);

  const pre = new AbortController();
  pre.abort();
  strictEqual(
    (await h.bash({ command: "echo never" }, pre.signal)).error,
    "cancelled before the command started",
  );
});

Deno.test("bash: what the command leaves in the background is stopped when it ends", async () => {
  await using h = await bashHarness();
  const result = await h.bash({ command: "echo $$ > pgid; sleep 100 & echo left" });
  strictEqual(result.output, "left\n[exit code 0]");
  const pgid = Number((await Deno.readTextFile(`${h.root}/pgid`)).trim());
  strictEqual((await liveInGroup(pgid)).length, 0);
});

Deno.test("bash: keys never reach the child or the output", async () => {
  const names = ["AMBER_TEST_API_KEY", "AMBER_TEST_TOKEN", "amber_lower_api_key"];
  const values = ["sk-test-0123456789", "tok-abcdefghijkl", "sk-lower-987654321"];
  names.forEach((name, i) => Deno.env.set(name, values[i]));
  Deno.env.set("AMBER_TEST_PLAIN", "visible-value");
  try {
    await using h = await bashHarness();
    await Deno.writeTextFile(`${h.root}/.env`, `KEY=${values[0]}\n`);
    const result = await h.bash({
      command: 'env; echo "key=[$AMBER_TEST_API_KEY]"; cat .env',
    });
    strictEqual(result.ok, true);
    for (const secret of [...names, ...values]) ok(!result.output.includes(secret), secret);
    match(result.output, /^AMBER_TEST_PLAIN=visible-value$/m);
    match(result.output, /^key=\[\]$/m);
    match(result.output, /^KEY=\[redacted\]$/m);
  } finally {
    for (const name of [...names, "AMBER_TEST_PLAIN"]) Deno.env.delete(name);
  }
});

Deno.test("bash: the usual secret shapes never reach the child", async () => {
  const names = ["AMBER_T_SECRET", "AMBER_T_PASSWORD", "AMBER_T_PAT", "AMBER_T_CREDENTIALS"];
  names.push("AMBER_T_KEY", "amber_t_db_password");
  names.forEach((name, i) => Deno.env.set(name, `value-${i}-0123456789`));
  try {
    await using h = await bashHarness();
    const result = await h.bash({ command: "env" });
    strictEqual(result.ok, true);
    for (const name of names) ok(!result.output.includes(name), name);
    ok(!result.output.includes("-0123456789"));
  } finally {
    for (const name of names) Deno.env.delete(name);
  }
});

Deno.test("bash: the host's policy: the key in use under any name, provider keys, passEnv", async () => {
  const key = "sk-in-use-0123456789";
  const vars: Record<string, string> = {
    AMBER_T_ODD: key, // the key in use, oddly named and listed in passEnv: withheld
    AMBER_T_AUTH_HEADER: `Bearer ${key}`, // holds it: withheld
    AMBER_T_LLM_AUTH: "llm-provider-secret-42", // a provider's key variable: withheld
    AMBER_T_COPY: "llm-provider-secret-42", // a copy of that key under a plain name: withheld
    AMBER_T_GH_TOKEN: "ghp-passed-on-purpose", // listed in passEnv: passed
    AMBER_T_PLAIN: "plain-value",
  };
  for (const [name, value] of Object.entries(vars)) Deno.env.set(name, value);
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-bash-" }));
  const processes = new HostProcesses({
    policy: () => ({
      passEnv: ["AMBER_T_ODD", "AMBER_T_GH_TOKEN"],
      keyNames: ["AMBER_T_LLM_AUTH"],
    }),
  });
  processes.withhold(key);
  const tracked: string[][] = [];
  const policy: ProcessPolicy = {
    environment: () => processes.environment(),
    track(group, command) {
      tracked.push([...command]);
      processes.track(group, command);
    },
  };
  const { runtime, registries } = makeRuntime({
    workspace: { root },
    host: { processes: policy },
    allOn: true,
  });
  runtime.register(createToolBashPlugin());
  await runtime.start();
  try {
    await Deno.writeTextFile(`${root}/key.txt`, `${key}\n`);
    const result = await registries.tool.execute("bash", { command: "env | sort; cat key.txt" }, {
      signal: new AbortController().signal,
    });
    strictEqual(result.ok, true);
    const lines = result.output.split("\n").filter((line) => line.startsWith("AMBER_T_"));
    deepStrictEqual(lines, ["AMBER_T_GH_TOKEN=ghp-passed-on-purpose", "AMBER_T_PLAIN=plain-value"]);
    match(result.output, /^\[redacted\]$/m);
    ok(!result.output.includes(key));
    deepStrictEqual(tracked, [["bash", "-c", "env | sort; cat key.txt"]]);
    strictEqual(processes.running, 0, "the command ended, so the host no longer tracks it");
  } finally {
    for (const name of Object.keys(vars)) Deno.env.delete(name);
    await runtime.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a group stopped right after its start gets SIGTERM at once, not after the grace", async () => {
  // Before `setsid` has made the group, there is no group to signal: the leader is signalled
  // alone. Without that, about half of these waited out the grace period.
  for (let i = 0; i < 10; i++) {
    const group = await startProcessGroup({
      argv: ["sleep", "100"],
      cwd: Deno.cwd(),
      env: {},
      onOutput: () => {},
    });
    const started = performance.now();
    const exit = await group.stop(3000);
    strictEqual(exit.signal, "SIGTERM");
    ok(performance.now() - started < 1500, `stop took ${performance.now() - started} ms`);
  }
});

Deno.test("bash: asks for approval always, is not read-only, summarizes the command", async () => {
  await using h = await bashHarness();
  strictEqual(h.tool.requiresApproval?.({ command: "ls" }), true);
  strictEqual(h.tool.readOnly, undefined);
  strictEqual(h.tool.verb, "running");
  strictEqual(h.tool.summarize?.({ command: "npm test\nnpm run lint" }), "$ npm test ...");
  const bad = await h.bash({ command: "ls", timeout_ms: 700_000 });
  match(bad.error!, /invalid arguments for tool 'bash'/);
});

Deno.test("redactSecrets leaves nothing of a secret that contains another", () => {
  const short = "sk-abcdefgh";
  const long = "sk-abcdefgh-0123456789";
  for (const secrets of [[short, long], [long, short]]) {
    strictEqual(
      redactSecrets(`key ${long} and ${short}`, secrets),
      "key [redacted] and [redacted]",
    );
  }
});
