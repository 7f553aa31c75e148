// The file tools and bash with an editor's service in the host (`HostServices.editor`): what
// goes through the editor, what stays on disk, and what an editor that fails or answers
// nonsense leads to. The editor here is in memory (its buffers) and, for terminals, spawns real
// processes; the plugins get it through a real runtime's views.

import assert from "node:assert/strict";
import type {
  EditorCommand,
  EditorCommandResult,
  EditorService,
  HostServices,
  ProcessPolicy,
  ToolResult,
} from "@amber/core";
import { createToolBashPlugin } from "@amber/plugins/tool_bash";
import { createToolEditPlugin } from "@amber/plugins/tool_edit";
import { createToolReadPlugin, MAX_EDITOR_READ_BYTES } from "@amber/plugins/tool_read";
import { createToolWritePlugin } from "@amber/plugins/tool_write";
import { toolPlugin } from "@amber/plugins/tool_plugin";
import { makeRuntime } from "../_helpers.ts";

// An editor holding unsaved buffers; it reads a file's buffer, else the disk, and writes into
// its buffers only (the disk changes when the user saves, which never happens here).
class FakeEditor {
  readonly buffers = new Map<string, string>();
  readonly writes: { path: string; text: string }[] = [];
  readonly commands: EditorCommand[] = [];
  failRead?: string;
  answer?: unknown;

  service(offer: { files?: boolean; terminal?: boolean } = { files: true }): EditorService {
    return {
      ...(offer.files
        ? {
          readTextFile: (path: string) => this.#read(path),
          writeTextFile: (path: string, text: string) => {
            this.writes.push({ path, text });
            this.buffers.set(path, text);
            return Promise.resolve();
          },
        }
        : {}),
      ...(offer.terminal ? { runCommand: (command: EditorCommand) => this.#run(command) } : {}),
    };
  }

  async #read(path: string): Promise<string> {
    if (this.failRead !== undefined) throw new Error(this.failRead);
    if (this.answer !== undefined) return this.answer as string;
    return this.buffers.get(path) ?? await Deno.readTextFile(path);
  }

  // A real process with the editor's own environment (this test's), killed on abort.
  async #run(command: EditorCommand): Promise<EditorCommandResult> {
    this.commands.push(command);
    const child = new Deno.Command(command.command, {
      args: [...command.args],
      cwd: command.cwd,
      env: { ...command.env },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const kill = () => child.kill("SIGKILL");
    command.signal.addEventListener("abort", kill, { once: true });
    const { stdout, code, signal } = await child.output();
    command.signal.removeEventListener("abort", kill);
    return {
      output: new TextDecoder().decode(stdout),
      truncated: false,
      ...(signal === null ? { exitCode: code } : { signal }),
      killed: command.signal.aborted,
    };
  }
}

interface Tools extends AsyncDisposable {
  readonly root: string;
  /** Runs a tool as the kernel does, as the model's call `callId` when given. */
  run(name: string, args: unknown, signal?: AbortSignal, callId?: string): Promise<ToolResult>;
  preview(name: string, args: unknown): Promise<unknown>;
}

async function tools(host: HostServices): Promise<Tools> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-editor-" }));
  const { runtime, registries } = makeRuntime({ workspace: { root }, host, allOn: true });
  for (
    const plugin of [
      createToolReadPlugin(),
      createToolEditPlugin(),
      createToolWritePlugin(),
      createToolBashPlugin(),
    ]
  ) runtime.register(plugin);
  await runtime.start();
  return {
    root,
    run: (name, args, signal, callId) =>
      registries.tool.execute(name, args, {
        signal: signal ?? new AbortController().signal,
        ...(callId === undefined ? {} : { callId }),
      }),
    preview: (name, args) =>
      Promise.resolve(
        registries.tool.get(name)?.tool.preview?.(args as never, {
          signal: new AbortController().signal,
        }),
      ),
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("read: the editor's unsaved text, numbered and windowed as from disk", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service() });
  await Deno.writeTextFile(`${t.root}/a.txt`, "saved\n");
  editor.buffers.set(`${t.root}/a.txt`, "one\ntwo\nthree\n");
  const result = await t.run("read", { path: "a.txt", limit: 2 });
  assert.equal(result.ok, true);
  assert.equal(
    result.output,
    "    1\tone\n    2\ttwo\n\n[1 more line of 3; read with offset=3 to continue]",
  );
  // A buffer never saved is read too.
  editor.buffers.set(`${t.root}/new.txt`, "draft");
  assert.equal((await t.run("read", { path: "new.txt" })).output, "    1\tdraft");
});

