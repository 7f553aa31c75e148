// `amber acp` as an editor runs it: a real subprocess on stdio, driven by a client built from the
// same ACP package, against the fake provider on loopback.

import assert from "node:assert/strict";
import {
  client,
  type ClientConnection,
  methods,
  type RequestPermissionRequest,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { slowStream } from "../cli/_slow_stream.ts";
import { switchHelloOn } from "../_hello_on.ts";
import { tempDir } from "../_helpers.ts";
import { startAmberAcp, within } from "./_amber_acp.ts";

// A running `amber acp` and the editor side of its connection.
interface Editor extends AsyncDisposable {
  readonly agent: ClientConnection["agent"];
  readonly updates: SessionNotification[];
  readonly permissions: RequestPermissionRequest[];
  /** How many questions the agent withdrew while they were open. */
  readonly withdrawn: () => number;
  /** Resolves once an update for which `match` holds has arrived (at most `ms`). */
  until(match: (update: SessionNotification) => boolean, ms?: number): Promise<void>;
}

// The editor answers permission requests with `answers` in order, then with allow once; the
// answer "wait" leaves the question open until the agent withdraws it.
function startEditor(
  configDir: string,
  workspace: string,
  baseUrl: string,
  answers: string[] = [],
): Editor {
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  let withdrawn = 0;
  const waiters = new Set<() => void>();
  const app = client({ name: "test-editor" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
      for (const wake of [...waiters]) wake();
    })
    .onRequest(methods.client.session.requestPermission, async ({ params, signal }) => {
      permissions.push(params);
      const answer = answers.shift() ?? "allow_once";
      if (answer !== "wait") return { outcome: { outcome: "selected", optionId: answer } };
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      withdrawn++;
      return { outcome: { outcome: "cancelled" } };
    });
  const amber = startAmberAcp(app, { configDir, workspace, baseUrl });
  return {
    agent: amber.agent,
    updates,
    permissions,
    withdrawn: () => withdrawn,
    until(match, ms = 30_000) {
      if (updates.some(match)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error("the awaited update never came"));
        }, ms);
        const check = () => {
          if (!updates.some(match)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    [Symbol.asyncDispose]: () => amber[Symbol.asyncDispose](),
  };
}

function texts(updates: readonly SessionNotification[], kind: string): string {
  return updates.flatMap(({ update }) => {
    if (update.sessionUpdate !== kind || !("content" in update)) return [];
    const content = update.content;
    return content && !Array.isArray(content) && content.type === "text" ? [content.text] : [];
  }).join("");
}

Deno.test("amber acp edits a file with the editor's permission, then loads the session", async () => {
  await using tmp = await tempDir();
  const configDir = `${tmp.dir}/config`;
  const workspace = `${tmp.dir}/work`;
  await Deno.mkdir(workspace, { recursive: true });
  await Deno.writeTextFile(`${workspace}/a.txt`, "one\n");
  // A rule that makes the edit ask, so the question carries the change it would make.
  await Deno.mkdir(configDir, { recursive: true });
  await Deno.writeTextFile(`${configDir}/config.yaml`, "permissions:\n  ask: [edit]\n");
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(
    { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
    {
      toolCalls: [{
        name: "edit",
        arguments: { path: "a.txt", old_string: "one", new_string: "two" },
      }],
    },
    { toolCalls: [{ name: "bash", arguments: { command: "cat a.txt" } }] },
    { text: "Changed one to two." },
  );
  let amberSession: string;
  {
    await using editor = startEditor(configDir, workspace, `${server.url}/v1`);
    const init = await editor.agent.request(methods.agent.initialize, {
      protocolVersion: 1,
      clientCapabilities: {},
    });
    assert.equal(init.agentCapabilities?.loadSession, true);
    assert.equal(init.agentCapabilities?.promptCapabilities?.embeddedContext, true);
    const { sessionId } = await editor.agent.request(methods.agent.session.new, {
      cwd: workspace,
      mcpServers: [],
    });
    const response = await editor.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "Change one to two in" },
        { type: "resource_link", uri: `file://${workspace}/a.txt`, name: "a.txt" },
      ],
    });
    assert.equal(response.stopReason, "end_turn");
    assert.equal(await Deno.readTextFile(`${workspace}/a.txt`), "two\n");
    // The linked file reached the model as a line naming it.
    const body = server.requests[0].body as { messages: { role: string; content: unknown }[] };
    assert.equal(
      body.messages.find((message) => message.role === "user")?.content,
      `Change one to two in\n\n[file: ${workspace}/a.txt]`,
    );
    // The edit asked (a rule's question: no "always"), showing its diff; then the command.
    assert.deepEqual(editor.permissions.map((p) => p.toolCall.kind), ["edit", "execute"]);
    const [edit, command] = editor.permissions;
    assert.equal(edit.sessionId, sessionId);
    assert.deepEqual(edit.options.map((o) => o.kind), ["allow_once", "reject_once"]);
    assert.deepEqual(edit.toolCall.content, [{
      type: "diff",
      path: `${workspace}/a.txt`,
      oldText: "one\n",
      newText: "two\n",
    }]);
    assert.deepEqual(command.options.map((o) => o.kind), [
      "allow_once",
      "allow_always",
      "reject_once",
    ]);
    // The tool calls with their kinds, and the edit's diff as content.
    const started = editor.updates.flatMap(({ update }) =>
      update.sessionUpdate === "tool_call" ? [update] : []
    );
    assert.deepEqual(started.map((u) => u.kind), ["read", "edit", "execute"]);
    assert.deepEqual(started[1].locations, [{ path: `${workspace}/a.txt` }]);
    const diffs = editor.updates.flatMap(({ update }) =>
      update.sessionUpdate === "tool_call_update"
        ? (update.content ?? []).filter((c) => c.type === "diff")
        : []
    );
    assert.deepEqual(diffs, [{
      type: "diff",
      path: `${workspace}/a.txt`,
      oldText: "one\n",
      newText: "two\n",
    }]);
    const ended = editor.updates.flatMap(({ update }) =>
      update.sessionUpdate === "tool_call_update" && update.status ? [update.status] : []
    );
    assert.deepEqual(ended, ["completed", "completed", "completed"]);
    // The command's output, streamed or in its result, reached the editor.
    assert.ok(
      editor.updates.some(({ update }) =>
        update.sessionUpdate === "tool_call_update" &&
        (update.content ?? []).some((c) =>
          c.type === "content" && c.content.type === "text" && c.content.text.includes("two")
        )
      ),
    );
    assert.equal(texts(editor.updates, "agent_message_chunk"), "Changed one to two.");
    assert.ok(
      editor.updates.some(({ update }) => update.sessionUpdate === "available_commands_update"),
    );
    amberSession = String(response._meta?.amberSession);
  }
  {
    await using editor = startEditor(configDir, workspace, `${server.url}/v1`, ["reject_once"]);
    await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
    await editor.agent.request(methods.agent.session.load, {
      sessionId: amberSession,
      cwd: workspace,
      mcpServers: [],
    });
    // The conversation was replayed before load answered.
    assert.match(texts(editor.updates, "user_message_chunk"), new RegExp(`^Change one to two in`));
    assert.equal(texts(editor.updates, "agent_message_chunk"), "Changed one to two.");
    assert.deepEqual(
      editor.updates.flatMap(({ update }) =>
        update.sessionUpdate === "tool_call" ? [update.kind] : []
      ),
      ["read", "edit", "execute"],
    );
    // And it goes on: the next prompt answers in the same session; its plan reaches the editor
    // and the command the editor refuses does not run.
    const replayed = editor.updates.length;
    server.script(
      {
        toolCalls: [{
          name: "todowrite",
          arguments: { todos: [{ content: "Look again", status: "in_progress" }] },
        }],
      },
      { toolCalls: [{ name: "bash", arguments: { command: "rm a.txt" } }] },
      { text: "Still here." },
    );
    const next = await editor.agent.request(methods.agent.session.prompt, {
      sessionId: amberSession,
      prompt: [{ type: "text", text: "Are you there?" }],
    });
    assert.equal(next.stopReason, "end_turn");
    assert.equal(next._meta?.amberSession, amberSession);
    const later = editor.updates.slice(replayed).map(({ update }) => update);
    assert.deepEqual(
      later.flatMap((u) => u.sessionUpdate === "plan" ? [u.entries] : []),
      [[{ content: "Look again", status: "in_progress", priority: "medium" }]],
    );
    assert.deepEqual(
      later.flatMap((u) => u.sessionUpdate === "tool_call_update" && u.status ? [u.status] : []),
      ["completed", "failed"],
    );
    assert.equal(await Deno.readTextFile(`${workspace}/a.txt`), "two\n");
    // Loading a session amber does not have is an error, not an empty session.
    await assert.rejects(
      editor.agent.request(methods.agent.session.load, {
        sessionId: "20000101-000000-nosuch",
        cwd: workspace,
        mcpServers: [],
      }),
      /no amber session/,
    );
  }
});

