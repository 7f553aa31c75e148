// `amber acp` with an editor that offers its file system and terminals: a real amber subprocess
// driven by a client built from the ACP package, which keeps unsaved buffers in memory and runs
// terminal commands as real subprocesses, against the fake provider on loopback. And the same
// prompts from an editor that offers neither, which get amber's own tools.

import assert from "node:assert/strict";
import {
  client,
  methods,
  RequestError,
  type SessionNotification,
  type WaitForTerminalExitResponse,
} from "@agentclientprotocol/sdk";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import { startAmberAcp, TEST_KEY, within } from "./_amber_acp.ts";

// One command the editor runs in a terminal.
interface Terminal {
  readonly child: Deno.ChildProcess;
  output: string;
  readonly status: Promise<Deno.CommandStatus>;
}

interface EditorOptions {
  /** Whether it offers fs and terminals at initialize. */
  readonly offers: boolean;
  /** Never answers terminal/wait_for_exit until amber withdraws it. */
  readonly hangWaits?: boolean;
  /** Paths whose fs/read_text_file it answers with an error. */
  readonly failing?: readonly string[];
  /** Answers terminal/create with a number for the terminal id. */
  readonly garbage?: boolean;
}

// A running `amber acp` and the editor side of the connection, with what it was asked.
async function startEditor(
  configDir: string,
  workspace: string,
  baseUrl: string,
  options: EditorOptions,
) {
  const buffers = new Map<string, string>();
  const asked: string[] = [];
  const written: { path: string; content: string }[] = [];
  const created: { command: string; args: string[]; cwd?: string | null }[] = [];
  const updates: SessionNotification[] = [];
  const terminals = new Map<string, Terminal>();
  const app = client({ name: "test-editor" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, () => ({
      outcome: { outcome: "selected", optionId: "allow_once" },
    }))
    .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
      asked.push("fs/read_text_file");
      if (options.failing?.includes(params.path)) {
        throw RequestError.internalError({}, "the buffer is locked");
      }
      return { content: buffers.get(params.path) ?? await Deno.readTextFile(params.path) };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      asked.push("fs/write_text_file");
      written.push({ path: params.path, content: params.content });
      buffers.set(params.path, params.content);
      return {};
    })
    .onRequest(methods.client.terminal.create, ({ params }) => {
      asked.push("terminal/create");
      if (options.garbage) return { terminalId: 42 } as unknown as { terminalId: string };
      created.push({ command: params.command, args: params.args ?? [], cwd: params.cwd });
      // The editor's own environment holds the key too: it is where amber got it from.
      const env: Record<string, string> = { OPENAI_API_KEY: TEST_KEY };
      for (const { name, value } of params.env ?? []) env[name] = value;
      const child = new Deno.Command(params.command, {
        args: params.args ?? [],
        cwd: params.cwd ?? workspace,
        env,
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const terminal: Terminal = { child, output: "", status: child.status };
      const decoder = new TextDecoder();
      const drain = async (stream: ReadableStream<Uint8Array>) => {
        for await (const chunk of stream) terminal.output += decoder.decode(chunk);
      };
      drain(child.stdout);
      drain(child.stderr);
      const terminalId = `term-${terminals.size + 1}`;
      terminals.set(terminalId, terminal);
      return { terminalId };
    })
    .onRequest(methods.client.terminal.waitForExit, async ({ params, signal }) => {
      asked.push("terminal/wait_for_exit");
      if (options.hangWaits) {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        throw RequestError.requestCancelled();
      }
      const status = await terminals.get(params.terminalId)!.status;
      return exitOf(status);
    })
    .onRequest(methods.client.terminal.kill, ({ params }) => {
      asked.push("terminal/kill");
      terminals.get(params.terminalId)?.child.kill("SIGKILL");
      return {};
    })
    .onRequest(methods.client.terminal.output, async ({ params }) => {
      asked.push("terminal/output");
      const terminal = terminals.get(params.terminalId)!;
      // Give the pipes a moment to deliver what the process wrote before it ended.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { output: terminal.output, truncated: false };
    })
    .onRequest(methods.client.terminal.release, async ({ params }) => {
      asked.push("terminal/release");
      const terminal = terminals.get(params.terminalId);
      terminals.delete(params.terminalId);
      try {
        terminal?.child.kill("SIGKILL");
      } catch {
        // It already ended.
      }
      await terminal?.status;
      return {};
    });
  const amber = startAmberAcp(app, { configDir, workspace, baseUrl });
  await amber.agent.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: options.offers
      ? { fs: { readTextFile: true, writeTextFile: true }, terminal: true }
      : {},
  });
  const { sessionId } = await amber.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  return {
    agent: amber.agent,
    sessionId,
    buffers,
    asked,
    written,
    created,
    updates,
    terminals,
    async [Symbol.asyncDispose]() {
      await amber[Symbol.asyncDispose]();
      for (const terminal of terminals.values()) {
        try {
          terminal.child.kill("SIGKILL");
        } catch {
          // It already ended.
        }
        await terminal.status;
      }
    },
  };
}

