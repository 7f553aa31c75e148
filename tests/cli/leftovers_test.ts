// Process records and leftovers with real processes: a group whose amber is gone is found and
// stopped whole, also when its leader has exited and the rest runs on; a pid now held by another
// process (another start time), or a group whose amber still runs, is left alone; a group the
// host tracks is recorded while it runs and forgotten when it ends.

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { startProcessGroup } from "@amber/plugins/process_group";
import { HostProcesses } from "../../cli/host_processes.ts";
import {
  currentProcess,
  listLeftovers,
  type ProcessRecord,
  processStartTime,
  recordProcess,
  RECORDS_DIR,
  stopLeftovers,
} from "../../cli/leftovers.ts";
import { tempDir } from "../_helpers.ts";

// An owner that is certainly gone: this process's pid with a start time it never had.
const GONE_OWNER = { pid: Deno.pid, startTime: "0" };

// A `sleep` leading its own process group (with a child of its own in the group), as amber starts
// them; the test process is its parent, so it is reaped once killed. Resolves once both run.
async function spawnGroup(): Promise<Deno.ChildProcess> {
  const child = new Deno.Command("setsid", {
    args: ["bash", "-c", "sleep 300 & exec sleep 300"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await waitForGroup(child.pid, 2);
  return child;
}

async function writeRecord(configDir: string, record: ProcessRecord): Promise<string> {
  const dir = join(configDir, RECORDS_DIR);
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `${record.pid}-${record.startTime}.json`);
  await Deno.writeTextFile(path, JSON.stringify(record));
  return path;
}

async function startTimeOf(pid: number): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const time = await processStartTime(pid);
    if (time !== undefined) return time;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`process ${pid} never showed up`);
}

// Processes still alive in group `pgid`, zombies aside.
async function liveInGroup(pgid: number): Promise<number> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pgid=,stat="] }).output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => Number(fields[0]) === pgid && !fields[1]?.startsWith("Z")).length;
}

async function waitForGroup(pgid: number, members: number): Promise<void> {
  for (let i = 0; i < 200 && await liveInGroup(pgid) < members; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function record(pid: number, startTime: string, owner = GONE_OWNER): ProcessRecord {
  return {
    pid,
    startTime,
    command: ["bash", "-c", "sleep 300"],
    session: "s1",
    owner,
    startedAt: new Date().toISOString(),
  };
}

Deno.test("processStartTime: the same for one process, undefined once it is gone", async () => {
  const child = new Deno.Command("sleep", { args: ["300"] }).spawn();
  const time = await startTimeOf(child.pid);
  strictEqual(await processStartTime(child.pid), time);
  ok(/^\d+$/.test(time), time);
  child.kill("SIGKILL");
  await child.status;
  strictEqual(await processStartTime(child.pid), undefined);
});

Deno.test("a group whose amber is gone is listed, then stopped whole, record and all", async () => {
  await using tmp = await tempDir();
  const child = await spawnGroup();
  try {
    strictEqual(await liveInGroup(child.pid), 2);
    const path = await writeRecord(tmp.dir, record(child.pid, await startTimeOf(child.pid)));
    deepStrictEqual((await listLeftovers(tmp.dir)).map((l) => [l.pid, l.session]), [
      [child.pid, "s1"],
    ]);
    const stopped = await stopLeftovers(tmp.dir);
    deepStrictEqual(stopped.map((l) => l.pid), [child.pid]);
    strictEqual((await child.status).signal, "SIGTERM");
    strictEqual(await liveInGroup(child.pid), 0, "the leader's child went with it");
    strictEqual(await Deno.stat(path).then(() => true, () => false), false);
    deepStrictEqual(await listLeftovers(tmp.dir), []);
  } finally {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // Already stopped.
    }
    await child.status;
  }
});

Deno.test("a group whose leader exited while the rest runs on is still a leftover", async () => {
  await using tmp = await tempDir();
  // The leader starts a quiet background child and exits after a moment, as a command whose
  // output pipe broke when amber was killed would.
  const leader = new Deno.Command("setsid", {
    args: ["bash", "-c", "sleep 300 & sleep 0.3"],
    stdin: "null",
  }).spawn();
  let stopped = false;
  try {
    await waitForGroup(leader.pid, 2);
    await writeRecord(tmp.dir, record(leader.pid, await startTimeOf(leader.pid)));
    await leader.status;
    strictEqual(await processStartTime(leader.pid), undefined, "the leader is gone");
    strictEqual(await liveInGroup(leader.pid), 1, "its child runs on");
    deepStrictEqual((await listLeftovers(tmp.dir)).map((l) => l.pid), [leader.pid]);
    deepStrictEqual((await stopLeftovers(tmp.dir)).map((l) => l.pid), [leader.pid]);
    stopped = (await liveInGroup(leader.pid)) === 0;
    ok(stopped, "the child was stopped");
  } finally {
    if (!stopped) Deno.kill(-leader.pid, "SIGKILL");
  }
});

Deno.test("a pid now held by another process (another start time) is left alone", async () => {
  await using tmp = await tempDir();
  const child = await spawnGroup();
  try {
    const real = await startTimeOf(child.pid);
    const path = await writeRecord(tmp.dir, record(child.pid, String(Number(real) - 1)));
    deepStrictEqual(await listLeftovers(tmp.dir), []);
    deepStrictEqual(await stopLeftovers(tmp.dir, { graceMs: 100 }), []);
    strictEqual(await processStartTime(child.pid), real, "still running");
    // The record was of a group that ended: it is cleared.
    strictEqual(await Deno.stat(path).then(() => true, () => false), false);
  } finally {
    Deno.kill(-child.pid, "SIGKILL");
    await child.status;
  }
});

Deno.test("a group whose amber still runs is not a leftover; a corrupt record is cleared", async () => {
  await using tmp = await tempDir();
  const child = await spawnGroup();
  try {
    const owned = await writeRecord(
      tmp.dir,
      record(child.pid, await startTimeOf(child.pid), await currentProcess()),
    );
    const corrupt = join(tmp.dir, RECORDS_DIR, "1-1.json");
    await Deno.writeTextFile(corrupt, "{ not json");
    deepStrictEqual(await listLeftovers(tmp.dir), []);
    deepStrictEqual(await stopLeftovers(tmp.dir, { graceMs: 100 }), []);
    ok(await processStartTime(child.pid) !== undefined, "still running");
    ok(await Deno.stat(owned).then(() => true), "its record stays");
    strictEqual(await Deno.stat(corrupt).then(() => true, () => false), false);
  } finally {
    Deno.kill(-child.pid, "SIGKILL");
    await child.status;
  }
});

Deno.test("a leftover that ignores SIGTERM gets SIGKILL after the grace period", async () => {
  await using tmp = await tempDir();
  const child = new Deno.Command("setsid", {
    args: ["bash", "-c", "trap '' TERM; while :; do sleep 0.05; done"],
    stdin: "null",
  }).spawn();
  try {
    await writeRecord(tmp.dir, record(child.pid, await startTimeOf(child.pid)));
    await new Promise((resolve) => setTimeout(resolve, 100)); // the trap is set
    deepStrictEqual((await stopLeftovers(tmp.dir, { graceMs: 200 })).map((l) => l.pid), [
      child.pid,
    ]);
    strictEqual((await child.status).signal, "SIGKILL");
  } finally {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // Already stopped.
    }
    await child.status;
  }
});