Deno.test("amber acp cancels a turn mid-stream: the prompt answers cancelled", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/work`;
  await Deno.mkdir(workspace, { recursive: true });
  await using stream = slowStream({ text: "word ".repeat(200), chunkSize: 5 }, 50);
  await using editor = startEditor(`${tmp.dir}/config`, workspace, stream.url);
  await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const prompt = editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Talk for a long time." }],
  });
  await editor.until(({ update }) => update.sessionUpdate === "agent_message_chunk");
  await editor.agent.notify(methods.agent.session.cancel, { sessionId });
  const response = await within(prompt);
  assert.equal(response.stopReason, "cancelled");
  assert.ok(stream.sent() < stream.frames, "the answer was cut short");
});

Deno.test("amber acp: a plugin switched off by a slash command takes its commands along", async () => {
  await using tmp = await tempDir();
  const configDir = `${tmp.dir}/config`;
  const workspace = `${tmp.dir}/work`;
  await Deno.mkdir(workspace, { recursive: true });
  await switchHelloOn(configDir);
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  await using editor = startEditor(configDir, workspace, `${server.url}/v1`);
  await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const lists = () =>
    editor.updates.flatMap(({ update }) =>
      update.sessionUpdate === "available_commands_update"
        ? [update.availableCommands.map((c) => c.name)]
        : []
    );
  await editor.until(({ update }) => update.sessionUpdate === "available_commands_update");
  assert.ok(lists()[0].includes("hello"), `hello's command is offered: ${lists()[0]}`);
  assert.ok(lists()[0].includes("set"));
  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "/set plugin off hello" }],
  });
  assert.equal(response.stopReason, "end_turn");
  assert.equal(server.requests.length, 0, "a command is not sent to the model");
  assert.equal(lists().length, 2);
  assert.ok(!lists()[1].includes("hello"), `hello's command is gone: ${lists()[1]}`);
  assert.ok(lists()[1].includes("set"));
  // Switched on again, it brings them back.
  await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "/set plugin on hello" }],
  });
  assert.equal(lists().length, 3);
  // A root switched on again comes after those there now (tool_task's `/agents` among them).
  assert.deepEqual([...lists()[2]].sort(), [...lists()[0]].sort());
  // A command's answer is the agent's message.
  assert.match(texts(editor.updates, "agent_message_chunk"), /hello/);
});