Deno.test("read: a text file over the editor's bound is read from disk, a window at a time", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service() });
  editor.failRead = "must not be asked";
  const line = "x".repeat(99) + "\n";
  await Deno.writeTextFile(`${t.root}/big.log`, line.repeat(MAX_EDITOR_READ_BYTES / 100 + 1));
  const result = await t.run("read", { path: "big.log", limit: 1 });
  assert.equal(result.ok, true, result.error);
  assert.match(result.output, /^ {4}1\tx{99}\n\n\[\d+ more lines/);
});

Deno.test("read: images, binary and missing files are judged on disk", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service() });
  editor.failRead = "must not be asked";
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
  await Deno.writeFile(`${t.root}/i.png`, png);
  const image = await t.run("read", { path: "i.png" });
  assert.equal(image.ok, true);
  assert.equal(image.images?.length, 1);
  await Deno.writeFile(`${t.root}/b.bin`, new Uint8Array([104, 0, 105]));
  assert.equal(
    (await t.run("read", { path: "b.bin" })).error,
    "cannot read b.bin: it is a binary file",
  );
  await Deno.mkdir(`${t.root}/dir`);
  assert.match((await t.run("read", { path: "dir" })).error ?? "", /dir is a directory/);
  // Missing on disk, and the editor has nothing either.
  assert.equal((await t.run("read", { path: "gone.txt" })).error, "file not found: gone.txt");
});

Deno.test("read: an editor that fails or answers nonsense gives an error naming the path", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service() });
  await Deno.writeTextFile(`${t.root}/a.txt`, "saved\n");
  editor.failRead = "buffer is locked";
  const failed = await t.run("read", { path: "a.txt" });
  assert.equal(failed.ok, false);
  assert.equal(failed.error, "cannot read a.txt: the editor could not read it: buffer is locked");
  editor.failRead = undefined;
  editor.answer = { not: "text" };
  const garbage = await t.run("read", { path: "a.txt" });
  assert.equal(
    garbage.error,
    "cannot read a.txt: the editor answered with something other than text",
  );
});

Deno.test("edit: changes the editor's text and writes it back through the editor", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service() });
  const path = `${t.root}/a.txt`;
  await Deno.writeTextFile(path, "alpha\n");
  editor.buffers.set(path, "alpha\nbeta\n");
  const args = { path: "a.txt", old_string: "beta", new_string: "gamma" };
  // The approval question's diff is of the editor's text.
  assert.deepEqual(await t.preview("edit", args), {
    path: "a.txt",
    before: "alpha\nbeta\n",
    after: "alpha\ngamma\n",
  });
  const result = await t.run("edit", args);
  assert.equal(result.ok, true, result.error);
  assert.deepEqual(editor.writes, [{ path, text: "alpha\ngamma\n" }]);
  assert.equal(await Deno.readTextFile(path), "alpha\n", "the disk is the editor's to save");
  assert.deepEqual(result.change, {
    path: "a.txt",
    before: "alpha\nbeta\n",
    after: "alpha\ngamma\n",
  });
});

Deno.test("edit: refuses a non-UTF-8 file on disk and names the path when the editor fails", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service() });
  await Deno.writeFile(`${t.root}/latin1.txt`, new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  const refused = await t.run("edit", { path: "latin1.txt", old_string: "caf", new_string: "x" });
  assert.match(refused.error ?? "", /not valid UTF-8/);
  await Deno.writeTextFile(`${t.root}/a.txt`, "one\n");
  editor.failRead = "no such buffer";
  const failed = await t.run("edit", { path: "a.txt", old_string: "one", new_string: "two" });
  assert.equal(failed.error, "cannot edit a.txt: the editor could not read it: no such buffer");
  assert.deepEqual(editor.writes, []);
});

