// cli/acp/editor.ts over a real in-process ACP connection (the SDK's agent and client apps
// joined directly): which members the capabilities give, and what an editor that fails, answers
// nonsense or never answers leads to. Nothing here may hang: every wait is bounded.

import assert from "node:assert/strict";
import {
  agent,
  client,
  type ClientApp,
  methods,
  RequestError,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import type { EditorCommand } from "@amber/core";
import { acpEditor, type AcpEditorOptions, EditorRequestError } from "../../cli/acp/editor.ts";
import type { SessionEvent } from "../../cli/session/mod.ts";

const ALL = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

function connect(app: ClientApp, options: Partial<AcpEditorOptions> = {}) {
  const connection = agent({ name: "amber" }).connect(app);
  const editor = acpEditor({
    client: connection.client,
    sessionId: "s1",
    capabilities: ALL,
    ...options,
  });
  return { editor, service: editor.service!, [Symbol.dispose]: () => connection.close() };
}

function command(signal: AbortSignal, toolCallId?: string): EditorCommand {
  return {
    command: "bash",
    args: ["-c", "true"],
    cwd: "/",
    signal,
    ...(toolCallId === undefined ? {} : { toolCallId }),
  };
}

Deno.test("the service has exactly the members the editor declared", () => {
  const app = client({ name: "editor" });
  using none = connect(app, { capabilities: {} });
  assert.equal(none.editor.service, undefined);
  using unknown = connect(app, { capabilities: undefined });
  assert.equal(unknown.editor.service, undefined);
  using reads = connect(app, { capabilities: { fs: { readTextFile: true } } });
  assert.deepEqual(Object.keys(reads.service), ["readTextFile"]);
  using terminal = connect(app, { capabilities: { terminal: true } });
  assert.deepEqual(Object.keys(terminal.service), ["runCommand"]);
  using all = connect(app);
  assert.deepEqual(Object.keys(all.service).sort(), [
    "readTextFile",
    "runCommand",
    "writeTextFile",
  ]);
});

Deno.test("files: the editor's text, its failures and its nonsense", async () => {
  const written: { path: string; content: string; sessionId: string }[] = [];
  let answer: unknown = { content: "unsaved" };
  const app = client({ name: "editor" })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      if (params.path === "/locked") throw RequestError.internalError({}, "buffer is locked");
      return answer as { content: string };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      written.push(params);
      return {};
    });
  using t = connect(app);
  assert.equal(await t.service.readTextFile!("/a.txt"), "unsaved");
  await t.service.writeTextFile!("/a.txt", "new");
  assert.deepEqual(written, [{ sessionId: "s1", path: "/a.txt", content: "new" }]);
  const locked = await t.service.readTextFile!("/locked").catch((error) => error);
  assert.ok(locked instanceof EditorRequestError);
  assert.equal(locked.method, "fs/read_text_file");
  assert.match(locked.message, /^the editor's fs\/read_text_file failed: .*buffer is locked/);
  answer = { content: 42 };
  await assert.rejects(t.service.readTextFile!("/a.txt"), {
    name: "EditorRequestError",
    message: "the editor's fs/read_text_file failed: it answered without text (a number)",
  });
  answer = "garbage";
  await assert.rejects(t.service.readTextFile!("/a.txt"), /answered without text \(nothing\)/);
});

Deno.test("files: an editor that never answers fails the request in time, or on cancel", async () => {
  const app = client({ name: "editor" })
    .onRequest(methods.client.fs.readTextFile, () => new Promise<never>(() => {}));
  using t = connect(app, { requestMs: 100 });
  await assert.rejects(t.service.readTextFile!("/a.txt"), /no answer within 100 ms/);
  const controller = new AbortController();
  const read = t.service.readTextFile!("/a.txt", { signal: controller.signal });
  controller.abort();
  await assert.rejects(read, /fs\/read_text_file failed: cancelled/);
});