Deno.test("amber acp: a failed turn is an error response, with the key redacted", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/work`;
  await Deno.mkdir(workspace, { recursive: true });
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({
    fault: { kind: "status", status: 400, message: "bad request for sk-test-key-1234" },
  });
  await using editor = startEditor(`${tmp.dir}/config`, workspace, `${server.url}/v1`);
  await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const failed = await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Hello?" }],
  }).then(() => undefined, (error: Error) => error);
  assert.ok(failed instanceof Error, "the prompt is refused");
  const said = `${failed.message} ${JSON.stringify(failed)}`;
  assert.match(said, /bad request/);
  assert.doesNotMatch(said, /sk-test-key-1234/);
});

Deno.test("amber acp: a cancel withdraws an open permission question; nothing runs", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/work`;
  await Deno.mkdir(workspace, { recursive: true });
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ toolCalls: [{ name: "bash", arguments: { command: "touch ran.txt" } }] });
  await using editor = startEditor(`${tmp.dir}/config`, workspace, `${server.url}/v1`, ["wait"]);
  await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const prompt = editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Make a file." }],
  });
  for (let waited = 0; editor.permissions.length === 0; waited += 20) {
    assert.ok(waited < 30_000, "the permission question never came");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await editor.agent.notify(methods.agent.session.cancel, { sessionId });
  assert.equal((await within(prompt)).stopReason, "cancelled");
  assert.equal(editor.withdrawn(), 1);
  await assert.rejects(Deno.stat(`${workspace}/ran.txt`), Deno.errors.NotFound);
});
