// `amber run`, `amber sessions` and `amber demo` as a user runs them: real subprocesses against
// the fake provider on loopback, real transcripts on disk, a real kill -9 and a real Ctrl-C.

import { deepStrictEqual, doesNotMatch, match, ok, strictEqual } from "node:assert/strict";
import { SessionFile } from "@amber/core/kernel";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { ECHO_MS } from "../../cli/interrupt_presses.ts";
import { tempDir } from "../_helpers.ts";
import { MAIN, PERMISSIONS, runAmber } from "./_subprocess.ts";

const KEY = { OPENAI_API_KEY: "sk-test-key-1234" };

// A spawned amber, for the tests that kill or interrupt it mid-run.
function command(
  configDir: string,
  workspace: string,
  args: string[],
  env: Record<string, string> = {},
) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, "--allow-run", MAIN, ...args],
    // INIT_CWD is how `deno task` tells amber where the user started; the test's workspace is it.
    env: { AMBER_CONFIG_DIR: configDir, INIT_CWD: workspace, NO_COLOR: "1", ...KEY, ...env },
    cwd: workspace,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

function amber(configDir: string, workspace: string, args: string[], env?: Record<string, string>) {
  return runAmber(configDir, args, {
    cwd: workspace,
    env: { INIT_CWD: workspace, ...KEY, ...env },
    flags: ["--allow-run"],
    trim: false,
  });
}

async function sessionIds(configDir: string): Promise<string[]> {
  const ids: string[] = [];
  try {
    for await (const e of Deno.readDir(`${configDir}/sessions`)) {
      ids.push(e.name.replace(/\.jsonl$/, ""));
    }
  } catch {
    // No sessions yet.
  }
  return ids.sort();
}

