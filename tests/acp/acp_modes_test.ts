// `amber acp`'s session modes (the approval policies) and config options (mode and model), as
// an editor drives them: a real subprocess on stdio, a client built from the same ACP package,
// the fake provider on loopback.

import assert from "node:assert/strict";
import {
  client,
  type ClientConnection,
  methods,
  type RequestPermissionRequest,
  type SessionConfigOption,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import { startAmberAcp } from "./_amber_acp.ts";

interface Editor extends AsyncDisposable {
  readonly agent: ClientConnection["agent"];
  readonly updates: SessionNotification[];
  readonly permissions: RequestPermissionRequest[];
}

// The editor allows every permission request, after `onPermission` (if any) has run.
function startEditor(
  configDir: string,
  workspace: string,
  baseUrl: string,
  extraArgs: readonly string[] = [],
  onPermission?: (agent: ClientConnection["agent"]) => Promise<void>,
): Editor {
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const app = client({ name: "test-editor" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      await onPermission?.(amber.agent);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    });
  const amber = startAmberAcp(app, { configDir, workspace, baseUrl, args: extraArgs });
  return {
    agent: amber.agent,
    updates,
    permissions,
    [Symbol.asyncDispose]: () => amber[Symbol.asyncDispose](),
  };
}

async function workspaceWithConfig(dir: string): Promise<{ configDir: string; workspace: string }> {
  const configDir = `${dir}/config`;
  const workspace = `${dir}/work`;
  await Deno.mkdir(workspace, { recursive: true });
  await Deno.mkdir(configDir, { recursive: true });
  // A model config.yaml describes: the model option offers it beside the one in use.
  await Deno.writeTextFile(
    `${configDir}/config.yaml`,
    "models:\n  gpt-test-mini:\n    contextWindow: 32000\n",
  );
  return { configDir, workspace };
}

function option(options: readonly SessionConfigOption[] | null | undefined, id: string) {
  const found = options?.find((candidate) => candidate.id === id);
  assert.ok(found !== undefined && found.type === "select", `option ${id}`);
  const values = found.options.flatMap((entry) => "value" in entry ? [entry.value] : []);
  return { current: found.currentValue, category: found.category, values };
}

function kinds(updates: readonly SessionNotification[], from = 0): string[] {
  return updates.slice(from).map(({ update }) => update.sessionUpdate);
}

// The tool result the model was sent for the call of the last turn.
function toolResult(server: FakeProvider): string {
  const body = server.chats.at(-1)?.body as { messages: { role: string; content: string }[] };
  return body.messages.findLast((message) => message.role === "tool")?.content ?? "";
}

Deno.test("amber acp: modes and config options on session/new, set_mode, set_config_option", async () => {
  await using tmp = await tempDir();
  const { configDir, workspace } = await workspaceWithConfig(tmp.dir);
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  await using editor = startEditor(configDir, workspace, `${server.url}/v1`);
  await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  const created = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const { sessionId } = created;
  assert.equal(created.modes?.currentModeId, "ask", "--approve's default");
  assert.deepEqual(created.modes?.availableModes.map((mode) => mode.id), ["ask", "auto", "deny"]);
  const mode = option(created.configOptions, "mode");
  assert.deepEqual(mode, { current: "ask", category: "mode", values: ["ask", "auto", "deny"] });
  const model = option(created.configOptions, "model");
  assert.equal(model.category, "model");
  assert.match(String(model.current), /^openai\/./);
  assert.ok(model.values.includes(String(model.current)), "the model in use is offered");
  assert.ok(model.values.includes("openai/gpt-test-mini"), `config's model: ${model.values}`);

  // deny: the command is refused without a question to the editor, and does not run.
  assert.deepEqual(
    await editor.agent.request(methods.agent.session.setMode, { sessionId, modeId: "deny" }),
    {},
  );
  const update = editor.updates.findLast(({ update }) =>
    update.sessionUpdate === "config_option_update"
  )?.update;
  assert.ok(update?.sessionUpdate === "config_option_update");
  assert.equal(option(update.configOptions, "mode").current, "deny");
  server.script(
    { toolCalls: [{ name: "bash", arguments: { command: "touch denied.txt" } }] },
    { text: "Refused." },
  );
  const denied = await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Make a file." }],
  });
  assert.equal(denied.stopReason, "end_turn");
  assert.equal(editor.permissions.length, 0, "no question reached the editor");
  assert.match(toolResult(server), /the approval policy is deny/);
  await assert.rejects(Deno.stat(`${workspace}/denied.txt`), Deno.errors.NotFound);

  // auto, through the config option: the command runs without a question; the editor hears of
  // the mode.
  const seen = editor.updates.length;
  const switched = await editor.agent.request(methods.agent.session.setConfigOption, {
    sessionId,
    configId: "mode",
    value: "auto",
  });
  assert.equal(option(switched.configOptions, "mode").current, "auto");
  assert.deepEqual(
    editor.updates.slice(seen).map(({ update }) => update),
    [{ sessionUpdate: "current_mode_update", currentModeId: "auto" }],
  );
  server.script(
    { toolCalls: [{ name: "bash", arguments: { command: "touch allowed.txt" } }] },
    { text: "Made." },
  );
  await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Make a file." }],
  });
  assert.equal(editor.permissions.length, 0);
  await Deno.stat(`${workspace}/allowed.txt`);

  // The model: the next request names the new one, and the response lists every option.
  const before = editor.updates.length;
  const chosen = await editor.agent.request(methods.agent.session.setConfigOption, {
    sessionId,
    configId: "model",
    value: "openai/gpt-test-mini",
  });
  assert.deepEqual(chosen.configOptions.map((entry) => entry.id), ["mode", "model"]);
  assert.equal(option(chosen.configOptions, "model").current, "openai/gpt-test-mini");
  assert.equal(option(chosen.configOptions, "mode").current, "auto", "the mode stays");
  assert.ok(!kinds(editor.updates, before).includes("current_mode_update"));
  server.script({ text: "Hi." });
  await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Hello" }],
  });
  assert.equal((server.chats.at(-1)?.body as { model: string }).model, "gpt-test-mini");

  // Careless editors: what they name that is not there, the error names.
  await assert.rejects(
    editor.agent.request(methods.agent.session.setMode, { sessionId, modeId: "yolo" }),
    /unknown mode 'yolo'/,
  );
  const wrongOptions: [Record<string, unknown>, RegExp][] = [
    [{ configId: "model", value: "openai/no-such-model" }, /unknown model 'openai\/no-such-model'/],
    [{ configId: "mode", value: "sometimes" }, /unknown mode 'sometimes'/],
    [{ configId: "temperature", value: "hot" }, /unknown config option 'temperature'/],
    [
      { configId: "mode", type: "boolean", value: true },
      /config option 'mode' takes one of its values/,
    ],
  ];
  for (const [params, error] of wrongOptions) {
    await assert.rejects(
      // Shapes the schema's type would refuse are the point: sent as the editor wrote them.
      editor.agent.request(
        methods.agent.session.setConfigOption,
        { sessionId, ...params } as never,
      ),
      error,
    );
  }
  await assert.rejects(
    editor.agent.request(methods.agent.session.setMode, { sessionId: "nope", modeId: "ask" }),
    /no such session/,
  );
  await assert.rejects(
    editor.agent.request(methods.agent.session.setConfigOption, {
      sessionId: "nope",
      configId: "mode",
      value: "ask",
    }),
    /no such session/,
  );
  // None of that changed anything.
  const after = await editor.agent.request(methods.agent.session.setConfigOption, {
    sessionId,
    configId: "mode",
    value: "auto",
  });
  assert.equal(option(after.configOptions, "model").current, "openai/gpt-test-mini");
});

