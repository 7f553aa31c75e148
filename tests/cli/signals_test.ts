// What the agent starts does not outlive amber: real `amber run` subprocesses against the fake
// provider whose bash command or background job runs `sleep 300`. SIGTERM and SIGHUP stop them
// before amber exits; after a kill -9 the next start finds the recorded leftover and stops it,
// and leaves alone a process whose pid matches a record but whose start time does not.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { processStartTime, RECORDS_DIR } from "../../cli/leftovers.ts";
import { tempDir } from "../_helpers.ts";
import { MAIN, PERMISSIONS, ROOT } from "./_subprocess.ts";

const KEY = { OPENAI_API_KEY: "sk-test-key-1234" };

// The workspace and the config directory apart: bash touching the config directory always asks.
async function dirs() {
  const config = await tempDir();
  const workspace = await tempDir();
  return {
    config: config.dir,
    workspace: workspace.dir,
    async [Symbol.asyncDispose]() {
      await config[Symbol.asyncDispose]();
      await workspace[Symbol.asyncDispose]();
    },
  };
}

function amber(configDir: string, workspace: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, "--allow-run", MAIN, ...args],
    env: { AMBER_CONFIG_DIR: configDir, INIT_CWD: workspace, NO_COLOR: "1", ...KEY },
    cwd: workspace,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

// The pid a command wrote to `file` in the workspace (`echo $$ > file`): its group's id.
function pidIn(workspace: string, file: string): Promise<number> {
  return until(async () => {
    const text = await Deno.readTextFile(join(workspace, file)).catch(() => "");
    return text.trim() === "" ? undefined : Number(text.trim());
  }, file);
}

// Processes still alive in group `pgid`, zombies aside.
async function liveInGroup(pgid: number): Promise<number> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pgid=,stat="] }).output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => Number(fields[0]) === pgid && !fields[1]?.startsWith("Z")).length;
}

function killGroup(pgid: number): void {
  try {
    Deno.kill(-pgid, "SIGKILL");
  } catch {
    // Gone, as it should be.
  }
}

// `amber run --approve auto` against `server`, in the background.
function startRun(d: { config: string; workspace: string }, server: FakeProvider) {
  return amber(d.config, d.workspace, [
    "run",
    "go",
    "--approve",
    "auto",
    "--base-url",
    `${server.url}/v1`,
  ]);
}

for (const [signal, code] of [["SIGTERM", 143], ["SIGHUP", 129]] as const) {
  Deno.test(`${signal} stops a running bash command and a background job, then amber exits`, async () => {
    await using d = await dirs();
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script(
      {
        toolCalls: [{ name: "process_start", arguments: { command: "echo $$ > job; sleep 300" } }],
      },
      { toolCalls: [{ name: "bash", arguments: { command: "echo $$ > cmd; sleep 300; echo" } }] },
      { text: "never", fault: { kind: "slowFirstByte", delayMs: 60_000 } },
    );
    const child = startRun(d, server);
    const groups = [await pidIn(d.workspace, "job"), await pidIn(d.workspace, "cmd")];
    try {
      await until(async () => (await liveInGroup(groups[1])) > 1 ? true : undefined, "sleep");
      for (const pgid of groups) ok((await liveInGroup(pgid)) > 0);
      child.kill(signal);
      const output = await child.output();
      strictEqual(output.code, code, new TextDecoder().decode(output.stderr));
      deepStrictEqual([await liveInGroup(groups[0]), await liveInGroup(groups[1])], [0, 0]);
      // Both ended while amber ran: no record is left behind.
      deepStrictEqual(await Array.fromAsync(Deno.readDir(join(d.config, RECORDS_DIR))), []);
    } finally {
      groups.forEach(killGroup);
      await server.close();
    }
  });
}