Deno.test("edit and write stay on disk when the editor only reads", async () => {
  const editor = new FakeEditor();
  const readOnly = { readTextFile: editor.service().readTextFile! };
  await using t = await tools({ editor: readOnly });
  await Deno.writeTextFile(`${t.root}/a.txt`, "one\n");
  editor.buffers.set(`${t.root}/a.txt`, "unsaved\n");
  const result = await t.run("edit", { path: "a.txt", old_string: "one", new_string: "two" });
  assert.equal(result.ok, true, result.error);
  assert.equal(await Deno.readTextFile(`${t.root}/a.txt`), "two\n");
  // read still shows the editor's text.
  assert.equal((await t.run("read", { path: "a.txt" })).output, "    1\tunsaved");
});

Deno.test("write: replaces the editor's text, keeping its CRLF, and makes missing folders", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service() });
  const path = `${t.root}/a.txt`;
  await Deno.writeTextFile(path, "disk\r\n");
  editor.buffers.set(path, "old\r\nlines\r\n");
  const result = await t.run("write", { path: "a.txt", content: "new\ntext\n" });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.output, "Overwrote a.txt (11 bytes; it had 12); kept its CRLF line ends");
  assert.deepEqual(result.change, {
    path: "a.txt",
    before: "old\r\nlines\r\n",
    after: "new\r\ntext\r\n",
  });
  assert.equal(await Deno.readTextFile(path), "disk\r\n");
  const created = await t.run("write", { path: "sub/dir/b.txt", content: "hi" });
  assert.equal(created.output, "Created sub/dir/b.txt (2 bytes)");
  assert.equal((await Deno.stat(`${t.root}/sub/dir`)).isDirectory, true);
  assert.deepEqual(editor.writes.map((w) => w.path), [path, `${t.root}/sub/dir/b.txt`]);
  await assert.rejects(Deno.stat(`${t.root}/sub/dir/b.txt`), Deno.errors.NotFound);
});

Deno.test("write: keeps the byte order mark the editor's text begins with", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service() });
  const path = `${t.root}/bom.txt`;
  await Deno.writeTextFile(path, "disk\n");
  editor.buffers.set(path, "\uFEFFold\n");
  const result = await t.run("write", { path: "bom.txt", content: "new\n" });
  assert.equal(result.ok, true, result.error);
  assert.deepEqual(editor.writes, [{ path, text: "\uFEFFnew\n" }]);
  assert.deepEqual(result.change, { path: "bom.txt", before: "old\n", after: "new\n" });
});

// A host policy that keeps `name` from children, as HostProcesses keeps a provider key.
function policyWithout(name: string): ProcessPolicy {
  return {
    environment() {
      const env = Deno.env.toObject();
      const secret = env[name];
      delete env[name];
      return { env, secrets: secret === undefined ? [] : [secret] };
    },
    track() {},
  };
}

Deno.test("bash: runs in the editor's terminal without amber's secrets, redacted", async () => {
  const name = "AMBER_EDITOR_TEST_KEY";
  Deno.env.set(name, "sk-editor-secret-1234");
  try {
    const editor = new FakeEditor();
    await using t = await tools({
      editor: editor.service({ terminal: true }),
      processes: policyWithout(name),
    });
    const result = await t.run("bash", {
      command: `echo "seen=[$${name}]"; echo sk-editor-secret-1234 >&2; pwd; exit 3`,
    });
    assert.equal(result.ok, true, result.error);
    assert.equal(result.output, `seen=[]\n[redacted]\n${t.root}\n[exit code 3]`);
    assert.deepEqual(result.data, { exitCode: 3 });
    const [command] = editor.commands;
    assert.equal(command.command, "env");
    assert.deepEqual(command.args.slice(0, 2), ["-u", name]);
    assert.equal(command.cwd, t.root);
    assert.equal(command.outputByteLimit, 120_000);
  } finally {
    Deno.env.delete(name);
  }
});