Deno.test("amber acp: switched mid-turn, the mode reaches the next question, the model the next prompt", async () => {
  await using tmp = await tempDir();
  const { configDir, workspace } = await workspaceWithConfig(tmp.dir);
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  let sessionId = "";
  // At the first question the editor switches to auto and to another model, then allows that
  // one call.
  await using editor = startEditor(configDir, workspace, `${server.url}/v1`, [], async (agent) => {
    await agent.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
    await agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "openai/gpt-test-mini",
    });
  });
  await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  ({ sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  }));
  server.script(
    { toolCalls: [{ name: "bash", arguments: { command: "touch one.txt" } }] },
    { toolCalls: [{ name: "bash", arguments: { command: "touch two.txt" } }] },
    { text: "Both made." },
  );
  await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Make two files." }],
  });
  assert.equal(editor.permissions.length, 1, "only the first call was asked about");
  await Deno.stat(`${workspace}/one.txt`);
  await Deno.stat(`${workspace}/two.txt`);
  const models = () => server.chats.map((chat) => (chat.body as { model: string }).model);
  const [first] = models();
  assert.notEqual(first, "gpt-test-mini");
  assert.deepEqual(models(), [first, first, first], "the running turn kept its model");
  server.script({ text: "Hi." });
  await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Hello" }],
  });
  assert.equal(models()[3], "gpt-test-mini");
});