Deno.test("the host records what it tracks while it runs and forgets it when it ends", async () => {
  await using tmp = await tempDir();
  const processes = new HostProcesses({ configDir: tmp.dir });
  processes.session = "20260101-abc";
  const group = await startProcessGroup({
    argv: ["sleep", "300"],
    cwd: tmp.dir,
    env: processes.environment().env,
    onOutput: () => {},
  });
  processes.track(group, ["sleep", "300"]);
  const dir = join(tmp.dir, RECORDS_DIR);
  let names: string[] = [];
  for (let i = 0; i < 200 && names.length === 0; i++) {
    names = await Array.fromAsync(Deno.readDir(dir)).then((e) => e.map((x) => x.name), () => []);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  strictEqual(names.length, 1);
  const written = JSON.parse(await Deno.readTextFile(join(dir, names[0])));
  deepStrictEqual(
    [written.pid, written.startTime, written.command, written.session, written.owner],
    [group.pid, await processStartTime(group.pid), ["sleep", "300"], "20260101-abc", {
      pid: Deno.pid,
      startTime: await processStartTime(Deno.pid),
    }],
  );
  await processes.stopAll();
  strictEqual(processes.running, 0);
  deepStrictEqual(await Array.fromAsync(Deno.readDir(dir)), []);
});

Deno.test("stopAll after a group ended on its own returns once its record is off the disk", async () => {
  // A host closing right after a command ends (a session's last tool call): the group has left the
  // running set while its record is still being written or removed, and whoever closes the host
  // may remove the config folder next. Short commands, many times: the window is a few file ops.
  await using tmp = await tempDir();
  const dir = join(tmp.dir, RECORDS_DIR);
  const processes = new HostProcesses({ configDir: tmp.dir });
  for (let round = 0; round < 50; round++) {
    const group = await startProcessGroup({
      argv: ["true"],
      cwd: tmp.dir,
      env: processes.environment().env,
      onOutput: () => {},
    });
    processes.track(group, ["true"]);
    await group.finished;
    await processes.stopAll();
    strictEqual(processes.running, 0);
    const left = await Array.fromAsync(Deno.readDir(dir)).then(
      (e) => e.map((x) => x.name),
      () => [],
    );
    deepStrictEqual(left, [], `round ${round}`);
  }
});

Deno.test("recordProcess refuses a pid that is not running", async () => {
  await using tmp = await tempDir();
  const error = await recordProcess(tmp.dir, 2 ** 22 + 12345, { command: ["x"] }).then(
    () => undefined,
    (e: unknown) => e,
  );
  ok(error instanceof Error);
  strictEqual(error.name, "ProcessNotRunningError");
});
