// The agent session (`@amber/cli/session`) in-process: the real host, bundled plugins and kernel
// against the fake provider on loopback, real session files on disk.

import assert from "node:assert/strict";
import { exact, type Plugin } from "@amber/core";
import type { ApprovalRequest } from "@amber/core/kernel";
import { makeBundledPlugins } from "@amber/plugins";
import { openaiDialect } from "@amber/providers/openai";
import { SessionFile } from "@amber/core/kernel";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { type Host, openHost } from "../../cli/host.ts";
import {
  AgentSession,
  type AgentSessionOptions,
  type SessionEvent,
} from "../../cli/session/mod.ts";
import { switchHelloOn } from "../_hello_on.ts";

const KEY = "sk-session-test-5150";

interface Opened extends AsyncDisposable {
  readonly session: AgentSession;
  readonly server: FakeProvider;
  readonly configDir: string;
  readonly workspace: string;
  readonly events: SessionEvent[];
  /** How many times the key was read: once per provider resolution. */
  readonly keyReads: { count: number };
}

async function open(
  turns: ScriptedTurn[],
  options: Partial<AgentSessionOptions> = {},
  dirs?: { readonly configDir: string; readonly workspace: string },
): Promise<Opened> {
  const configDir = dirs?.configDir ?? await Deno.makeTempDir({ prefix: "amber-session-" });
  const workspace = dirs?.workspace ?? await Deno.makeTempDir({ prefix: "amber-session-ws-" });
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(...turns);
  const keyReads = { count: 0 };
  let host: Host | undefined;
  const session = await AgentSession.open({
    openHost: async (services) =>
      host = await openHost({ ...services, configDir, workspace, thirdParty: false }),
    overrides: { model: "fake-model", baseUrl: `${server.url}/v1` },
    env: (name) => {
      if (name !== "OPENAI_API_KEY") return undefined;
      keyReads.count++;
      return KEY;
    },
    ...options,
  });
  assert.equal(session.host, host, "the session runs on the host it opened");
  const events: SessionEvent[] = [];
  session.subscribe((event) => events.push(event));
  return {
    session,
    server,
    configDir,
    workspace,
    events,
    keyReads,
    async [Symbol.asyncDispose]() {
      session.close();
      await session.host.close();
      await server.close();
      if (dirs !== undefined) return;
      await Deno.remove(configDir, { recursive: true });
      await Deno.remove(workspace, { recursive: true });
    },
  };
}

const bash = (command: string): ScriptedTurn => ({
  toolCalls: [{ name: "bash", arguments: { command } }],
});

Deno.test("a turn creates the session file, streams events and counts tokens", async () => {
  await using s = await open([
    { text: "Hello.", usage: { promptTokens: 10, completionTokens: 2 } },
    { text: "Again.", usage: { promptTokens: 20, completionTokens: 3 } },
  ]);
  const { session } = s;
  assert.equal(session.id, undefined, "no file before the first turn");
  const first = await session.turn("hi");
  assert.equal(first.cause.kind, "completed");
  const id = session.id!;
  assert.deepEqual(s.events[0], { type: "session", id, resumed: false });
  assert.equal(s.events.at(-1)?.type, "end");
  assert.deepEqual(
    s.events.filter((e) => e.type === "text").map((e) => e.type === "text" && e.delta).join(""),
    "Hello.",
  );
  await session.turn("and again");
  assert.equal(session.id, id, "the second turn continues the same file");
  assert.equal(s.events.filter((e) => e.type === "session").length, 1);
  assert.deepEqual(session.usage, { promptTokens: 30, completionTokens: 5 });
  const saved = await SessionFile.load(s.configDir, id);
  assert.equal(saved.header.workspace, s.workspace);
  assert.equal(saved.header.provider, "openai");
  assert.equal(saved.header.model, "fake-model");
  assert.equal(saved.steps.length, 2);
  const text = await Deno.readTextFile(SessionFile.pathOf(s.configDir, id));
  assert.equal(text.includes(KEY), false, "the key never reaches the transcript");
});

Deno.test("resume moves a torn last line aside, says so, and continues the numbering", async () => {
  await using s = await open([{ text: "First." }, { text: "Second." }]);
  await s.session.turn("one");
  const id = s.session.id!;
  s.session.close();
  const path = SessionFile.pathOf(s.configDir, id);
  await Deno.writeTextFile(path, '{"type":"step","step":1,"mess', { append: true });

  // Another session over the same directories, as `--resume` starts one.
  await using again = await open([{ text: "Third." }], {}, s);
  const result = await again.session.resume(id);
  assert.ok(result.tornTo?.startsWith(`${path}.torn-`));
  assert.deepEqual(again.events.map((e) => e.type), ["torn", "session"]);
  assert.deepEqual(again.events[0], { type: "torn", id, movedTo: result.tornTo });
  assert.deepEqual(again.events[1], { type: "session", id, resumed: true });
  assert.equal(await Deno.readTextFile(result.tornTo!), '{"type":"step","step":1,"mess');
  assert.deepEqual(again.session.messages.map((m) => m.role), ["user", "assistant"]);
  await again.session.turn("two");
  assert.equal(again.session.id, id);
  const saved = await SessionFile.load(s.configDir, id);
  assert.deepEqual(saved.steps.map((step) => step.step), [0, 1]);
  assert.equal(saved.torn, undefined);
});

