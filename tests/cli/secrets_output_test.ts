// The keys amber holds never reach the model through a tool result nor the terminal through
// anything a session shows, and what a model or tool writes cannot drive the terminal: the
// session's events in-process, then `amber run` as a user runs it (text and --json).

import assert from "node:assert/strict";
import { exact, type Plugin } from "@amber/core";
import { SessionFile } from "@amber/core/kernel";
import { makeBundledPlugins } from "@amber/plugins";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { main } from "../../cli/app.ts";
import { runPrinter } from "../../cli/commands/run_printer.ts";
import { openHost } from "../../cli/host.ts";
import { AgentSession, type SessionEvent } from "../../cli/session/mod.ts";
import { EventRedactor, SecretRedactor } from "../../cli/session/redact.ts";
import { tempDir } from "../_helpers.ts";
import { startTui } from "../tui/_harness.ts";
import { type Result, runAmber } from "./_subprocess.ts";

// The key in use, and another provider's key that is merely set in the environment.
const KEY = "sk-h5-in-use-778899";
const OTHER = "sk-ant-other-445566";
const ENV: Record<string, string> = { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: OTHER };

// A clipboard write (OSC 52), a screen clear and an 8-bit CSI, as a hostile tool or model writes.
const HOSTILE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b[H\u009b31m";

function script(): ScriptedTurn[] {
  return [
    { toolCalls: [{ name: "read", arguments: { path: "secret.txt" } }] },
    { toolCalls: [{ name: "read", arguments: { path: `missing-${KEY}.txt` } }] },
    { text: `line one ${KEY}${HOSTILE}\nline two ${OTHER} end`, chunkSize: 3 },
  ];
}

// The tool results every request carried.
function toolMessages(server: FakeProvider): unknown[] {
  return server.chats.flatMap((chat) =>
    (chat.body as { messages: { role: string }[] }).messages.filter((m) => m.role === "tool")
  );
}

// Where the secrets tests start: the secret file in `dir`, and a fake provider scripted to read it.
async function secretScene(dir: string): Promise<FakeProvider> {
  await Deno.writeTextFile(`${dir}/secret.txt`, `token=${KEY}\nother=${OTHER}\n`);
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(...script());
  return server;
}

// `amber run "read the secret" <flags> --approve auto` in `dir`, against `server`.
function runOnSecret(
  dir: string,
  server: FakeProvider,
  flags: readonly string[],
  options: { readonly trim?: boolean } = {},
): Promise<Result> {
  return runAmber(
    dir,
    ["run", "read the secret", ...flags, "--approve", "auto", "--base-url", `${server.url}/v1`],
    { cwd: dir, env: { INIT_CWD: dir, ...ENV }, ...options },
  );
}

function assertNoKey(text: string, where: string): void {
  assert.equal(text.includes(KEY), false, `the key in use reached ${where}`);
  assert.equal(text.includes(OTHER), false, `another provider's key reached ${where}`);
}

Deno.test("a session's events, the model's requests and the file never carry a known key", async () => {
  await using tmp = await tempDir();
  await using server = await secretScene(tmp.dir);
  const session = await AgentSession.open({
    openHost: (services) =>
      openHost({ ...services, configDir: tmp.dir, workspace: tmp.dir, thirdParty: false }),
    overrides: { model: "fake-model", baseUrl: `${server.url}/v1` },
    approval: "auto",
    env: (name) => ENV[name],
  });
  const events: SessionEvent[] = [];
  session.subscribe((event) => events.push(event));
  try {
    const result = await session.turn("read the secret");
    assert.equal(result.cause.kind, "completed");
    assertNoKey(JSON.stringify(events), "the events");
    const text = events.flatMap((e) => e.type === "text" ? [e.delta] : []).join("");
    assert.equal(text, `line one [redacted]${HOSTILE}\nline two [redacted] end`);
    const read = events.find((e) => e.type === "toolEnd");
    assert.ok(read?.type === "toolEnd" && read.result.output.includes("token=[redacted]"));
    // What the model was sent after the tools ran: their results without the keys (the second
    // call's arguments hold the key because the model wrote it there itself).
    assertNoKey(JSON.stringify(server.chats[1].body), "the model");
    assertNoKey(JSON.stringify(toolMessages(server)), "the model");
    const file = await Deno.readTextFile(SessionFile.pathOf(tmp.dir, session.id!));
    assertNoKey(file, "the session file");
    assert.equal(session.redact(`x ${OTHER} y`), "x [redacted] y");
  } finally {
    session.close();
    await session.host.close();
  }
});

Deno.test("amber run prints no key and no control sequence; newlines stay", async () => {
  await using tmp = await tempDir();
  await using server = await secretScene(tmp.dir);
  const result = await runOnSecret(tmp.dir, server, [], { trim: false });
  assert.equal(result.code, 0, result.err);
  assertNoKey(result.out, "stdout");
  assertNoKey(result.err, "stderr");
  assert.equal(
    result.out,
    "line one [redacted]]52;c;cm0gLXJmIH4=[2J[H31m\nline two [redacted] end\n",
  );
  assert.match(result.err, /⚙ read missing-\[redacted\]\.txt\n {2}✗ read: .*missing-\[redacted\]/);
  assertNoKey(JSON.stringify(toolMessages(server)), "the model");
});

Deno.test("amber run --json stays JSON: keys redacted, control characters escaped", async () => {
  await using tmp = await tempDir();
  await using server = await secretScene(tmp.dir);
  const result = await runOnSecret(tmp.dir, server, ["--json"]);
  assert.equal(result.code, 0, result.err);
  assertNoKey(result.out, "stdout");
  assertNoKey(result.err, "stderr");
  // deno-lint-ignore no-control-regex -- no raw control character may reach the terminal
  assert.doesNotMatch(result.out, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  const events = result.out.split("\n").map((line) => JSON.parse(line));
  const text = events.filter((e) => e.type === "text").map((e) => e.delta).join("");
  assert.equal(text, `line one [redacted]${HOSTILE}\nline two [redacted] end`);
  const tools = events.filter((e) => e.type === "toolEnd");
  assert.match(tools[0].result.output, /token=\[redacted\]/);
  assert.match(tools[1].result.error, /missing-\[redacted\]/);
});

Deno.test("an error the provider sends is printed without a key", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({
    fault: { kind: "status", status: 400, message: `bad request: ${OTHER}\x1b[2J` },
  });
  const result = await runAmber(tmp.dir, [
    "run",
    "hi",
    "--base-url",
    `${server.url}/v1`,
  ], { cwd: tmp.dir, env: { INIT_CWD: tmp.dir, ...ENV } });
  assert.equal(result.code, 1);
  assert.match(result.err, /bad request: \[redacted\]\[2J/);
  assertNoKey(result.err, "stderr");
  // A request the provider refused is no conversation (issue 15): no session is left or named.
  assert.doesNotMatch(result.err, /--resume/);
  assert.deepEqual(await Array.fromAsync(Deno.readDir(`${tmp.dir}/sessions`)), []);
});

Deno.test("a plugin's diagnostic during amber run is printed without a key", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "fine" });
  // Its own preset, so the key comes from a variable no other test reads.
  const keyEnv = "AMBER_SECRETS_OUTPUT_TEST_KEY";
  const leaky: Plugin = {
    id: "leaky",
    version: "1.0.0",
    name: "Leaky",
    bound: { presets: exact("leaky"), phaseHooks: ["StepStart"] },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [
      {
        kind: "provider",
        name: "leaky",
        flavor: "openai",
        presets: [{
          name: "leaky",
          flavor: "openai",
          baseUrl: `${server.url}/v1`,
          defaultModel: "fake-model",
          requiresKey: true,
          keyEnv,
        }],
      },
      {
        kind: "hook",
        name: "leaky-hook",
        point: "StepStart",
        run: () => {
          throw new Error(`the hook saw ${Deno.env.get(keyEnv)}\x1b[2J`);
        },
      },
    ],
  };
  const out: string[] = [];
  const err: string[] = [];
  Deno.env.set(keyEnv, KEY);
  try {
    const code = await main(
      ["run", "hi", "--provider", "leaky", "--config-dir", tmp.dir, "--workspace", tmp.dir],
      { out: (t) => out.push(t), err: (t) => err.push(t), write: (t) => out.push(t) },
      { plugins: () => [...makeBundledPlugins(), leaky] },
    );
    assert.equal(code, 0, err.join("\n"));
  } finally {
    Deno.env.delete(keyEnv);
  }
  const said = err.join("\n");
  assert.match(said, /amber: plugin 'leaky' .*the hook saw \[redacted\]\[2J/);
  assertNoKey(said, "stderr");
  assert.equal(out.join(""), "fine\n");
});

