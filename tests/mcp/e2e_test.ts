// MCP servers end to end, as a user meets them: `amber run` in a real subprocess against the fake
// provider on loopback, with servers configured in config.yaml. The model's tool calls are
// scripted; what reached the model (the fake provider records every request), what amber printed
// and what was left running afterwards (ps) are checked. The servers are the SDK-written test
// servers of ./_servers and two real servers from npm, started with `npx -y` (.ci/run fetches them
// beforehand; a machine without npx skips those tests).

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { MAIN, PERMISSIONS } from "../cli/_subprocess.ts";
import { README_TEXT } from "./_servers/basic.ts";
import { testServerEntry, type TestServerName } from "./_servers/mod.ts";

/** The npm servers, pinned; .ci/run pre-fetches the same versions. */
const MCP_NPM_SERVERS = {
  everything: "@modelcontextprotocol/server-everything@2026.8.31",
  filesystem: "@modelcontextprotocol/server-filesystem@2026.8.31",
} as const;

const KEY = { OPENAI_API_KEY: "sk-test-key-1234" };

function hasNpx(): boolean {
  try {
    return new Deno.Command("npx", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}
const noNpx = !hasNpx();

/** A config directory and a workspace, both real paths, removed at the end. */
async function scene() {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-mcp-e2e-" }));
  const config = `${root}/config`;
  const workspace = `${root}/workspace`;
  await Deno.mkdir(config);
  await Deno.mkdir(workspace);
  // Every server of the test carries this tag on its command line, so that ps finds what is left
  // of this test's servers and not of another test running on the machine.
  const tag = `amber-e2e-${crypto.randomUUID().slice(0, 8)}`;
  return {
    config,
    workspace,
    tag,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

type Scene = Awaited<ReturnType<typeof scene>>;

/** A test server's entry, tagged. */
function tagged(name: TestServerName, tag: string, options: readonly string[] = []) {
  return testServerEntry(name, [...options, `--tag=${tag}`]);
}

/** Writes config.yaml (JSON is YAML) with these servers. */
async function configure(
  at: Scene,
  servers: Record<string, unknown>,
  mcp: Record<string, unknown> = {},
): Promise<void> {
  const config = { mcp: { startupWait: 60, ...mcp, servers } };
  await Deno.writeTextFile(`${at.config}/config.yaml`, JSON.stringify(config, null, 2));
}

/** `amber run PROMPT` against `provider`, approving every tool, with extra arguments. */
function run(at: Scene, provider: FakeProvider, prompt: string, ...extra: string[]) {
  return amber(at, [
    "run",
    prompt,
    "--approve",
    "auto",
    "--base-url",
    `${provider.url}/v1`,
    ...extra,
  ]);
}

/** How long one amber command may take before it is killed (a hang fails the test, not the suite). */
const AMBER_DEADLINE_MS = 120_000;

/** Runs `amber <args>` in the scene's workspace; killed after AMBER_DEADLINE_MS. */
async function amber(at: Scene, args: readonly string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, MAIN, ...args],
    cwd: at.workspace,
    env: { AMBER_CONFIG_DIR: at.config, INIT_CWD: at.workspace, NO_COLOR: "1", ...KEY },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(AMBER_DEADLINE_MS),
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const err = decode(output.stderr) +
    (output.signal === "SIGTERM" ? `\n(killed after ${AMBER_DEADLINE_MS / 1000} s)` : "");
  return { code: output.code, out: decode(output.stdout), err };
}

interface ChatBody {
  messages: { role: string; content: string | null; tool_call_id?: string }[];
  tools?: { function: { name: string; description?: string } }[];
}

/** Request `index` the model received. */
function chat(provider: FakeProvider, index: number): ChatBody {
  assert.ok(index < provider.chats.length, `the model got ${provider.chats.length} requests`);
  return provider.chats[index].body as ChatBody;
}

/** The tool results in request `index`, in order. */
function toolResults(provider: FakeProvider, index: number): string[] {
  return chat(provider, index).messages.filter((m) => m.role === "tool").map((m) =>
    String(m.content)
  );
}

/** The tools offered in request `index`. */
function offered(provider: FakeProvider, index: number): string[] {
  return (chat(provider, index).tools ?? []).map((tool) => tool.function.name);
}

/** The command lines of the processes that carry `tag`, after giving a killed group 1 s to go. */
async function leftovers(tag: string): Promise<string[]> {
  let found: string[] = [];
  for (let i = 0; i < 20; i++) {
    const ps = await new Deno.Command("ps", { args: ["-eo", "pid=,stat=,args="] }).output();
    found = new TextDecoder().decode(ps.stdout).split("\n")
      .filter((line) => line.includes(tag) && !/^\s*\d+\s+Z/.test(line));
    if (found.length === 0) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return found;
}

async function assertNothingLeft(tag: string): Promise<void> {
  assert.deepEqual(await leftovers(tag), [], "no server process outlives amber");
}

/** The JSON events of a `--json` run. */
function events(out: string): { type: string; [key: string]: unknown }[] {
  return out.trim().split("\n").map((line) => JSON.parse(line));
}

function script(provider: FakeProvider, ...turns: ScriptedTurn[]): void {
  provider.script(...turns);
}

Deno.test("a stdio server's tools, prompt and resource through amber run, with nothing left", async () => {
  await using at = await scene();
  await Deno.writeTextFile(`${at.workspace}/notes.txt`, "notes\n");
  await configure(at, { basic: tagged("basic", at.tag) });
  await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });

  // A tool call, progress, a structured result and a resource read, with --json events.
  script(
    provider,
    {
      toolCalls: [
        { id: "c1", name: "mcp__basic__echo", arguments: { text: "hello there" } },
        { id: "c2", name: "mcp__basic__count", arguments: { steps: 3, ms: 50 } },
        { id: "c3", name: "mcp__basic__add", arguments: { a: 2, b: 40 } },
        { id: "c4", name: "mcp__basic__read_resource", arguments: { uri: "basic://readme" } },
      ],
    },
    { text: "done" },
  );
  const result = await run(at, provider, "use the server", "--json");
  assert.equal(result.code, 0, result.err);
  const tools = offered(provider, 0);
  for (const name of ["echo", "add", "peek", "sleep", "count", "log", "read_resource"]) {
    assert.ok(tools.includes(`mcp__basic__${name}`), `mcp__basic__${name} in ${tools}`);
  }
  const [echo, count, add, readme] = toolResults(provider, 1);
  assert.equal(echo, "hello there");
  assert.match(count, /counted to 3/);
  assert.match(add, /42/);
  assert.match(readme, new RegExp(README_TEXT));
  const seen = events(result.out);
  const started = seen.filter((e) => e.type === "toolStart").map((e) =>
    (e.call as { name: string }).name
  );
  assert.deepEqual(started, [
    "mcp__basic__echo",
    "mcp__basic__count",
    "mcp__basic__add",
    "mcp__basic__read_resource",
  ]);
  const progress = seen.filter((e) =>
    e.type === "toolProgress" && (e.call as { name: string }).name === "mcp__basic__count"
  );
  assert.ok(progress.length >= 1, "the server's progress notifications show as tool progress");
  assert.deepEqual(seen.at(-1), { type: "end", cause: { kind: "completed", detail: "stop" } });
  // The server's stderr is for the diagnostics, not the run's output: its log, which
  // `amber doctor` shows, keeps it.
  assert.doesNotMatch(result.err, /basic: ready/);
  await assertNothingLeft(at.tag);
  const log = `${at.config}/mcp/logs/basic.log`;
  assert.match(await Deno.readTextFile(log), /stderr: basic: ready/);
  assert.equal((await Deno.stat(log)).mode! & 0o777, 0o600);
  const doctor = await amber(at, ["doctor"]);
  assert.match(doctor.out, /MCP server logs\n {2}- mcp\.basic: \d+ lines? logged, the last: /);

  // A prompt of the server as a command: its text is the user's message to the model.
  script(provider, { text: "Hello, Ada!" });
  const prompted = await run(at, provider, "/mcp__basic__greet Ada warm");
  assert.equal(prompted.code, 0, prompted.err);
  assert.equal(prompted.out, "Hello, Ada!\n");
  const users = chat(provider, 2).messages.filter((m) => m.role === "user");
  assert.deepEqual(users.map((m) => m.content), ["Greet Ada in a warm way."]);
  await assertNothingLeft(at.tag);
});

Deno.test("a read-only tool runs unasked only where mcp.trustReadOnly allows it", async () => {
  await using at = await scene();
  await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  const peek = { toolCalls: [{ name: "mcp__basic__peek", arguments: {} }] };
  // --approve ask without a terminal denies what needs approval.
  for (const trust of [false, true]) {
    await configure(at, { basic: tagged("basic", at.tag) }, { trustReadOnly: trust });
    script(provider, peek, { text: "ok" });
    const result = await run(at, provider, "peek", "--approve", "ask");
    assert.equal(result.code, 0, result.err);
    const [answer] = toolResults(provider, provider.chats.length - 1);
    if (trust) assert.equal(answer, "peeked at basic");
    else assert.doesNotMatch(answer, /peeked/);
  }
  await assertNothingLeft(at.tag);
});

Deno.test("list_changed: a tool added mid-run is offered at the next step; a failed re-read keeps the tools", async () => {
  await using at = await scene();
  await configure(at, { lc: tagged("list_changed", at.tag) });
  await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  script(
    provider,
    { toolCalls: [{ name: "mcp__lc__grow", arguments: {} }] },
    // The re-read that the notification starts is answered while this call is made: the new
    // tool is put in place at the step boundary after it.
    { toolCalls: [{ name: "mcp__lc__mend", arguments: {} }] },
    { toolCalls: [{ name: "mcp__lc__extra_1", arguments: { text: "new" } }] },
    { toolCalls: [{ name: "mcp__lc__break", arguments: {} }] },
    { toolCalls: [{ name: "mcp__lc__extra_1", arguments: { text: "still" } }] },
    { text: "done" },
  );
  const result = await run(at, provider, "grow");
  assert.equal(result.code, 0, result.err);
  assert.ok(!offered(provider, 0).includes("mcp__lc__extra_1"));
  assert.ok(offered(provider, 2).includes("mcp__lc__extra_1"), String(offered(provider, 2)));
  assert.equal(toolResults(provider, 3).at(-1), "extra 1: new");
  // After `break` the re-read fails: the previous tools stay, and amber says so.
  assert.ok(offered(provider, 4).includes("mcp__lc__extra_1"));
  assert.equal(toolResults(provider, 5).at(-1), "extra 1: still");
  assert.match(result.err, /mcp\.lc/);
  assert.match(result.err, /lists are broken/);
  await assertNothingLeft(at.tag);
});

Deno.test("a server that crashes, hangs or writes garbage is its plugin's fault; the run carries on", async () => {
  await using at = await scene();
  await configure(at, {
    basic: tagged("basic", at.tag),
    crashing: tagged("crash", at.tag, ["--at-start"]),
    dying: tagged("crash", at.tag),
    stuck: { ...tagged("hang", at.tag, ["--at=initialize", "--ignore-term"]), timeout: 2 },
    // Long enough to start a Deno process on a loaded machine; the call then times out.
    slowtool: { ...tagged("hang", at.tag, ["--ignore-term"]), timeout: 5 },
    noisy: tagged("garbage", at.tag),
  }, { startupWait: 10 });
  await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  script(
    provider,
    {
      toolCalls: [
        { id: "a", name: "mcp__dying__boom", arguments: {} },
        { id: "b", name: "mcp__slowtool__wait", arguments: {} },
        { id: "c", name: "mcp__basic__echo", arguments: { text: "still here" } },
      ],
    },
    { text: "carried on" },
  );
  const started = Date.now();
  const result = await run(at, provider, "try them all");
  assert.equal(result.code, 0, result.err);
  assert.equal(result.out, "carried on\n");
  const [boom, wait, echo] = toolResults(provider, 1);
  assert.doesNotMatch(boom, /^$/);
  assert.match(wait, /time|timed out/i);
  assert.equal(echo, "still here");
  // The faulty servers' tools were never offered; the good one's were.
  const tools = offered(provider, 0);
  assert.ok(tools.includes("mcp__basic__echo"));
  assert.ok(!tools.some((name) => /^mcp__(crashing|stuck|noisy)__/.test(name)), String(tools));
  // Each fault is said, naming its plugin and the reason.
  assert.match(result.err, /plugin 'mcp\.crashing'/);
  assert.match(result.err, /plugin 'mcp\.stuck'/);
  assert.match(result.err, /plugin 'mcp\.noisy'.*this is not JSON-RPC/);
  assert.match(result.err, /plugin 'mcp\.dying'/);
  assert.ok(Date.now() - started < 60_000, "no fault holds the run up to the default timeout");
  // The stuck ones ignore SIGTERM: their process groups are killed all the same.
  await assertNothingLeft(at.tag);
});

Deno.test("amber plugins disable mcp.basic --dry-run lists what the server contributes", async () => {
  await using at = await scene();
  await configure(at, { basic: tagged("basic", at.tag) });
  const dry = await amber(at, ["plugins", "disable", "mcp.basic", "--dry-run"]);
  assert.equal(dry.code, 0, dry.err);
  assert.match(dry.out, /mcp\.basic/);
  for (const name of ["echo", "add", "peek", "read_resource"]) {
    assert.match(dry.out, new RegExp(`mcp__basic__${name}\\b`));
  }
  assert.match(dry.out, /mcp__basic__greet/);
  assert.match(dry.out, /dry run: nothing was changed/);
  const info = await amber(at, ["plugins", "info", "mcp.basic"]);
  assert.match(info.out, /state: active/);
  await assertNothingLeft(at.tag);
});

Deno.test({
  name:
    "server-everything over stdio (npx): tools, a prompt, resources, progress, sampling and elicitation declined",
  ignore: noNpx,
  fn: async () => {
    await using at = await scene();
    await configure(at, {
      everything: { command: "npx", args: ["-y", MCP_NPM_SERVERS.everything, "stdio", at.tag] },
    });
    await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
    await everythingCases(at, provider, "stdio");
  },
});

Deno.test({
  name: "server-everything over Streamable HTTP: the same",
  ignore: noNpx,
  fn: async () => {
    await using at = await scene();
    const port = freePort();
    const server = new Deno.Command("setsid", {
      args: ["npx", "-y", MCP_NPM_SERVERS.everything, "streamableHttp", at.tag],
      env: { PORT: String(port) },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    try {
      await waitForLine(server.stderr, /listening on port/i, 120_000);
      await configure(at, { everything: { type: "http", url: `http://127.0.0.1:${port}/mcp` } });
      await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
      await everythingCases(at, provider, "http");
    } finally {
      // setsid made npx a group leader: the group is npx, its shell and node.
      try {
        Deno.kill(-server.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
      await server.status;
    }
    await assertNothingLeft(at.tag);
  },
});

async function everythingCases(at: Scene, provider: FakeProvider, transport: string) {
  const data = `data:text/plain;base64,${btoa("compress me")}`;
  script(
    provider,
    {
      toolCalls: [
        { id: "e1", name: "mcp__everything__echo", arguments: { message: "hi" } },
        {
          id: "e2",
          name: "mcp__everything__trigger-long-running-operation",
          arguments: { duration: 1, steps: 2 },
        },
        {
          id: "e3",
          name: "mcp__everything__read_resource",
          arguments: { uri: "demo://resource/static/document/features.md" },
        },
        { id: "e4", name: "mcp__everything__get-roots-list", arguments: {} },
        {
          id: "e5",
          name: "mcp__everything__gzip-file-as-resource",
          arguments: { name: "small.txt.gz", data },
        },
      ],
    },
    { toolCalls: [{ id: "e6", name: "mcp__everything__list_resources", arguments: {} }] },
    { text: "done" },
  );
  const result = await run(at, provider, "exercise everything", "--json");
  assert.equal(result.code, 0, `${transport}: ${result.err}`);
  const [echo, long, features, roots] = toolResults(provider, 1);
  assert.equal(echo, "Echo: hi");
  assert.match(long, /Long running operation completed/);
  assert.ok(features.length > 100, features);
  // Roots: the workspace.
  assert.ok(roots.includes(`file://${at.workspace}`), roots);
  const progress = events(result.out).filter((e) =>
    e.type === "toolProgress" &&
    (e.call as { name: string }).name === "mcp__everything__trigger-long-running-operation"
  );
  assert.ok(progress.length >= 1, `${transport}: progress shows on the tool's line`);
  // The gzip tool registered a resource of the session and said the resource list changed.
  assert.match(toolResults(provider, 2).at(-1)!, /small\.txt\.gz/);

  // Sampling and elicitation: amber offers both (the server registers these tools only for a
  // client that does), but a headless run has nobody to ask, so both requests are declined.
  const asks = ["trigger-sampling-request", "trigger-elicitation-request"];
  const tools = offered(provider, 0);
  for (const name of asks) assert.ok(tools.includes(`mcp__everything__${name}`), name);
  script(
    provider,
    {
      toolCalls: asks.map((name, i) => ({
        id: `s${i}`,
        name: `mcp__everything__${name}`,
        arguments: name.includes("sampling") ? { prompt: "say hi", maxTokens: 5 } : {},
      })),
    },
    { text: "declined" },
  );
  const before = provider.chats.length;
  const asked = await run(at, provider, "ask me");
  assert.equal(asked.code, 0, asked.err);
  const answers = toolResults(provider, before + 1);
  assert.equal(answers.length, 2);
  for (const answer of answers) {
    assert.match(answer, /declined/i, answer);
  }
  // The sampling request never reached the provider as a request of its own.
  assert.equal(provider.chats.length, before + 2);

  // A prompt with arguments, by name.
  script(provider, { text: "Sunny." });
  const first = provider.chats.length;
  const prompted = await run(at, provider, "/mcp__everything__args-prompt city=Paris");
  assert.equal(prompted.code, 0, prompted.err);
  const users = chat(provider, first).messages.filter((m) => m.role === "user");
  assert.deepEqual(users.map((m) => m.content), ["What's weather in Paris?"]);
  // Over HTTP the server is the test's, still running; over stdio it was amber's.
  if (transport === "stdio") await assertNothingLeft(at.tag);
}

Deno.test({
  name:
    "server-filesystem (npx) rooted at the workspace reads a file there and refuses one outside",
  ignore: noNpx,
  fn: async () => {
    await using at = await scene();
    await Deno.writeTextFile(`${at.workspace}/notes.txt`, "the answer is 42\n");
    await using outside = await scene();
    await Deno.writeTextFile(`${outside.workspace}/secret.txt`, "nope\n");
    await configure(at, {
      filesystem: {
        command: "npx",
        // Its arguments are the directories it may use: the workspace's path, unique to this
        // test, is what ps looks for afterwards.
        args: ["-y", MCP_NPM_SERVERS.filesystem, at.workspace],
      },
    });
    await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
    script(
      provider,
      {
        toolCalls: [
          {
            id: "f1",
            name: "mcp__filesystem__read_text_file",
            arguments: { path: `${at.workspace}/notes.txt` },
          },
          {
            id: "f2",
            name: "mcp__filesystem__read_text_file",
            arguments: { path: `${outside.workspace}/secret.txt` },
          },
        ],
      },
      { text: "42" },
    );
    const result = await run(at, provider, "read the notes");
    assert.equal(result.code, 0, result.err);
    const [notes, secret] = toolResults(provider, 1);
    assert.match(notes, /the answer is 42/);
    assert.match(secret, /Access denied|outside allowed directories/);
    assert.doesNotMatch(secret, /nope/);
    await assertNothingLeft(at.workspace);
  },
});

/** A port free on 127.0.0.1 a moment ago. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Reads `stream` until a line matches, then keeps draining it in the background. */
async function waitForLine(
  stream: ReadableStream<Uint8Array>,
  pattern: RegExp,
  timeoutMs: number,
): Promise<void> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = setTimeout(() => reader.cancel(), timeoutMs);
  try {
    while (!pattern.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the server ended without printing ${pattern}:\n${text}`);
      text += value;
    }
  } finally {
    clearTimeout(deadline);
  }
  (async () => {
    while (!(await reader.read()).done) {
      // The server's log is not needed; reading it keeps its pipe from filling.
    }
  })().catch(() => {});
}