Deno.test("'always' is remembered for the session and forgotten on reset and resume", async () => {
  await using s = await open([
    bash("echo one"),
    { text: "ran one" },
    bash("echo two"),
    { text: "ran two" },
    bash("echo three"),
    { text: "ran three" },
    bash("echo four"),
    { text: "ran four" },
  ]);
  const asked: string[] = [];
  const ask = (request: ApprovalRequest) => {
    asked.push(request.summary);
    return Promise.resolve("always" as const);
  };
  await s.session.turn("one", { ask });
  const id = s.session.id!;
  assert.deepEqual(s.session.allowed, ["bash"]);
  await s.session.turn("two", { ask });
  assert.deepEqual(asked, ["$ echo one"], "the second turn was not asked");
  s.session.reset();
  assert.deepEqual(s.session.allowed, []);
  await s.session.turn("three", { ask });
  assert.deepEqual(asked, ["$ echo one", "$ echo three"], "a new session asks again");
  await s.session.resume(id);
  assert.deepEqual(s.session.allowed, [], "a resumed session asks again");
  await s.session.turn("four", { ask });
  assert.equal(asked.length, 3);
});

Deno.test("without an approval handler a tool that needs approval is denied", async () => {
  await using s = await open([bash("echo no"), { text: "denied" }]);
  const result = await s.session.turn("try");
  assert.equal(result.cause.kind, "completed");
  const tool = result.messages.find((m) => m.role === "tool");
  assert.match(tool?.content ?? "", /needs approval and there is no one to ask/);
});

Deno.test("a sub-agent runs with its own session file and cannot start another", async () => {
  await using s = await open([
    { toolCalls: [{ name: "task", arguments: { prompt: "look around" } }] },
    // The sub-agent: it tries to start another, is blocked, and answers.
    { toolCalls: [{ name: "task", arguments: { prompt: "deeper" } }] },
    { text: "nothing here" },
    // The parent again.
    { text: "the sub-agent found nothing" },
  ], { approval: "auto" });
  const result = await s.session.turn("delegate it");
  assert.equal(result.cause.kind, "completed");
  const id = s.session.id!;
  const tool = result.messages.find((m) => m.role === "tool");
  assert.equal(tool?.content, "nothing here");
  const child = await SessionFile.load(s.configDir, `${id}-task1`);
  assert.equal(child.header.title, "look around");
  const blocked = child.steps.flatMap((step) => step.messages).find((m) => m.role === "tool");
  assert.match(blocked?.content ?? "", /a sub-agent cannot start another sub-agent/);
  assert.equal(s.events.filter((e) => e.type === "session").length, 1, "its events are its own");
});

Deno.test("the provider is resolved once per session, and again only when switched", async () => {
  await using s = await open([{ text: "a" }, { text: "b" }]);
  const { session } = s;
  assert.equal(s.keyReads.count, 1);
  await session.turn("one");
  await session.turn("two");
  session.snapshot();
  session.account();
  assert.equal(s.keyReads.count, 1, "turns, snapshots and accounts do not resolve again");
  assert.equal(session.setModel("other-model"), "provider openai, model other-model");
  assert.equal(s.keyReads.count, 2);
  assert.equal(session.snapshot().model, "other-model");

  assert.match(session.setProvider("nope"), /^cannot use it: unknown provider 'nope'/);
  assert.match(session.problem ?? "", /unknown provider 'nope'/);
  await assert.rejects(session.turn("three"), /unknown provider 'nope'/);
  assert.throws(() => session.ready(), { name: "UnknownProviderError" });

  assert.equal(session.setProvider("ollama"), "provider ollama, model qwen3-coder");
  assert.equal(session.problem, undefined);
  assert.deepEqual(session.account(), { provider: "ollama", baseUrl: "http://127.0.0.1:11434/v1" });
});