// A terminal the test controls: what each method answers, and the order they were asked in.
function terminalEditor(answers: {
  create?: () => unknown;
  wait?: (signal: AbortSignal) => Promise<unknown>;
  output?: () => unknown;
}) {
  const asked: string[] = [];
  const updates: SessionNotification[] = [];
  const app = client({ name: "editor" })
    .onRequest(methods.client.terminal.create, () => {
      asked.push("create");
      return (answers.create?.() ?? { terminalId: "t1" }) as { terminalId: string };
    })
    .onRequest(methods.client.terminal.waitForExit, ({ signal }) => {
      asked.push("wait");
      return (answers.wait?.(signal) ?? Promise.resolve({ exitCode: 0 })) as Promise<never>;
    })
    .onRequest(methods.client.terminal.kill, () => {
      asked.push("kill");
      return {};
    })
    .onRequest(methods.client.terminal.output, () => {
      asked.push("output");
      return (answers.output?.() ?? { output: "done\n", truncated: false }) as never;
    })
    .onRequest(methods.client.terminal.release, () => {
      asked.push("release");
      return {};
    })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    });
  return { app, asked, updates };
}

Deno.test("terminal: a command's output and exit, shown in the running call's row", async () => {
  const editor = terminalEditor({ wait: () => Promise.resolve({ exitCode: 2, signal: null }) });
  using t = connect(editor.app);
  let listener: ((event: SessionEvent) => void) | undefined;
  const stop = t.editor.follow({
    subscribe(l) {
      listener = l;
      return () => listener = undefined;
    },
  });
  const call = { id: "call-7", name: "bash", arguments: "{}" };
  listener!({ type: "toolStart", step: 1, call, verb: "running", summary: "$ true" });
  const result = await t.service.runCommand!(command(new AbortController().signal));
  assert.deepEqual(result, { output: "done\n", truncated: false, exitCode: 2, killed: false });
  assert.deepEqual(editor.asked, ["create", "wait", "output", "release"]);
  // The notification may trail the response it was sent before; give it a moment.
  for (let i = 0; i < 50 && editor.updates.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.deepEqual(editor.updates, [{
    sessionId: "s1",
    update: {
      sessionUpdate: "tool_call_update",
      toolCallId: "call-7",
      content: [{ type: "terminal", terminalId: "t1" }],
    },
  }]);
  stop();
  assert.equal(listener, undefined);
});

Deno.test("terminal: an editor that never reports the exit is killed on cancel, and let go", async () => {
  // wait_for_exit is answered only when amber withdraws it, and then with an error.
  const editor = terminalEditor({
    wait: (signal) =>
      new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("gone")))),
    output: () => ({ output: "partial", truncated: true }),
  });
  using t = connect(editor.app, { killGraceMs: 100 });
  const controller = new AbortController();
  const running = t.service.runCommand!(command(controller.signal, "c1"));
  setTimeout(() => controller.abort(), 100);
  const started = performance.now();
  const result = await running;
  assert.ok(performance.now() - started < 5_000);
  assert.deepEqual(result, { output: "partial", truncated: true, killed: true });
  assert.deepEqual(editor.asked, ["create", "wait", "kill", "wait", "output", "release"]);
});

Deno.test("terminal: nonsense answers are errors, and the terminal is still released", async () => {
  const noId = terminalEditor({ create: () => ({ terminalId: 7 }) });
  using a = connect(noId.app);
  await assert.rejects(
    a.service.runCommand!(command(new AbortController().signal)),
    /terminal\/create failed: it answered without a terminal id \(a number\)/,
  );
  assert.deepEqual(noId.asked, ["create"]);
  const badOutput = terminalEditor({
    wait: () => Promise.resolve({ exitCode: "zero" }),
    output: () => ({ output: ["x"] }),
  });
  using b = connect(badOutput.app);
  await assert.rejects(
    b.service.runCommand!(command(new AbortController().signal)),
    /terminal\/output failed: it answered without text \(a list\)/,
  );
  assert.deepEqual(badOutput.asked, ["create", "wait", "output", "release"]);
  // An exit status of the wrong types is no status at all.
  const oddExit = terminalEditor({
    wait: () => Promise.resolve({ exitCode: "zero", signal: 9 }),
    output: () => ({ output: "", truncated: "yes", exitStatus: { exitCode: 1 } }),
  });
  using c = connect(oddExit.app);
  assert.deepEqual(await c.service.runCommand!(command(new AbortController().signal)), {
    output: "",
    truncated: false,
    exitCode: 1,
    killed: false,
  });
});