Deno.test("after a kill -9 the next start stops the recorded leftover, not a reused pid", async () => {
  await using d = await dirs();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  // The command outlives the step: amber is killed while it runs, before a second model call.
  server.script({
    toolCalls: [{ name: "bash", arguments: { command: "echo $$ > cmd; sleep 300; echo" } }],
  });
  const first = startRun(d, server);
  const pgid = await pidIn(d.workspace, "cmd");
  // A process of the test's own, recorded as if by the killed amber but with another start time:
  // its pid matches, it is not the process that was recorded.
  const stranger = new Deno.Command("sleep", { args: ["300"] }).spawn();
  try {
    const records = join(d.config, RECORDS_DIR);
    const [written] = await until(async () => {
      const names = await Array.fromAsync(Deno.readDir(records)).catch(() => []);
      return names.length > 0 ? names : undefined;
    }, "the record");
    const record = JSON.parse(await Deno.readTextFile(join(records, written.name)));
    strictEqual(record.pid, pgid);
    strictEqual(record.owner.pid, first.pid);
    first.kill("SIGKILL");
    await first.output();
    ok((await liveInGroup(pgid)) > 0, "kill -9 leaves the command running");
    const strangerTime = await until(() => processStartTime(stranger.pid), "the stranger");
    await Deno.writeTextFile(
      join(records, `${stranger.pid}-1.json`),
      JSON.stringify({ ...record, pid: stranger.pid, startTime: `${Number(strangerTime) - 1}` }),
    );

    server.script({ text: "hello" });
    const second = await amber(d.config, d.workspace, [
      "run",
      "hi",
      "--base-url",
      `${server.url}/v1`,
    ])
      .output();
    const err = new TextDecoder().decode(second.stderr);
    strictEqual(second.code, 0, err);
    match(err, new RegExp(`stopped a process an earlier amber left running: pid ${pgid}\\b`));
    strictEqual(await liveInGroup(pgid), 0);
    strictEqual(await processStartTime(stranger.pid), strangerTime, "the stranger still runs");
    deepStrictEqual(await Array.fromAsync(Deno.readDir(records)), []);
  } finally {
    killGroup(pgid);
    stranger.kill("SIGKILL");
    await stranger.status;
    await server.close();
  }
});

Deno.test("any other exit (Deno.exit, a second Ctrl-C) sends every tracked group SIGTERM", async () => {
  const script = `
    import { startProcessGroup } from "@amber/plugins/process_group";
    import { HostProcesses } from "./cli/host_processes.ts";
    const processes = new HostProcesses();
    processes.listen();
    const group = await startProcessGroup({
      argv: ["bash", "-c", "sleep 300 & sleep 300"],
      cwd: Deno.cwd(),
      env: processes.environment().env,
      onOutput: () => {},
    });
    processes.track(group, ["sleep"]);
    console.log(group.pid);
    Deno.exit(7);
  `;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  strictEqual(output.code, 7, new TextDecoder().decode(output.stderr));
  const pgid = Number(new TextDecoder().decode(output.stdout).trim());
  ok(pgid > 0);
  try {
    await until(async () => (await liveInGroup(pgid)) === 0 ? true : undefined, "the group");
  } finally {
    killGroup(pgid);
  }
});

for (const exitGraceMs of [0, 300]) {
  Deno.test(`a front end that does not end on SIGTERM still exits (grace ${exitGraceMs} ms)`, async () => {
    // The host's own handler: the group is stopped, then amber exits, at once or after the grace
    // a front end that handles the signal itself gets; here the process would otherwise hang.
    const script = `
      import { startProcessGroup } from "@amber/plugins/process_group";
      import { HostProcesses } from "./cli/host_processes.ts";
      const processes = new HostProcesses({ exitGraceMs: ${exitGraceMs} });
      processes.listen();
      const group = await startProcessGroup({
        argv: ["sleep", "300"],
        cwd: Deno.cwd(),
        env: {},
        onOutput: () => {},
      });
      processes.track(group, ["sleep", "300"]);
      console.log(group.pid);
      setInterval(() => {}, 1000);
    `;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", script],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const pgid = Number((await reader.read()).value?.trim());
    reader.releaseLock();
    try {
      ok(pgid > 0);
      await until(async () => (await liveInGroup(pgid)) === 1 ? true : undefined, "the sleep");
      const signalled = performance.now();
      child.kill("SIGTERM");
      const status = await child.status;
      const took = performance.now() - signalled;
      await child.stderr.cancel();
      strictEqual(status.code, 143);
      strictEqual(await liveInGroup(pgid), 0);
      ok(took >= exitGraceMs && took < exitGraceMs + 2000, `exited after ${took} ms`);
    } finally {
      killGroup(pgid);
    }
  });
}