Deno.test("amber acp: --approve sets the first mode; session/load answers modes and options", async () => {
  await using tmp = await tempDir();
  const { configDir, workspace } = await workspaceWithConfig(tmp.dir);
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  let amberSession: string;
  {
    await using editor = startEditor(configDir, workspace, `${server.url}/v1`, [
      "--approve",
      "auto",
    ]);
    await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
    const created = await editor.agent.request(methods.agent.session.new, {
      cwd: workspace,
      mcpServers: [],
    });
    assert.equal(created.modes?.currentModeId, "auto");
    assert.equal(option(created.configOptions, "mode").current, "auto");
    server.script({ text: "Hi." });
    const answered = await editor.agent.request(methods.agent.session.prompt, {
      sessionId: created.sessionId,
      prompt: [{ type: "text", text: "Hello" }],
    });
    amberSession = String(answered._meta?.amberSession);
  }
  // Another editor, another policy: the loaded session starts in that one's mode.
  await using editor = startEditor(configDir, workspace, `${server.url}/v1`, ["--approve", "deny"]);
  await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  const loaded = await editor.agent.request(methods.agent.session.load, {
    sessionId: amberSession,
    cwd: workspace,
    mcpServers: [],
  });
  assert.equal(loaded.modes?.currentModeId, "deny");
  assert.deepEqual(loaded.modes?.availableModes.map((mode) => mode.id), ["ask", "auto", "deny"]);
  assert.deepEqual(loaded.configOptions?.map((entry) => entry.id), ["mode", "model"]);
  assert.equal(option(loaded.configOptions, "mode").current, "deny");
  assert.match(String(option(loaded.configOptions, "model").current), /^openai\//);
});

Deno.test("amber acp: reloading a session this editor has open keeps its mode and model", async () => {
  await using tmp = await tempDir();
  const { configDir, workspace } = await workspaceWithConfig(tmp.dir);
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  await using editor = startEditor(configDir, workspace, `${server.url}/v1`);
  await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  server.script({ text: "Hi." });
  await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Hello" }],
  });
  await editor.agent.request(methods.agent.session.setMode, { sessionId, modeId: "deny" });
  await editor.agent.request(methods.agent.session.setConfigOption, {
    sessionId,
    configId: "model",
    value: "openai/gpt-test-mini",
  });
  // The session's own lock is this process's: the reload must not be refused as in use.
  const loaded = await editor.agent.request(methods.agent.session.load, {
    sessionId,
    cwd: workspace,
    mcpServers: [],
  });
  assert.equal(loaded.modes?.currentModeId, "deny");
  assert.equal(option(loaded.configOptions, "model").current, "openai/gpt-test-mini");
  server.script({ text: "Again." });
  const answered = await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Once more" }],
  });
  assert.equal(answered.stopReason, "end_turn");
  const last = server.requests.at(-1)?.body as { model?: string; messages?: unknown[] };
  assert.equal(last.model, "gpt-test-mini");
  // The reloaded conversation went with it: both prompts reach the model.
  assert.match(JSON.stringify(last.messages), /Hello[\s\S]*Once more/);
});
