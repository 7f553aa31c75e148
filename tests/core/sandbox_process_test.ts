import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DeadlineError, type PluginPermissions } from "@amber/core";
import {
  denoPermissionFlags,
  type InitializeResult,
  Method,
  PeerClosedError,
  PermissionsError,
  type PluginManifest,
  type PluginProcess,
  PluginProcessError,
  PROTOCOL_VERSION,
  RpcError,
  type SpawnPluginOptions,
  spawnPluginProcess,
} from "@amber/core/sandbox";

const FIXTURE = new URL("./_sandbox_fixtures/rpc_child.ts", import.meta.url).href;
const EXITING_HOST = fileURLToPath(new URL("./_sandbox_fixtures/exiting_host.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const CALL = { deadlineMs: 30_000, what: "a test call" };

async function inWorkspace(test: (workspace: string) => Promise<void>): Promise<void> {
  const workspace = await Deno.makeTempDir({ prefix: "amber_sandbox_" });
  try {
    await test(workspace);
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
}

function spawn(
  workspace: string,
  mode: string,
  options: Partial<SpawnPluginOptions> = {},
): PluginProcess {
  return spawnPluginProcess({
    specifier: mode,
    pluginId: "fixture",
    grant: {},
    workspace,
    dataDir: join(workspace, ".data"),
    readFolders: [],
    entry: [FIXTURE],
    ...options,
  });
}

// A file of /proc/<pid>, or undefined when there is no such process. Read through `cat`: Deno
// wants every permission for /proc files, and the suite runs with fewer.
async function procFile(pid: number, file: string): Promise<string | undefined> {
  const output = await new Deno.Command("cat", {
    args: [`/proc/${pid}/${file}`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return output.success ? new TextDecoder().decode(output.stdout) : undefined;
}

// Gone: no /proc entry, or a zombie nobody has reaped yet (the host side never leaves one).
async function gone(pid: number): Promise<boolean> {
  const status = await procFile(pid, "status");
  return status === undefined || /^State:\s+Z/m.test(status);
}

async function environmentOf(pid: number): Promise<Record<string, string>> {
  const text = await procFile(pid, "environ") ?? "";
  const entries = text.split("\0").filter((entry) => entry !== "").map((entry) => {
    const at = entry.indexOf("=");
    return [entry.slice(0, at), entry.slice(at + 1)];
  });
  return Object.fromEntries(entries);
}

Deno.test("a plugin process answers requests from a process of its own and stops", async () => {
  await inWorkspace(async (workspace) => {
    const process = spawn(workspace, "serve");
    assert.deepEqual(await process.call("echo", { a: [1, "x"] }, CALL), { a: [1, "x"] });
    const pid = await process.call<number>("pid", null, CALL);
    assert.equal(pid, process.pid);
    assert.notEqual(pid, Deno.pid);
    assert.equal(await gone(pid), false);
    const progress: unknown[] = [];
    const done = await process.call("progress", { values: [1, "two"] }, {
      ...CALL,
      onProgress: (value) => progress.push(value),
    });
    assert.equal(done, "done");
    assert.deepEqual(progress, [1, "two"]);
    await process.stop();
    assert.deepEqual(await process.ended, { reason: "its process was stopped", expected: true });
    assert.ok(await gone(pid));
    await assert.rejects(process.call("echo", {}, CALL), PeerClosedError);
  });
});

Deno.test("a call past its deadline kills the spinning process and says so", async () => {
  await inWorkspace(async (workspace) => {
    const process = spawn(workspace, "serve");
    await process.call("echo", {}, CALL);
    const what = "tool 'spin' of plugin 'fixture'";
    const started = performance.now();
    await assert.rejects(
      process.call("spin", {}, { deadlineMs: 300, what }),
      (error) => error instanceof DeadlineError && error.what === what && error.ms === 300,
    );
    assert.deepEqual(await process.ended, {
      reason: `its process was killed: ${what} did not answer within 300 ms`,
      expected: false,
    });
    assert.ok(performance.now() - started < 10_000);
    assert.ok(await gone(process.pid));
    await assert.rejects(process.call("echo", {}, CALL), PeerClosedError);
  });
});

Deno.test("a process that exits ends with its code and the last line it wrote", async () => {
  await inWorkspace(async (workspace) => {
    const process = spawn(workspace, "serve");
    await assert.rejects(process.call("exit", { code: 3 }, CALL), PeerClosedError);
    assert.deepEqual(await process.ended, {
      reason: "its process exited with code 3: Error: boom",
      expected: false,
    });
    assert.ok(await gone(process.pid));
  });
});

Deno.test("a process past its heap limit dies alone, and the reason says why", async () => {
  await inWorkspace(async (workspace) => {
    const process = spawn(workspace, "serve", { maxMemoryMb: 48 });
    await assert.rejects(process.call("hog", {}, CALL), PeerClosedError);
    const end = await process.ended;
    assert.match(end.reason, /^its process was ended by SIG[A-Z]+: Fatal JavaScript out of memory/);
    assert.equal(end.expected, false);
  });
});

Deno.test("a deadline too long for a timer is no deadline, not an instant kill", async () => {
  await inWorkspace(async (workspace) => {
    const process = spawn(workspace, "serve");
    for (const deadlineMs of [Infinity, 2 ** 40]) {
      assert.equal(await process.call("echo", "answered", { ...CALL, deadlineMs }), "answered");
    }
    await process.stop();
    assert.equal((await process.ended).reason, "its process was stopped");
  });
});

Deno.test("a plugin that throws at import ends with Deno's words for the error", async () => {
  await inWorkspace(async (workspace) => {
    const process = spawn(workspace, "throw");
    await assert.rejects(process.call("echo", {}, CALL), PeerClosedError);
    const end = await process.ended;
    assert.equal(end.reason, "its process exited with code 1: Error: boom at import");
    assert.equal(end.expected, false);
  });
});

Deno.test("garbage on stdout kills the process at once and ends it naming the line", async () => {
  await inWorkspace(async (workspace) => {
    const early = spawn(workspace, "garbage");
    assert.deepEqual(await early.ended, {
      reason: "it wrote to stdout what is not the protocol: 'hello from a careless plugin'",
      expected: false,
    });
    assert.ok(await gone(early.pid));

    const late = spawn(workspace, "serve");
    const long = "x".repeat(200);
    await assert.rejects(late.call("print", { text: long }, CALL), PeerClosedError);
    assert.equal(
      (await late.ended).reason,
      `it wrote to stdout what is not the protocol: '${"x".repeat(80)}'`,
    );
  });
});

Deno.test("every stderr line reaches onLog, in order", async () => {
  await inWorkspace(async (workspace) => {
    const lines: string[] = [];
    const process = spawn(workspace, "serve", { onLog: (line) => lines.push(line) });
    await process.call("log", { lines: ["first", "second", "", "third"] }, CALL);
    await process.stop();
    assert.deepEqual(lines, ["first", "second", "", "third"]);
  });
});

Deno.test("the process gets no secret from the host's environment, only granted names", async () => {
  await inWorkspace(async (workspace) => {
    // What Deno needs to find its cache comes from the real environment; the rest is made up.
    const needed: Record<string, string> = {};
    for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME", "PATH"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) needed[name] = value;
    }
    const host = {
      ...needed,
      LANG: "C.UTF-8",
      OPENAI_API_KEY: "sk-secret-1",
      ANTHROPIC_API_KEY: "sk-secret-2",
      AWS_SECRET_ACCESS_KEY: "secret-3",
      AMBER_GREETING: "hello",
      AMBER_OTHER: "not granted",
    };
    const process = spawn(workspace, "serve", {
      env: host,
      grant: { env: ["AMBER_GREETING", "AMBER_ABSENT"] },
    });
    await process.call("echo", {}, CALL);
    const seen = await environmentOf(process.pid);
    assert.deepEqual(seen, {
      ...needed,
      LANG: "C.UTF-8",
      AMBER_GREETING: "hello",
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
    });
    assert.equal(await process.call("env", { name: "AMBER_GREETING" }, CALL), "hello");
    await assert.rejects(
      process.call("env", { name: "HOME" }, CALL),
      (error) => error instanceof RpcError && /env access/.test(error.message),
    );
    await process.stop();
  });
});

Deno.test("by default the environment is picked from the host's, without its keys", async () => {
  const before = Deno.env.get("OPENAI_API_KEY");
  Deno.env.set("OPENAI_API_KEY", "sk-from-the-host");
  try {
    await inWorkspace(async (workspace) => {
      const process = spawn(workspace, "serve");
      await process.call("echo", {}, CALL);
      const seen = await environmentOf(process.pid);
      assert.equal(seen.OPENAI_API_KEY, undefined);
      for (const name of Object.keys(seen)) {
        assert.ok(
          [
            "HOME",
            "DENO_DIR",
            "XDG_CACHE_HOME",
            "PATH",
            "LANG",
            "NO_COLOR",
            "TMPDIR",
            "DENO_NO_UPDATE_CHECK",
          ].includes(name),
          name,
        );
      }
      await process.stop();
    });
  } finally {
    if (before === undefined) Deno.env.delete("OPENAI_API_KEY");
    else Deno.env.set("OPENAI_API_KEY", before);
  }
});

Deno.test("the process runs with exactly the flags of its grant, and they hold", async () => {
  await inWorkspace(async (workspace) => {
    await Deno.mkdir(join(workspace, "allowed"));
    await Deno.mkdir(join(workspace, "out"));
    await Deno.writeTextFile(join(workspace, "allowed", "a.txt"), "readable");
    await Deno.writeTextFile(join(workspace, "secret.txt"), "not for plugins");
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    const grant: PluginPermissions = { read: ["allowed"], write: ["out"], net: ["127.0.0.1"] };
    const readFolders = [join(workspace, "plugin")];
    const process = spawn(workspace, "serve", { grant, readFolders });
    try {
      // Asked once it answers: right after the spawn, the child may not have exec'd deno yet.
      await process.call("echo", {}, CALL);
      const args = (await procFile(process.pid, "cmdline") ?? "").split("\0");
      const first = args.indexOf("--config") + 2;
      const last = args.findIndex((arg) => arg.startsWith("--v8-flags="));
      const packages = ["core", "registries", "providers", "plugins", "cli"];
      assert.deepEqual(
        args.slice(first, last),
        denoPermissionFlags(grant, {
          workspace,
          dataDir: join(workspace, ".data"),
          readFolders: [...readFolders, ...packages.map((name) => join(ROOT, name))],
        }),
      );
      assert.deepEqual(args.slice(0, first), [
        Deno.execPath(),
        "run",
        "--no-prompt",
        "--no-lock",
        "--cached-only",
        "--node-modules-dir=none",
        "--config",
        join(ROOT, "deno.json"),
      ]);
      assert.deepEqual(args.slice(last).filter((arg) => arg !== ""), [
        "--v8-flags=--max-old-space-size=512",
        FIXTURE,
        "serve",
      ]);

      const denied = (what: RegExp) => (error: unknown) =>
        error instanceof RpcError && what.test(error.message);
      // Relative paths resolve in the workspace: it is the process's working folder.
      assert.equal(await process.call("read", { path: "allowed/a.txt" }, CALL), "readable");
      await assert.rejects(
        process.call("read", { path: join(workspace, "secret.txt") }, CALL),
        denied(/read access/),
      );
      await assert.rejects(
        process.call("read", { path: "/etc/passwd" }, CALL),
        denied(/read access/),
      );
      assert.equal(await process.call("write", { path: "out/x.txt" }, CALL), true);
      assert.equal(await Deno.readTextFile(join(workspace, "out", "x.txt")), "written");
      await assert.rejects(
        process.call("write", { path: "allowed/x.txt" }, CALL),
        denied(/write access/),
      );
      assert.equal(await process.call("connect", { port }, CALL), true);
      (await listener.accept()).close();
      await assert.rejects(process.call("run", { command: "id" }, CALL), denied(/run access/));
    } finally {
      listener.close();
      await process.stop();
    }

    const nothing = spawn(workspace, "serve", { grant: { net: ["example.com"] } });
    await assert.rejects(
      nothing.call("connect", { port: 9 }, CALL),
      (error) => error instanceof RpcError && /net access/.test(error.message),
    );
    await nothing.stop();
  });
});

Deno.test("stop() kills a process that ignores its stdin closing, and leaves none", async () => {
  await inWorkspace(async (workspace) => {
    const process = spawn(workspace, "stubborn");
    await process.call("echo", {}, CALL);
    const started = performance.now();
    await process.stop(200);
    assert.ok(performance.now() - started >= 150);
    assert.deepEqual(await process.ended, { reason: "its process was stopped", expected: true });
    assert.ok(await gone(process.pid));
    // Stopping or killing what is gone does nothing.
    await process.stop();
    process.kill("late");
    assert.equal((await process.ended).reason, "its process was stopped");
  });
});

Deno.test("a host that exits normally leaves no plugin process behind", async () => {
  await inWorkspace(async (workspace) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-lock", EXITING_HOST, workspace],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    const pid = Number(new TextDecoder().decode(output.stdout).trim());
    assert.ok(pid > 0);
    try {
      let waited = 0;
      while (!(await gone(pid)) && waited < 3_000) {
        await new Promise((done) => setTimeout(done, 50));
        waited += 50;
      }
      assert.ok(await gone(pid), `plugin process ${pid} outlived its host`);
    } finally {
      if (!(await gone(pid))) Deno.kill(pid, "SIGKILL");
    }
  });
});

Deno.test("by default the process runs amber's plugin-process entry on the plugin", async () => {
  await inWorkspace(async (workspace) => {
    const fixtures = fileURLToPath(new URL("./_sandbox_child_fixtures/", import.meta.url));
    const process = spawnPluginProcess({
      specifier: new URL("./_sandbox_child_fixtures/greeter.ts", import.meta.url).href,
      pluginId: "greeter",
      grant: {},
      workspace,
      dataDir: join(workspace, ".data"),
      readFolders: [fixtures],
    });
    const manifest = await process.call<PluginManifest>(
      Method.describe,
      { protocolVersion: PROTOCOL_VERSION, hostVersion: "0.1.0" },
      CALL,
    );
    assert.equal(manifest.id, "greeter");
    const ready = await process.call<InitializeResult>(Method.initialize, {
      pluginId: "greeter",
      workspace,
      config: { plugins: {} },
      section: {},
      tools: [],
      services: {},
    }, CALL);
    assert.equal(ready.ok, true);
    assert.deepEqual(
      await process.call(Method.toolExecute, {
        capability: "greet",
        tool: "greet",
        args: { name: "amber" },
      }, CALL),
      { ok: true, output: "Hello, amber!" },
    );
    await process.stop();
    assert.deepEqual(await process.ended, { reason: "its process was stopped", expected: true });
  });
});

Deno.test("a process that cannot start is a PluginProcessError; a bad grant never spawns", () => {
  const workspace = Deno.cwd();
  assert.throws(
    () => spawn(workspace, "serve", { denoPath: join(workspace, "no-such-deno") }),
    (error) =>
      error instanceof PluginProcessError && error.pluginId === "fixture" &&
      error.message.startsWith("the process of plugin 'fixture' could not start: "),
  );
  assert.throws(
    () => spawn(join(workspace, "a,b"), "serve", { grant: { read: ["."] } }),
    PermissionsError,
  );
  assert.throws(() => spawn(workspace, "serve", { grant: { read: ["/etc"] } }), PermissionsError);
});