Deno.test("core's contributions install for core with the host's workspace and services", async () => {
  const configDir = await Deno.makeTempDir({ prefix: "amber-core-" });
  await switchHelloOn(configDir);
  const workspace = await Deno.makeTempDir({ prefix: "amber-core-ws-" });
  const host = await openHost({ configDir, workspace, thirdParty: false });
  try {
    assert.equal(host.coreServices.owner, "core");
    assert.equal(host.coreServices.workspace.root, workspace);
    assert.notEqual(workspace, Deno.cwd());
    assert.equal(host.coreServices.host, host.services);
    const core = (entries: readonly { id: string; owner: string }[]) =>
      entries.filter((entry) => entry.owner === "core").map((entry) => entry.id);
    assert.deepEqual(core(host.registries.status.entries()), [
      "model",
      "tool",
      "tokens",
      "wallet",
      "allowance",
    ]);
    assert.deepEqual(core(host.registries.panel.entries()), ["plugins"]);
    assert.deepEqual(
      host.registries.command.tree().filter((root) => root.owner === "core").map((r) => r.name),
      ["set", "get"],
    );
    assert.ok(
      host.registries.provider.flavors().some((f) => f.flavor === "openai" && f.owner === "core"),
    );
    const outcome = await host.registries.command.dispatch("get", ["plugin"], "hello");
    assert.ok(outcome.ok);
    assert.match(outcome.text, /^hello \S+: active, \d+ contributions$/);
  } finally {
    await host.close();
    await Deno.remove(configDir, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});

// A provider plugin whose dialect fails to make its first stream decoder, with an error naming
// the key it holds; later streams decode as OpenAI's do.
function brittleWire(baseUrl: string): Plugin {
  let broken = true;
  return {
    id: "brittle",
    version: "1.0.0",
    name: "Brittle",
    bound: { flavors: exact("brittle"), presets: exact("brittle") },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      kind: "provider",
      name: "brittle",
      flavor: "brittle",
      dialect: () => ({
        ...openaiDialect(),
        flavor: "brittle",
        decoder: () => {
          if (!broken) return openaiDialect().decoder();
          broken = false;
          throw new Error(`the decoder broke holding ${KEY}`);
        },
      }),
      presets: [{
        name: "brittle",
        flavor: "brittle",
        baseUrl,
        defaultModel: "fake-model",
        requiresKey: true,
        keyEnv: "OPENAI_API_KEY",
      }],
    }],
  };
}

Deno.test("a turn that breaks off keeps the prompt in the file and the session goes on from it", async () => {
  const configDir = await Deno.makeTempDir({ prefix: "amber-session-" });
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "never decoded" }, { text: "fine now" });
  const session = await AgentSession.open({
    openHost: (services) =>
      openHost({
        ...services,
        configDir,
        workspace: configDir,
        thirdParty: false,
        plugins: [...makeBundledPlugins(), brittleWire(`${server.url}/v1`)],
      }),
    overrides: { provider: "brittle" },
    env: (name) => name === "OPENAI_API_KEY" ? KEY : undefined,
  });
  try {
    assert.equal(session.problem, undefined);
    const outcome = await session.turn("keep me").then((r) => r.cause, (e: unknown) => e);
    const said = outcome instanceof Error ? outcome.message : JSON.stringify(outcome);
    assert.equal(said.includes(KEY), false, `the key is in what is said: ${said}`);
    const id = session.id!;
    const saved = await SessionFile.load(configDir, id);
    assert.deepEqual(saved.messages[0], { role: "user", content: "keep me" });
    assert.deepEqual(session.messages[0], { role: "user", content: "keep me" });

    // The next turn continues the conversation the file holds, the prompt that broke off in it.
    const next = await session.turn("go on");
    assert.equal(next.cause.kind, "completed");
    const sent = server.chats.at(-1)!.body as { messages: { role: string; content: string }[] };
    assert.deepEqual(sent.messages.filter((m) => m.role === "user").map((m) => m.content), [
      "keep me",
      "go on",
    ]);
    assert.equal(session.id, id);
  } finally {
    session.close();
    await session.host.close();
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("a turn that throws says no key, and the next turn goes on from the file", async () => {
  await using s = await open([{ text: "never seen" }, { text: "answered" }]);
  const { session } = s;
  // A front end whose rendering throws breaks the turn off mid-step.
  let broken = true;
  session.subscribe((event) => {
    if (event.type !== "stepStart" || !broken) return;
    broken = false;
    throw new Error(`the view broke on ${KEY}`);
  });
  await assert.rejects(session.turn("first prompt"), (error: unknown) => {
    assert.ok(error instanceof Error);
    assert.equal(error.message, "the view broke on [redacted]");
    assert.equal(error.stack?.includes(KEY), false);
    return true;
  });
  assert.deepEqual(session.messages, [{ role: "user", content: "first prompt" }]);
  await session.turn("second prompt");
  const sent = s.server.chats.at(-1)!.body as { messages: { role: string; content: string }[] };
  assert.deepEqual(sent.messages.filter((m) => m.role === "user").map((m) => m.content), [
    "first prompt",
    "second prompt",
  ]);
  const saved = await SessionFile.load(s.configDir, session.id!);
  assert.deepEqual(saved.steps.map((step) => step.step), [0, 1]);
});