Deno.test("amber demo runs a real session and fixes the file", async () => {
  await using tmp = await tempDir();
  const result = await amber(tmp.dir, tmp.dir, ["demo"]);
  strictEqual(result.code, 0, result.err);
  match(result.err, /amber demo: a real session against amber's fake provider on 127\.0\.0\.1/);
  match(result.out, /Fixed the typo in `src\/greet\.ts`/);
  match(result.err, /✓ edit/);
  const workspace = /workspace: (.*)\n/.exec(result.err)![1];
  match(await Deno.readTextFile(`${workspace}/src/greet.ts`), /`Hello, \$\{name\}!`/);
  await Deno.remove(workspace.replace(/\/workspace$/, ""), { recursive: true });
});

Deno.test("amber run streams the answer to stdout, tools to stderr, and keeps a session", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.dir}/notes.txt`, "the answer is 42\n");
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(
    { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
    { text: "The notes say 42.", usage: { promptTokens: 20, completionTokens: 5 } },
  );
  const result = await amber(tmp.dir, tmp.dir, [
    "run",
    "what do the notes say?",
    "--base-url",
    `${server.url}/v1`,
  ]);
  strictEqual(result.code, 0, result.err);
  strictEqual(result.out, "The notes say 42.\n");
  match(result.err, /⚙ read notes\.txt\n {2}✓ read/);
  const auth = server.chats[0].headers.authorization;
  strictEqual(auth, "Bearer sk-test-key-1234");
  const [id] = await sessionIds(tmp.dir);
  const session = await SessionFile.load(tmp.dir, id);
  strictEqual(session.steps.length, 2);
  strictEqual(session.header.workspace, tmp.dir);
  const text = await Deno.readTextFile(SessionFile.pathOf(tmp.dir, id));
  strictEqual(text.includes("sk-test-key-1234"), false, "the key never reaches the transcript");

  const listed = await amber(tmp.dir, tmp.dir, ["sessions"]);
  match(listed.out, new RegExp(`${id} .* 2 .* what do the notes say\\?`));

  server.script({ text: "Still 42." });
  const again = await amber(tmp.dir, tmp.dir, [
    "run",
    "and now?",
    "--resume",
    id,
    "--base-url",
    `${server.url}/v1`,
  ]);
  strictEqual(again.code, 0, again.err);
  const third = server.chats[2].body as { messages: { role: string; content: string | null }[] };
  deepStrictEqual(third.messages.filter((m) => m.role === "user").map((m) => m.content), [
    "what do the notes say?",
    "and now?",
  ]);
});

Deno.test("--effort (or reasoningEffort in config.yaml) reaches the model's request", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "a" }, { text: "b" });
  const flag = await amber(tmp.dir, tmp.dir, [
    "run",
    "hi",
    "--effort",
    "high",
    "--base-url",
    `${server.url}/v1`,
  ]);
  strictEqual(flag.code, 0, flag.err);
  strictEqual((server.chats[0].body as { reasoning_effort?: string }).reasoning_effort, "high");
  await Deno.writeTextFile(`${tmp.dir}/config.yaml`, "reasoningEffort: low\n");
  const config = await amber(tmp.dir, tmp.dir, ["run", "hi", "--base-url", `${server.url}/v1`]);
  strictEqual(config.code, 0, config.err);
  strictEqual((server.chats[1].body as { reasoning_effort?: string }).reasoning_effort, "low");
});

Deno.test("amber run --json writes the event stream as JSON lines", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "hi there", chunkSize: 3 });
  const result = await amber(tmp.dir, tmp.dir, [
    "run",
    "hi",
    "--json",
    "--base-url",
    `${server.url}/v1`,
  ]);
  strictEqual(result.code, 0, result.err);
  const events = result.out.trim().split("\n").map((line) => JSON.parse(line));
  strictEqual(events[0].type, "session");
  strictEqual(events.filter((e) => e.type === "text").map((e) => e.delta).join(""), "hi there");
  deepStrictEqual(events.at(-1), { type: "end", cause: { kind: "completed", detail: "stop" } });
});

Deno.test("a missing key names the variable; an unreachable server names the URL", async () => {
  await using tmp = await tempDir();
  const noKey = await amber(tmp.dir, tmp.dir, ["run", "hi"], { OPENAI_API_KEY: "" });
  strictEqual(noKey.code, 1);
  match(noKey.err, /set OPENAI_API_KEY to use provider 'openai'/);
  const unreachable = await amber(tmp.dir, tmp.dir, [
    "run",
    "hi",
    "--base-url",
    "http://127.0.0.1:9/v1",
  ]);
  strictEqual(unreachable.code, 1);
  match(unreachable.err, /http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions/);
  // A run that never reached the provider is no conversation (issue 15): no session is left
  // for `amber sessions` to list, and none is named to resume.
  deepStrictEqual(await sessionIds(tmp.dir), []);
  doesNotMatch(unreachable.err, /--resume/);
});

Deno.test("a process killed with kill -9 mid-run leaves a transcript that loads and resumes", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(
    { toolCalls: [{ name: "search", arguments: { pattern: "x" } }] },
    { text: "never finished", fault: { kind: "slowFirstByte", delayMs: 30_000 } },
  );
  const child = command(tmp.dir, tmp.dir, ["run", "search", "--base-url", `${server.url}/v1`])
    .spawn();
  // Wait until the first step is committed and the second model call is in flight.
  for (let i = 0; i < 200 && server.chats.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  strictEqual(server.chats.length, 2);
  child.kill("SIGKILL");
  const status = await child.status;
  await child.stdout.cancel();
  await child.stderr.cancel();
  strictEqual(status.signal, "SIGKILL");
  const [id] = await sessionIds(tmp.dir);
  const loaded = await SessionFile.load(tmp.dir, id);
  strictEqual(loaded.steps.length, 1, "the committed step survived");
  strictEqual(loaded.torn, undefined);
  ok(loaded.messages.some((m) => m.role === "tool"));
  await server.close();
});

Deno.test("Ctrl-C cancels the run, commits the transcript and exits 130", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "slow", fault: { kind: "slowFirstByte", delayMs: 30_000 } });
  const child = command(tmp.dir, tmp.dir, ["run", "wait", "--base-url", `${server.url}/v1`])
    .spawn();
  for (let i = 0; i < 200 && server.chats.length < 1; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGINT");
  const output = await child.output();
  strictEqual(output.code, 130);
  match(new TextDecoder().decode(output.stderr), /cancelling/);
  const [id] = await sessionIds(tmp.dir);
  const loaded = await SessionFile.load(tmp.dir, id);
  strictEqual(loaded.steps.at(-1)?.end, "cancelled");
  deepStrictEqual(loaded.messages, [{ role: "user", content: "wait" }]);
  await server.close();
});

Deno.test("the prompt is on disk before the first model call: kill -9 loses nothing, --resume sends it", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "never", fault: { kind: "slowFirstByte", delayMs: 60_000 } });
  const url = `${server.url}/v1`;
  const child = command(tmp.dir, tmp.dir, ["run", "remember me", "--base-url", url]).spawn();
  for (let i = 0; i < 200 && server.chats.length < 1; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  strictEqual(server.chats.length, 1);
  child.kill("SIGKILL");
  await child.status;
  await child.stdout.cancel();
  await child.stderr.cancel();
  const [id] = await sessionIds(tmp.dir);
  const loaded = await SessionFile.load(tmp.dir, id);
  deepStrictEqual(loaded.messages, [{ role: "user", content: "remember me" }]);

  server.script({ text: "remembered" });
  const resumed = await amber(tmp.dir, tmp.dir, [
    "run",
    "go on",
    "--resume",
    id,
    "--base-url",
    url,
  ]);
  strictEqual(resumed.code, 0, resumed.err);
  const body = server.chats[1].body as { messages: { role: string; content: string | null }[] };
  deepStrictEqual(body.messages.filter((m) => m.role === "user").map((m) => m.content), [
    "remember me",
    "go on",
  ]);
});

Deno.test("Ctrl-C twice exits at once, still says the session id, and the prompt is kept", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  // A command that shrugs off the first cancel keeps the step from committing before the second.
  const stubborn = "touch started; trap '' TERM; sleep 10";
  server.script({ toolCalls: [{ name: "bash", arguments: { command: stubborn } }] });
  const child = command(tmp.dir, tmp.dir, [
    "run",
    "keep me",
    "--approve",
    "auto",
    "--base-url",
    `${server.url}/v1`,
  ]).spawn();
  const started = async () => await Deno.stat(`${tmp.dir}/started`).then(() => true, () => false);
  for (let i = 0; i < 200 && !(await started()); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGINT");
  // Further apart than one Ctrl-C's echo (ECHO_MS): a second press.
  await new Promise((r) => setTimeout(r, ECHO_MS + 400));
  child.kill("SIGINT");
  const output = await child.output();
  strictEqual(output.code, 130);
  const [id] = await sessionIds(tmp.dir);
  match(
    new TextDecoder().decode(output.stderr),
    new RegExp(`amber: session ${id} \\(continue with: amber run --resume ${id} "<prompt>"\\)`),
  );
  const loaded = await SessionFile.load(tmp.dir, id);
  deepStrictEqual(loaded.messages.slice(0, 1), [{ role: "user", content: "keep me" }]);
});

Deno.test("SIGTERM and SIGHUP end a run as Ctrl-C does: the prompt kept, the session id said", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  for (const [signal, code] of [["SIGTERM", 143], ["SIGHUP", 129]] as const) {
    server.script({ text: "slow", fault: { kind: "slowFirstByte", delayMs: 60_000 } });
    const before = server.chats.length;
    const known = new Set(await sessionIds(tmp.dir));
    const child = command(tmp.dir, tmp.dir, ["run", signal, "--base-url", `${server.url}/v1`])
      .spawn();
    for (let i = 0; i < 200 && server.chats.length === before; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill(signal);
    const output = await child.output();
    strictEqual(output.code, code, signal);
    const [id] = (await sessionIds(tmp.dir)).filter((each) => !known.has(each));
    match(
      new TextDecoder().decode(output.stderr),
      new RegExp(`--resume ${id} "<prompt>"\\)`),
      signal,
    );
    const loaded = await SessionFile.load(tmp.dir, id);
    deepStrictEqual(loaded.messages, [{ role: "user", content: signal }]);
    strictEqual(loaded.steps.at(-1)?.end, "cancelled");
  }
});