Deno.test("bash: the editor's command names the model's call running it, when there is one", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service({ terminal: true }) });
  await t.run("bash", { command: "true" }, undefined, "call_3_1");
  await t.run("bash", { command: "true" });
  assert.deepEqual(editor.commands.map((command) => command.toolCallId), ["call_3_1", undefined]);
  assert.ok(!Object.hasOwn(editor.commands[1], "toolCallId"));
});

Deno.test("bash: the timeout and the cancel kill the editor's command", async () => {
  const editor = new FakeEditor();
  await using t = await tools({ editor: editor.service({ terminal: true }) });
  const started = performance.now();
  const timedOut = await t.run("bash", { command: "echo begun; sleep 30", timeout_ms: 300 });
  assert.equal(timedOut.ok, false);
  assert.equal(
    timedOut.error,
    "timed out after 300 ms: the command was stopped. Output so far:\nbegun\n",
  );
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const cancelled = await t.run("bash", { command: "sleep 30" }, controller.signal);
  assert.equal(cancelled.error, "cancelled: the command was stopped. It printed nothing.");
  assert.ok(performance.now() - started < 10_000);
});

Deno.test("bash: an editor whose terminal fails gives an error result", async () => {
  const failing: EditorService = {
    runCommand: () => Promise.reject(new Error("terminals are off")),
  };
  await using t = await tools({ editor: failing });
  const result = await t.run("bash", { command: "true" });
  assert.equal(result.ok, false);
  assert.equal(result.error, "cannot run bash in the editor's terminal: terminals are off");
});

Deno.test("bash: long output from the editor is cut to its end, saying so", async () => {
  const editor: EditorService = {
    runCommand: () =>
      Promise.resolve({
        output: `${"x".repeat(40_000)}END`,
        truncated: true,
        exitCode: 0,
        killed: false,
      }),
  };
  await using t = await tools({ editor });
  const result = await t.run("bash", { command: "yes" });
  assert.ok(
    result.output.startsWith("[output cut: more than 40003 chars, showing the last 30000]\n"),
  );
  assert.ok(result.output.endsWith("END\n[exit code 0]"));
});

Deno.test("a plugin sees only the editor members the host offers, frozen", async () => {
  const editor = new FakeEditor();
  let seen: EditorService | undefined;
  const { runtime } = makeRuntime({ host: { editor: editor.service() }, allOn: true });
  runtime.register(toolPlugin({
    id: "peek",
    name: "Peek",
    description: "Keeps the editor service it is given.",
    tools: ["peek"],
    build(services) {
      seen = services.host.editor;
      return [];
    },
  }));
  await runtime.start();
  try {
    assert.ok(seen !== undefined);
    assert.deepEqual(Object.keys(seen).sort(), ["readTextFile", "writeTextFile"]);
    assert.ok(Object.isFrozen(seen));
  } finally {
    await runtime.stop();
  }
});

Deno.test("a plugin's malformed editor command is a rejection, not a throw", async () => {
  let seen: EditorService | undefined;
  const service: EditorService = {
    runCommand: () => Promise.resolve({ output: "", truncated: false, exitCode: 0, killed: false }),
  };
  const { runtime } = makeRuntime({ host: { editor: service }, allOn: true });
  runtime.register(toolPlugin({
    id: "careless",
    name: "Careless",
    description: "Hands the editor a command whose args are no list.",
    tools: ["careless"],
    build(services) {
      seen = services.host.editor;
      return [];
    },
  }));
  await runtime.start();
  try {
    const run = seen!.runCommand!;
    const pending = run({ command: "ls", args: 5 } as unknown as Parameters<typeof run>[0]);
    await assert.rejects(pending, TypeError);
  } finally {
    await runtime.stop();
  }
});
