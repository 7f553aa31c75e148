import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import {
  groupAlive,
  MCP_DEFAULT_ENV,
  McpProcessError,
  stdioEnvironment,
  StdioTransport,
  type StdioTransportOptions,
} from "../../mcp/stdio_transport.ts";
import { GARBAGE_LINE } from "./_servers/garbage.ts";

const ROOT = fromFileUrl(new URL("../../", import.meta.url));
const server = (name: string): string =>
  fromFileUrl(new URL(`./_servers/${name}.ts`, import.meta.url));

// Whether `pid` is a live process (a zombie is dead, only not yet collected).
function alive(pid: number): boolean {
  // ps, not /proc/<pid>: the suite's permissions do not let Deno read another process's /proc.
  const { stdout } = new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] })
    .outputSync();
  const state = new TextDecoder().decode(stdout).trim();
  return state !== "" && !/^[ZX]/.test(state);
}

// The processes of group `pgid` per `ps`, zombies left out.
function psGroup(pgid: number): string[] {
  const { stdout } = new Deno.Command("ps", { args: ["-o", "pid=,stat=", "-g", String(pgid)] })
    .outputSync();
  return new TextDecoder().decode(stdout).split("\n").map((line) => line.trim())
    .filter((line) => line !== "" && !line.split(/\s+/)[1]?.startsWith("Z"));
}

function transport(
  overrides: Partial<StdioTransportOptions> & Pick<StdioTransportOptions, "command">,
  stderr: string[] = [],
): StdioTransport {
  return new StdioTransport({
    env: stdioEnvironment(Deno.env.toObject()),
    cwd: ROOT,
    onStderr: (line) => stderr.push(line),
    ...overrides,
  });
}

function denoServer(name: string, args: string[] = [], stderr: string[] = []): StdioTransport {
  return transport(
    { command: Deno.execPath(), args: ["run", "-A", server(name), ...args] },
    stderr,
  );
}

Deno.test("stdioEnvironment: the default names from amber's environment, the entry's over them", () => {
  assert.deepEqual(MCP_DEFAULT_ENV, ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]);
  const amber = {
    HOME: "/h",
    LOGNAME: "l",
    PATH: "/bin",
    SHELL: "/bin/sh",
    TERM: "xterm",
    USER: "u",
    ANTHROPIC_API_KEY: "sk-ant-secret",
    GITHUB_TOKEN: "ghp_secret",
    LANG: "C",
    UNSET: undefined,
  };
  assert.deepEqual(stdioEnvironment(amber, { PATH: "/opt", GITHUB_TOKEN: "named" }), {
    HOME: "/h",
    LOGNAME: "l",
    PATH: "/opt",
    SHELL: "/bin/sh",
    TERM: "xterm",
    USER: "u",
    GITHUB_TOKEN: "named",
  });
});

Deno.test("the server gets exactly the environment given, nothing of amber's", async () => {
  Deno.env.set("AMBER_H1_SECRET_TOKEN", "do-not-pass-0001");
  try {
    const stderr: string[] = [];
    const env = stdioEnvironment(Deno.env.toObject(), { NAMED: "yes" });
    const printing = transport({ command: "sh", args: ["-c", "env >&2"], env }, stderr);
    await printing.start();
    assert.equal(
      await printing.closed,
      `its process exited with code 0: ${stderr.slice(-5).join(" | ")}`,
    );
    const names = stderr.map((line) => line.split("=")[0]).filter((name) => name !== "");
    // sh adds its own few (PWD, SHLVL, _); nothing else of ours arrives.
    const own = new Set(["PWD", "SHLVL", "_", "OLDPWD"]);
    assert.deepEqual(
      names.filter((name) => !own.has(name)).sort(),
      [...Object.keys(env)].sort(),
    );
    assert.equal(stderr.some((line) => line.includes("do-not-pass-0001")), false);
    assert.ok(stderr.includes("NAMED=yes"));
  } finally {
    Deno.env.delete("AMBER_H1_SECRET_TOKEN");
  }
});

Deno.test("a server that exits: closed says how, with its last stderr lines", async () => {
  const stderr: string[] = [];
  const crashing = denoServer("crash", ["--at-start", "--code=7"], stderr);
  let closedCalls = 0;
  crashing.onclose = () => closedCalls++;
  await crashing.start();
  const pid = crashing.pid!;
  const reason = await crashing.closed;
  assert.equal(
    reason,
    "its process exited with code 7: crash: told to fail at start, exiting with 7",
  );
  assert.deepEqual(stderr, ["crash: told to fail at start, exiting with 7"]);
  assert.equal(closedCalls, 1);
  assert.equal(groupAlive(pid), false);
  await assert.rejects(
    crashing.send({ jsonrpc: "2.0", method: "ping", id: 1 }),
    McpProcessError,
  );
});

Deno.test("a line that is not JSON-RPC ends the connection, quoting it, and the group", async () => {
  const spewing = denoServer("garbage", ["--at=start"]);
  const errors: Error[] = [];
  spewing.onerror = (error) => errors.push(error);
  await spewing.start();
  const pid = spewing.pid!;
  const reason = await spewing.closed;
  assert.equal(reason, `it wrote a line that is not JSON-RPC: ${JSON.stringify(GARBAGE_LINE)}`);
  assert.ok(errors[0] instanceof McpProcessError);
  assert.equal(groupAlive(pid), false);
  assert.deepEqual(psGroup(pid), []);
});