Deno.test("the interactive session shows no key", async () => {
  await using t = await startTui({
    turns: [
      { toolCalls: [{ name: "read", arguments: { path: "secret.txt" } }] },
      { text: `the file says ${KEY}, done`, chunkSize: 3 },
    ],
    env: (name) => ENV[name],
  });
  await Deno.writeTextFile(`${t.workspace}/secret.txt`, `token=${KEY}\n`);
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("what does it say?\r");
  const screen = await t.waitFor(/done/, "the answer");
  assert.match(screen, /the file says \[redacted\], done/);
  assertNoKey(screen, "the screen");
  await t.idle();
  assertNoKey(t.terminal.text(), "the screen");
});

Deno.test("a key split across stream deltas is still caught; other events pass unchanged", () => {
  const redactor = new SecretRedactor([KEY]);
  const out: SessionEvent[] = [];
  const events = new EventRedactor(redactor);
  const emit = (event: SessionEvent) => out.push(event);
  const end: SessionEvent = { type: "stepEnd", step: 0 };
  for (const piece of ["a ", KEY.slice(0, 5), KEY.slice(5, 9)]) {
    events.apply({ type: "text", delta: piece }, emit);
  }
  // Another stream between the pieces does not let the held start of the key out.
  events.apply({ type: "reasoning", delta: "thinking" }, emit);
  events.apply({ type: "toolCallDelta", index: 0, delta: `{"k":"${KEY.slice(0, 4)}` }, emit);
  events.apply({ type: "text", delta: `${KEY.slice(9)} b` }, emit);
  events.apply({ type: "toolCallDelta", index: 0, delta: `${KEY.slice(4)}"}` }, emit);
  events.apply(end, emit);
  const text = out.flatMap((e) => e.type === "text" ? [e.delta] : []).join("");
  assert.equal(text, "a [redacted] b");
  const args = out.flatMap((e) => e.type === "toolCallDelta" ? [e.delta] : []).join("");
  assert.equal(args, '{"k":"[redacted]"}');
  assert.equal(out.at(-1), end, "an event without a key is passed as it is");

  // What is held at the end of a turn goes out with the flush.
  const tail: string[] = [];
  const cut = new EventRedactor(redactor);
  cut.apply(
    { type: "text", delta: `x ${KEY.slice(0, 6)}` },
    (e) => e.type === "text" && tail.push(e.delta),
  );
  assert.deepEqual(tail, ["x "]);
  cut.flush((e) => e.type === "text" && tail.push(e.delta));
  assert.deepEqual(tail, ["x ", KEY.slice(0, 6)]);
});

Deno.test("the run printer writes no control character to the terminal", () => {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t) };
  const text = runPrinter(io, false);
  text({ type: "text", delta: `ok\r\n${HOSTILE}done` });
  text({
    type: "toolStart",
    step: 0,
    call: { id: "c1", name: "bash", arguments: "{}" },
    verb: "Run",
    summary: `echo ${HOSTILE}`,
  });
  text({ type: "end", cause: { kind: "completed" } });
  assert.deepEqual(out, ["ok\n]52;c;cm0gLXJmIH4=[2J[H31mdone", "\n"]);
  assert.deepEqual(err, ["⚙ bash echo ]52;c;cm0gLXJmIH4=[2J[H31m"]);

  const lines: string[] = [];
  const json = runPrinter({ out: (t) => lines.push(t), err: () => {} }, true);
  json({ type: "text", delta: HOSTILE });
  assert.equal(lines[0].includes("\u009b"), false);
  assert.deepEqual(JSON.parse(lines[0]), { type: "text", delta: HOSTILE });
});