function exitOf(status: Deno.CommandStatus): WaitForTerminalExitResponse {
  return status.signal === null ? { exitCode: status.code } : { signal: status.signal };
}

// What the model was told each tool call returned, in order.
function toolResults(server: FakeProvider): string[] {
  const last = server.requests.at(-1)?.body as { messages: { role: string; content: string }[] };
  return last.messages.filter((m) => m.role === "tool").map((m) => m.content);
}

async function setUp() {
  const tmp = await tempDir();
  const workspace = await Deno.realPath(await Deno.makeTempDir({ dir: tmp.dir }));
  await Deno.writeTextFile(`${workspace}/a.txt`, "saved\n");
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  return {
    configDir: `${tmp.dir}/config`,
    workspace,
    server,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await tmp[Symbol.asyncDispose]();
    },
  };
}

const SCRIPT = [
  { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
  {
    toolCalls: [{ name: "edit", arguments: { path: "a.txt", old_string: "un", new_string: "re" } }],
  },
  {
    toolCalls: [{
      name: "bash",
      arguments: { command: 'echo "key=[$OPENAI_API_KEY]"; echo from-terminal; exit 4' },
    }],
  },
  { text: "Done." },
];

Deno.test("amber acp reads and edits the editor's buffers and runs bash in its terminal", async () => {
  await using t = await setUp();
  t.server.script(...SCRIPT);
  await using editor = await startEditor(t.configDir, t.workspace, `${t.server.url}/v1`, {
    offers: true,
  });
  const path = `${t.workspace}/a.txt`;
  editor.buffers.set(path, "unsaved\n");
  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId: editor.sessionId,
    prompt: [{ type: "text", text: "Go." }],
  });
  assert.equal(response.stopReason, "end_turn");
  const [read, edit, bash] = toolResults(t.server);
  // read saw the unsaved buffer, not the disk.
  assert.equal(read, "    1\tunsaved");
  assert.match(edit, /^Edited a\.txt: replaced 1 occurrence/);
  // The edit went to the editor; the disk is the editor's to save.
  assert.deepEqual(editor.written, [{ path, content: "resaved\n" }]);
  assert.equal(await Deno.readTextFile(path), "saved\n");
  // bash ran in the editor's terminal, a real process, without amber's key.
  assert.equal(bash, "key=[]\nfrom-terminal\n[exit code 4]");
  assert.equal(editor.created.length, 1);
  const [created] = editor.created;
  assert.equal(created.command, "env");
  assert.ok(created.args.includes("OPENAI_API_KEY"), "the key's variable is unset");
  assert.equal(created.cwd, t.workspace);
  assert.deepEqual(editor.asked.filter((m) => m.startsWith("terminal/")), [
    "terminal/create",
    "terminal/wait_for_exit",
    "terminal/output",
    "terminal/release",
  ]);
  // The terminal was shown in the bash call's row.
  const bashCall = editor.updates.find(({ update }) =>
    update.sessionUpdate === "tool_call" && update.kind === "execute"
  )?.update as { toolCallId: string } | undefined;
  assert.ok(bashCall !== undefined);
  const rows = editor.updates.flatMap(({ update }) =>
    (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") &&
      update.toolCallId === bashCall.toolCallId
      ? [update]
      : []
  );
  const terminal = { type: "terminal", terminalId: "term-1" };
  // The call first, then its terminal while it runs (the update after the call, not before).
  assert.equal(rows[0].sessionUpdate, "tool_call");
  assert.deepEqual(rows[1], {
    sessionUpdate: "tool_call_update",
    toolCallId: bashCall.toolCallId,
    content: [terminal],
  });
  // The last update keeps the terminal in the row, with the result after it.
  const last = rows.at(-1)!;
  assert.equal(rows.length, 3);
  assert.equal(last.sessionUpdate === "tool_call_update" && last.status, "completed");
  assert.deepEqual(last.content, [
    terminal,
    { type: "content", content: { type: "text", text: bash } },
  ]);
});

