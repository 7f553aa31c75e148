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
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { EditorCommand } from "@amber/core";
import { acpEditor, type AcpEditorOptions, EditorRequestError } from "../../cli/acp/editor.ts";

const ALL = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

// The service over a connection to `app`; what it hands the agent's queue lands in `sent`.
function connect(app: ClientApp, options: Partial<AcpEditorOptions> = {}) {
  const connection = agent({ name: "amber" }).connect(app);
  const sent: SessionUpdate[] = [];
  const editor = acpEditor({
    client: connection.client,
    sessionId: "s1",
    capabilities: ALL,
    send: (update) => sent.push(update),
    ...options,
  });
  return { editor, service: editor.service!, sent, [Symbol.dispose]: () => connection.close() };
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

Deno.test("terminal: a command's output and exit, shown in its call's row through the queue", async () => {
  const editor = terminalEditor({ wait: () => Promise.resolve({ exitCode: 2, signal: null }) });
  const queued: SessionUpdate[] = [];
  using t = connect(editor.app, {
    send: (update) => {
      editor.asked.push("send");
      queued.push(update);
    },
  });
  t.editor.startCall("call-7");
  const result = await t.service.runCommand!(command(new AbortController().signal, "call-7"));
  assert.deepEqual(result, { output: "done\n", truncated: false, exitCode: 2, killed: false });
  // Shown as soon as it exists, before amber waits on it.
  assert.deepEqual(editor.asked, ["create", "send", "wait", "output", "release"]);
  assert.deepEqual(queued, [{
    sessionUpdate: "tool_call_update",
    toolCallId: "call-7",
    content: [{ type: "terminal", terminalId: "t1" }],
  }]);
  // Nothing went to the editor around the agent's queue, which orders it after the tool_call.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(editor.updates, []);
  // The call's last update gets its terminal, once.
  assert.deepEqual(t.editor.endCall("call-7"), ["t1"]);
  assert.deepEqual(t.editor.endCall("call-7"), []);
});

Deno.test("terminal: each call's commands show in its own row, and only a known call's", async () => {
  let made = 0;
  const editor = terminalEditor({ create: () => ({ terminalId: `t${++made}` }) });
  using t = connect(editor.app);
  const signal = new AbortController().signal;
  t.editor.startCall("a");
  t.editor.startCall("b");
  // The fourth belongs to no call; the fifth to one the editor was never told of (a
  // sub-agent's).
  for (const call of ["a", "b", "a", undefined, "sub"]) {
    await t.service.runCommand!(command(signal, call));
  }
  const rows = () =>
    t.sent.map((update) =>
      update.sessionUpdate === "tool_call_update"
        ? [update.toolCallId, update.content?.map((c) => c.type === "terminal" && c.terminalId)]
        : update.sessionUpdate
    );
  // The second command of `a` keeps the first's terminal in the row.
  assert.deepEqual(rows(), [["a", ["t1"]], ["b", ["t2"]], ["a", ["t1", "t3"]]]);
  assert.equal(made, 5);
  assert.deepEqual(t.editor.endCall("a"), ["t1", "t3"]);
  assert.deepEqual(t.editor.endCall("sub"), []);
  // A command of a call that already ended (left running past its deadline) shows nowhere.
  await t.service.runCommand!(command(signal, "a"));
  assert.equal(rows().length, 3);
  assert.deepEqual(t.editor.endCall("b"), ["t2"]);
  assert.deepEqual(t.editor.endCall("a"), []);
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