Deno.test("a long garbage line is quoted by its start", async () => {
  const long = "x".repeat(500);
  const spewing = transport({ command: "sh", args: ["-c", `echo ${long}; exec sleep 300`] });
  await spewing.start();
  assert.equal(
    await spewing.closed,
    `it wrote a line that is not JSON-RPC: ${JSON.stringify("x".repeat(80) + "…")}`,
  );
  assert.equal(alive(spewing.pid!), false);
});

Deno.test("messages both ways over the pipes, blank lines skipped", async () => {
  const script = [
    `printf '\\n{"jsonrpc":"2.0","id":1,"result":{}}\\r\\n'`,
    "read line",
    `printf '%s\\n' "$line"`,
    "exec sleep 300",
  ].join("; ");
  const echoing = transport({ command: "sh", args: ["-c", script] });
  const received: unknown[] = [];
  const second = Promise.withResolvers<void>();
  echoing.onmessage = (message) => {
    received.push(message);
    if (received.length === 2) second.resolve();
  };
  await echoing.start();
  await echoing.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await second.promise;
  assert.deepEqual(received, [
    { jsonrpc: "2.0", id: 1, result: {} },
    { jsonrpc: "2.0", method: "notifications/initialized" },
  ]);
  await echoing.close();
  assert.equal(await echoing.closed, "closed");
});

Deno.test("close() stops the whole group, what the server started included", async () => {
  const stderr: string[] = [];
  const spawned: { pid: number; argv: readonly string[] }[] = [];
  const script = "sleep 300 & echo child $! >&2; sleep 300 & wait";
  const parent = transport({
    command: "sh",
    args: ["-c", script],
    onSpawn: (process, argv) => spawned.push({ pid: process.pid, argv }),
  }, stderr);
  await parent.start();
  while (stderr.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  const child = Number(stderr[0].split(" ")[1]);
  const pid = parent.pid!;
  assert.deepEqual(spawned, [{ pid, argv: ["sh", "-c", script] }]);
  assert.equal(alive(child), true);
  assert.equal(psGroup(pid).length, 3);
  await parent.close();
  assert.equal(alive(child), false);
  assert.equal(alive(pid), false);
  assert.equal(groupAlive(pid), false);
  assert.deepEqual(psGroup(pid), []);
  assert.equal(await parent.closed, "closed");
  // Closing again is harmless.
  await parent.close();
});

Deno.test("a server that ignores SIGTERM is killed after the grace", async () => {
  const stderr: string[] = [];
  const stuck = transport({
    command: Deno.execPath(),
    args: ["run", "-A", server("hang"), "--at=initialize", "--ignore-term"],
    graceMs: 300,
  }, stderr);
  await stuck.start();
  while (!stderr.some((line) => line.includes("answering none"))) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const pid = stuck.pid!;
  const started = performance.now();
  await stuck.close();
  const took = performance.now() - started;
  assert.equal(alive(pid), false);
  assert.deepEqual(psGroup(pid), []);
  assert.ok(stderr.some((line) => line.includes("SIGTERM ignored")), stderr.join("\n"));
  // stdin's grace (200 ms) and SIGTERM's (300 ms), then SIGKILL.
  assert.ok(took >= 450 && took < 3000, `took ${took} ms`);
});

Deno.test("a leader that exits at once: what it left in its group is stopped before closed", async () => {
  const stderr: string[] = [];
  // `sleep` inherits the ignored SIGTERM, so only SIGKILL ends it.
  const leaving = transport({
    command: "sh",
    args: ["-c", "trap '' TERM; sleep 300 & echo $! >&2; exit 4"],
    graceMs: 300,
  }, stderr);
  await leaving.start();
  const pid = leaving.pid!;
  const reason = await leaving.closed;
  const child = Number(stderr[0]);
  assert.equal(reason, `its process exited with code 4: ${child}`);
  assert.equal(alive(child), false);
  assert.deepEqual(psGroup(pid), []);
});

Deno.test("the stop handed to onSpawn ends the group too", async () => {
  let stop: (() => Promise<unknown>) | undefined;
  let finished: Promise<unknown> | undefined;
  const sleeper = transport({
    command: "sleep",
    args: ["300"],
    onSpawn: (process) => {
      stop = process.stop;
      finished = process.finished;
    },
  });
  await sleeper.start();
  await stop!();
  assert.equal(await finished, "closed");
  assert.equal(alive(sleeper.pid!), false);
});

Deno.test("a program that is not there: start rejects, nothing runs", async () => {
  const missing = transport({ command: "amber-no-such-program-h1" });
  await assert.rejects(missing.start(), (error: unknown) => {
    assert.ok(error instanceof McpProcessError);
    assert.match(error.message, /could not start 'amber-no-such-program-h1': no program/);
    return true;
  });
  await missing.close();
  assert.equal(await missing.closed, "closed");
});