Deno.test("amber acp without the editor's fs and terminals uses its own tools", async () => {
  await using t = await setUp();
  t.server.script(...SCRIPT);
  await using editor = await startEditor(t.configDir, t.workspace, `${t.server.url}/v1`, {
    offers: false,
  });
  const path = `${t.workspace}/a.txt`;
  editor.buffers.set(path, "unsaved\n");
  await Deno.writeTextFile(path, "unsaved on disk\n");
  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId: editor.sessionId,
    prompt: [{ type: "text", text: "Go." }],
  });
  assert.equal(response.stopReason, "end_turn");
  const [read, , bash] = toolResults(t.server);
  assert.equal(read, "    1\tunsaved on disk");
  assert.equal(await Deno.readTextFile(path), "resaved on disk\n");
  assert.equal(bash, "key=[]\nfrom-terminal\n[exit code 4]");
  assert.deepEqual(editor.asked, [], "nothing was asked of the editor");
});

Deno.test("amber acp: cancelling bash in an editor that never reports the exit kills it", async () => {
  await using t = await setUp();
  t.server.script({ toolCalls: [{ name: "bash", arguments: { command: "sleep 60" } }] });
  await using editor = await startEditor(t.configDir, t.workspace, `${t.server.url}/v1`, {
    offers: true,
    hangWaits: true,
  });
  const prompt = editor.agent.request(methods.agent.session.prompt, {
    sessionId: editor.sessionId,
    prompt: [{ type: "text", text: "Wait." }],
  });
  for (let i = 0; i < 300 && !editor.asked.includes("terminal/wait_for_exit"); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(editor.asked.includes("terminal/wait_for_exit"), "the command started");
  const [terminal] = editor.terminals.values();
  await editor.agent.notify(methods.agent.session.cancel, { sessionId: editor.sessionId });
  const response = await within(prompt);
  assert.equal(response.stopReason, "cancelled");
  assert.ok(editor.asked.includes("terminal/kill"), "amber killed the command");
  // It waited a moment for the exit that never came, then let the terminal go.
  for (let i = 0; i < 100 && editor.asked.at(-1) !== "terminal/release"; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.deepEqual(editor.asked.slice(-2), ["terminal/output", "terminal/release"]);
  assert.equal((await terminal.status).signal, "SIGKILL");
});

Deno.test("amber acp: an editor that fails or answers garbage gives the model errors", async () => {
  await using t = await setUp();
  t.server.script(
    { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
    { toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] },
    { text: "Could not do it." },
  );
  await using editor = await startEditor(t.configDir, t.workspace, `${t.server.url}/v1`, {
    offers: true,
    failing: [`${t.workspace}/a.txt`],
    garbage: true,
  });
  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId: editor.sessionId,
    prompt: [{ type: "text", text: "Read a.txt." }],
  });
  assert.equal(response.stopReason, "end_turn");
  const [read, bash] = toolResults(t.server);
  assert.match(read, /^error: cannot read a\.txt: the editor could not read it: .*locked/);
  assert.equal(
    bash,
    "error: cannot run bash in the editor's terminal: the editor's terminal/create failed: it " +
      "answered without a terminal id (a number)",
  );
});
