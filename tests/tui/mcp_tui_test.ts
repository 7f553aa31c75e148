// MCP servers in the interactive session: `/mcp`, prompt commands, `@` completion of resources,
// sampling and elicitation asked in dialogs, and the approval of a workspace's server. A real
// stdio server (tests/tui/_mcp_server.ts, the `basic` test server with two tools that ask the
// client back), the real host and kernel, the fake provider; in-process with a virtual terminal,
// and once end to end in tmux.

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { McpServerSpec } from "@amber/mcp";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { buildTui, type Tui } from "../../cli/commands/tui.ts";
import { openHost } from "../../cli/host.ts";
import { Drawer, editKey } from "../../cli/tui/drawer.ts";
import { History, LineEditor } from "../../cli/tui/line_editor.ts";
import { plainText } from "../../cli/tui/lines.ts";
import { elicit, samplingQuestion } from "../../cli/tui/mcp_requests.ts";
import { README_TEXT } from "../mcp/_servers/basic.ts";
import { FakeTerminal } from "./_harness.ts";
import { hasTmux, startAmber } from "./_tmux.ts";

const SERVER = fileURLToPath(new URL("./_mcp_server.ts", import.meta.url));
const ENTRY = { command: Deno.execPath(), args: ["run", "-A", SERVER] };
const ESC = "\x1b";
const TAB = "\t";
const STEP_MS = 20_000;

interface World extends AsyncDisposable {
  readonly tui: Tui;
  readonly terminal: FakeTerminal;
  readonly server: FakeProvider;
  readonly configDir: string;
  readonly workspace: string;
  waitFor(test: RegExp | ((screen: string) => boolean), what?: string): Promise<string>;
  /** The transcript's text, however far it scrolled. */
  transcript(): string;
}

async function world(
  turns: ScriptedTurn[],
  options: {
    readonly where?: "config" | "workspace";
    readonly approveMcp?: (spec: McpServerSpec) => Promise<boolean>;
    readonly servers?: Readonly<Record<string, { command: string; args: string[] }>>;
  } = {},
): Promise<World> {
  const configDir = await Deno.makeTempDir({ prefix: "amber-mcp-tui-" });
  const workspace = await Deno.makeTempDir({ prefix: "amber-mcp-tui-ws-" });
  if (options.where === "workspace") {
    await Deno.writeTextFile(
      `${workspace}/.mcp.json`,
      JSON.stringify({ mcpServers: { tui: ENTRY } }),
    );
  } else {
    // JSON is YAML.
    await Deno.writeTextFile(
      `${configDir}/config.yaml`,
      JSON.stringify({ mcp: { servers: options.servers ?? { tui: ENTRY } } }),
    );
  }
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(...turns);
  const terminal = new FakeTerminal(110, 30);
  const tui = await buildTui({
    openHost: (extras) => openHost({ ...extras, configDir, workspace, thirdParty: false }),
    terminal,
    overrides: { baseUrl: `${server.url}/v1`, model: "fake-model" },
    env: () => "sk-test-key-1234",
    frameMs: 1,
    tickMs: 50,
    ...(options.approveMcp === undefined ? {} : { approveMcp: options.approveMcp }),
  });
  const exit = tui.app.run();
  const waitFor = async (
    test: RegExp | ((screen: string) => boolean),
    what = String(test),
  ): Promise<string> => {
    const check = typeof test === "function" ? test : (s: string) => test.test(s);
    const deadline = Date.now() + STEP_MS;
    while (Date.now() < deadline) {
      if (check(terminal.text())) return terminal.text();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`timed out waiting for ${what}; the screen:\n${terminal.text()}`);
  };
  return {
    tui,
    terminal,
    server,
    configDir,
    workspace,
    waitFor,
    transcript: () =>
      tui.app.transcript.view(200, 500, 0).map((line) => line.map((s) => s.text).join("")).join(
        "\n",
      ),
    async [Symbol.asyncDispose]() {
      tui.app.quit();
      await exit;
      tui.close();
      await tui.host.close();
      await server.close();
      await Deno.remove(configDir, { recursive: true });
      await Deno.remove(workspace, { recursive: true });
    },
  };
}

const connected = (w: World) => () => w.tui.host.mcp?.get("tui")?.state.status === "connected";

async function until(test: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + STEP_MS;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const userMessages = (request: { body: unknown }) =>
  (request.body as { messages: { role: string; content: string }[] }).messages
    .filter((m) => m.role === "user").map((m) => m.content);

// A UI that answers from a script and records the questions (undefined: the user pressed Esc).
function scriptedUi(answers: (string | undefined)[]) {
  const asked: string[] = [];
  const next = (question: string) => {
    asked.push(question);
    return Promise.resolve(answers.shift());
  };
  return {
    asked,
    ui: {
      askText: (question: string) => next(question),
      choose: <T extends string>(question: string, choices: readonly T[]) =>
        next(`${question} [${choices.join("|")}]`) as Promise<T | undefined>,
      confirm: (question: string) => next(question).then((answer) => answer === "yes"),
      notify: (message: string) => void asked.push(`notice: ${message}`),
    },
  };
}

const NEVER = new AbortController().signal;

Deno.test("elicitation re-asks a field until it fits its schema, skips optional ones", async () => {
  const { ui, asked } = scriptedUi(["answer", "twelve", "120", "12", "", "(leave it out)"]);
  const result = await elicit(
    ui,
    {
      message: "Configure",
      requestedSchema: {
        type: "object",
        properties: {
          port: { type: "integer", title: "Port", minimum: 1, maximum: 100 },
          label: { type: "string", description: "A label" },
          fast: { type: "boolean" },
        },
        required: ["port"],
      },
    },
    NEVER,
    "srv",
  );
  assert.deepEqual(result, { action: "accept", content: { port: 12 } });
  assert.deepEqual(asked, [
    "MCP server srv asks: Configure [answer|decline]",
    "Port",
    "Port\n'twelve' is not a number",
    "Port\nat most 100",
    "label (optional): A label",
    "fast (optional) [yes|no|(leave it out)]",
  ]);
});

Deno.test("elicitation: decline, Esc (cancel), and a URL request", async () => {
  const schema = {
    type: "object" as const,
    properties: { name: { type: "string" as const } },
    required: ["name"],
  };
  const declined = scriptedUi(["decline"]);
  assert.deepEqual(
    await elicit(declined.ui, { message: "Who?", requestedSchema: schema }, NEVER, "s"),
    { action: "decline" },
  );
  const cancelled = scriptedUi(["answer", undefined]);
  assert.deepEqual(
    await elicit(cancelled.ui, { message: "Who?", requestedSchema: schema }, NEVER, "s"),
    { action: "cancel" },
  );
  const url = scriptedUi(["I opened it"]);
  assert.deepEqual(
    await elicit(
      url.ui,
      {
        mode: "url",
        message: "Sign in",
        elicitationId: "e1",
        url: "https://example.com/auth",
      },
      NEVER,
      "s",
    ),
    { action: "accept" },
  );
  assert.equal(url.asked[0], "notice: MCP server s asks you to open https://example.com/auth");
});

Deno.test("the drawer offers resources for an @ word: ↑↓ select, Tab inserts, Esc closes", () => {
  let resources = [
    { server: "docs", uri: "docs://a", name: "Alpha" },
    { server: "docs", uri: "docs://b", name: "Beta" },
  ];
  const drawer = new Drawer({ resources: () => resources });
  const editor = new LineEditor(new History());
  const sent: string[] = [];
  const target = { drawer, editor, tree: () => [], submit: () => sent.push(editor.take()) };
  const key = (name: string, text?: string) =>
    editKey(target, { name, text, ctrl: false, alt: false, shift: false });
  key("text", "see @docs:");
  drawer.update([], editor.text);
  assert.equal(drawer.mentioning, true);
  assert.deepEqual(drawer.lines(60, 5).map(plainText).map((l) => l.trim().replace(/\s+/g, " ")), [
    "@docs:docs://a Alpha",
    "@docs:docs://b Beta",
  ]);
  key("down");
  key("tab");
  assert.equal(editor.text, "see @docs:docs://b ");
  assert.equal(drawer.open, false, "a space after the mention closes it");
  key("text", "@docs:z");
  assert.equal(drawer.open, false, "nothing matches: no drawer");
  // A server's resources arrive while the word is typed.
  resources = [...resources, { server: "docs", uri: "docs://zeta", name: "Zeta" }];
  drawer.update([], editor.text);
  assert.equal(drawer.open, true);
  key("escape");
  assert.equal(drawer.open, false, "Esc closes it");
  key("enter");
  assert.deepEqual(sent, ["see @docs:docs://b @docs:z"], "Enter sends the line as typed");
});

Deno.test("the sampling question shows the first line, cut to fit", () => {
  const long = "x".repeat(200);
  const question = samplingQuestion("srv", {
    maxTokens: 1,
    messages: [{ role: "user", content: { type: "text", text: long } }],
  });
  assert.equal(question, `MCP server srv asks the model: ${"x".repeat(79)}… Allow?`);
});

Deno.test("/mcp shows the server connected with its tools, live; /mcp tools and list answer", async () => {
  await using w = await world([]);
  await w.waitFor(/^›/m, "the prompt");
  // The session does not wait for the server: the bar counts it until it is connected.
  assert.ok(w.tui.host.mcp !== undefined, "the host has the server");
  await until(connected(w), "the server to connect");
  w.terminal.type("/mcp\r");
  const panel = await w.waitFor(
    /› tui {2}connected \(stdio, tui 1\.0\.0\) {2}\d+ tools {2}config\.yaml/,
  );
  assert.match(panel, /Tools of tui:/);
  assert.match(panel, /mcp__tui__echo {2}\(echo\) {2}Returns its text unchanged\./);
  assert.match(panel, /mcp__tui__peek {2}\(peek, read-only\)/);
  assert.match(panel, /mcp__tui__ask_model {2}\(ask_model\)/);
  // `r` reconnects the selected server; the console follows its state to connected again.
  w.terminal.type("r");
  await w.waitFor(/reconnecting tui…|tui: connected/, "the reconnect note");
  await w.waitFor(/tui: connected \(stdio, tui 1\.0\.0\)/, "the reconnect to finish");
  w.terminal.type(ESC);
  await w.waitFor((s) => !s.includes("Tools of tui:"), "the console to close");
  w.terminal.type("/mcp tools tui\r");
  await w.waitFor(/Tools of tui:\n[\s\S]*mcp__tui__add {2}\(add\) {2}Adds two numbers\./);
  w.terminal.type("/mcp reconnect tui\r");
  await w.waitFor(/› \/mcp reconnect tui\s+tui: connected \(stdio, tui 1\.0\.0\)/);
  w.terminal.type("/mcp tools nope\r");
  await w.waitFor(/no MCP server 'nope'; servers: tui/);
});

Deno.test("a slow server delays nothing: the bar counts it until it connects", async () => {
  const slow = {
    command: Deno.execPath(),
    args: [
      "run",
      "-A",
      fileURLToPath(new URL("../mcp/_servers/slow.ts", import.meta.url)),
      "--seconds=3",
    ],
  };
  await using w = await world([{ text: "Answered at once." }], { servers: { tui: ENTRY, slow } });
  await w.waitFor(/^›/m, "the prompt");
  w.terminal.type("hello\r");
  await w.waitFor(/Answered at once\./, "the answer");
  assert.notEqual(w.tui.host.mcp?.get("slow")?.state.status, "connected", "the answer came first");
  const bar = (screen: string) => screen.trimEnd().split("\n").at(-1) ?? "";
  assert.match(
    bar(await w.waitFor((s) => / mcp [01]\/2/.test(bar(s)), "the count")),
    /mcp [01]\/2/,
  );
  await until(() => w.tui.host.mcp?.get("slow")?.state.status === "connected", "the slow server");
  await w.waitFor((s) => !/ mcp \d/.test(bar(s)), "the count to go once all are connected");
});

Deno.test("a prompt command's prompt starts a turn as the user's message", async () => {
  await using w = await world([{ text: "Hello, Ada!" }]);
  await w.waitFor(/^›/m, "the prompt");
  await until(
    () => w.tui.host.registries.command.tree().some((r) => r.name === "mcp__tui__greet"),
    "the prompt command",
  );
  w.terminal.type("/mcp__tui__greet Ada\r");
  const screen = await w.waitFor(/Hello, Ada!/, "the answer");
  // The command line is echoed, then the expanded prompt is the user's row.
  assert.match(screen, /› \/mcp__tui__greet Ada\n[\s\S]*› Greet Ada\./);
  await until(() => !w.tui.app.busy, "the turn to end");
  assert.deepEqual(userMessages(w.server.chats[0]), ["Greet Ada."]);
  assert.equal(
    w.tui.session.messages[0].content,
    "Greet Ada.",
    "the session holds it as the user's",
  );
});

Deno.test("sampling is asked each time: approved it reaches the provider, declined it fails", async () => {
  const ask = (question: string): ScriptedTurn => ({
    toolCalls: [{ name: "mcp__tui__ask_model", arguments: { question } }],
  });
  await using w = await world([
    ask("What is 2+2?"),
    { text: "four" }, // the sampling call
    { text: "The model said four." },
    ask("And 3+3?"),
    { text: "Declined, then." },
  ]);
  await w.waitFor(/^›/m, "the prompt");
  await until(
    () => w.tui.host.runtime.environment().tools.get("mcp__tui__ask_model") !== undefined,
    "the tool",
  );
  w.terminal.type("ask the model\r");
  await w.waitFor(/Allow mcp__tui__ask_model/, "the tool's approval");
  w.terminal.type("y");
  await w.waitFor(
    /MCP server tui asks the model: What is 2\+2\? Allow\?/,
    "the sampling question",
  );
  w.terminal.type("y");
  await w.waitFor(/The model said four\./, "the answer after the tool");
  const sampling = w.server.chats[1].body as {
    messages: { role: string; content: string }[];
    tools?: unknown[];
  };
  assert.deepEqual(sampling.messages.map((m) => [m.role, m.content]), [
    ["system", "You answer for an MCP server."],
    ["user", "What is 2+2?"],
  ]);
  const toolMessage = (w.server.chats[2].body as { messages: { role: string; content: string }[] })
    .messages.find((m) => m.role === "tool");
  assert.match(toolMessage?.content ?? "", /the model said: four/);
  await until(() => !w.tui.app.busy, "the turn to end");
  // The next request is asked again (approval is never remembered), and declined.
  w.terminal.type("again\r");
  await w.waitFor(/Allow mcp__tui__ask_model/, "the tool's approval");
  w.terminal.type("y");
  await w.waitFor(
    /MCP server tui asks the model: And 3\+3\? Allow\?/,
    "the second sampling question",
  );
  w.terminal.type("n");
  await w.waitFor(/Declined, then\./, "the answer after the declined sampling");
  const declined = (w.server.chats[4].body as { messages: { role: string; content: string }[] })
    .messages.filter((m) => m.role === "tool").at(-1);
  assert.match(declined?.content ?? "", /sampling failed: .*the user declined/);
  assert.equal(w.server.chats.length, 5, "a declined request never reaches the provider");
});

Deno.test("elicitation asks each field in a dialog and sends the answers", async () => {
  await using w = await world([
    { toolCalls: [{ name: "mcp__tui__ask_user", arguments: {} }] },
    { text: "Thanks." },
  ]);
  await w.waitFor(/^›/m, "the prompt");
  await until(
    () => w.tui.host.runtime.environment().tools.get("mcp__tui__ask_user") !== undefined,
    "the tool",
  );
  w.terminal.type("ask me\r");
  await w.waitFor(/Allow mcp__tui__ask_user/, "the tool's approval");
  w.terminal.type("y");
  await w.waitFor(/MCP server tui asks: Who is asking\?/, "the elicitation");
  w.terminal.type("\r"); // answer
  await w.waitFor(/\? Your name/, "the name field");
  w.terminal.type("Ada\r");
  await w.waitFor(/\? colour \(optional\)/, "the colour field");
  w.terminal.type("\x1b[B");
  w.terminal.type("\r"); // green
  await w.waitFor(/Thanks\./, "the answer after the tool");
  const tool = (w.server.chats[1].body as { messages: { role: string; content: string }[] })
    .messages.find((m) => m.role === "tool");
  assert.match(tool?.content ?? "", /elicited accept \{"name":"Ada","colour":"green"\}/);
});

Deno.test("@ completes a server's resources in the drawer; Tab inserts; the prompt attaches it", async () => {
  await using w = await world([{ text: "Summarised." }]);
  await w.waitFor(/^›/m, "the prompt");
  await until(() => (w.tui.host.mcp?.get("tui")?.resources.length ?? 0) > 0, "the resources");
  w.terminal.type("summarise @t");
  await w.waitFor(/@tui:\s+1 resource/, "the server offered");
  w.terminal.type(TAB);
  const listed = await w.waitFor(/@tui:basic:\/\/readme\s+readme/, "the resource offered");
  assert.match(listed, /› summarise @tui:\s*$/m);
  w.terminal.type(TAB);
  await w.waitFor(/› summarise @tui:basic:\/\/readme\s*$/m, "the completed mention");
  assert.doesNotMatch(w.terminal.text(), /readme\s+readme/, "the drawer closed");
  w.terminal.type("\r");
  await w.waitFor(/Summarised\./, "the answer");
  const sent = JSON.stringify(w.server.chats[0].body);
  assert.ok(sent.includes(README_TEXT), `the resource's text reached the model: ${sent}`);
});

Deno.test("a workspace server is approved before it starts; /mcp approve records a later yes", async () => {
  const asked: string[] = [];
  {
    await using w = await world([], {
      where: "workspace",
      approveMcp: (spec) => {
        asked.push(`${spec.name} ${spec.source}`);
        return Promise.resolve(false);
      },
    });
    await w.waitFor(/^›/m, "the prompt");
    assert.equal(asked.length, 1);
    assert.match(asked[0], /^tui .*\.mcp\.json$/);
    assert.equal(w.tui.host.mcp?.get("tui"), undefined, "a declined server is not started");
    w.terminal.type("/mcp list\r");
    // The temporary workspace's path is as long as TMPDIR makes it: the lines may wrap.
    await w.waitFor(/tui {2}awaiting approval\s[\s\S]*?\.mcp\.json/);
    w.terminal.type("/mcp approve tui\r");
    await w.waitFor(
      /approved tui of\s[\s\S]*?\.mcp\.json:\s+it\s+starts\s+the\s+next\s+time\s+amber\s+starts\s+here/,
    );
    const approvals = JSON.parse(await Deno.readTextFile(`${w.configDir}/mcp/approvals.json`));
    assert.equal(Object.keys(Object.values(approvals.workspaces)[0] as object).join(), "tui");
  }
  {
    await using w = await world([], {
      where: "workspace",
      approveMcp: () => Promise.resolve(true),
    });
    await until(connected(w), "the approved server to connect");
  }
});

Deno.test({
  name: "tmux: /mcp, a prompt command and an approved sampling request, end to end",
  ignore: !hasTmux(),
  async fn() {
    const configDir = await Deno.makeTempDir({ prefix: "amber-mcp-e2e-" });
    const workspace = await Deno.makeTempDir({ prefix: "amber-mcp-e2e-ws-" });
    await Deno.writeTextFile(
      `${configDir}/config.yaml`,
      JSON.stringify({ mcp: { servers: { tui: ENTRY } } }),
    );
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script(
      { text: "Hi Ada." },
      { toolCalls: [{ name: "mcp__tui__ask_model", arguments: { question: "Say ok" } }] },
      { text: "ok" },
      { text: "It said ok." },
    );
    try {
      await using tmux = await startAmber({
        baseUrl: `${server.url}/v1`,
        configDir,
        workspace,
        columns: 110,
      });
      await tmux.waitFor(/^›/m, "the prompt");
      await tmux.type("/mcp");
      await tmux.keys("Enter");
      const panel = await tmux.waitFor(/tui {2}connected \(stdio, tui 1\.0\.0\)/, "the server");
      assert.match(await tmux.waitFor(/mcp__tui__echo/, "its tools"), /Tools of tui:/);
      assert.match(panel, /config\.yaml/);
      await tmux.keys("Escape");
      await tmux.waitFor((screen) => !screen.includes("Tools of tui:"), "the console to close");
      await tmux.type("/mcp__tui__greet Ada");
      await tmux.keys("Enter");
      await tmux.waitFor(/Hi Ada\./, "the answer to the prompt");
      assert.match(await tmux.capture(), /› Greet Ada\./);
      assert.deepEqual(userMessages(server.chats[0]), ["Greet Ada."]);
      await tmux.type("ask it");
      await tmux.keys("Enter");
      await tmux.waitFor(/Allow mcp__tui__ask_model/, "the tool's approval");
      await tmux.type("y");
      await tmux.waitFor(/asks the model: Say ok Allow\?/, "the sampling question");
      await tmux.type("y");
      await tmux.waitFor(/It said ok\./, "the answer after sampling");
      assert.deepEqual(userMessages(server.chats[2]), ["Say ok"], "the sampling call");
    } finally {
      await Deno.remove(configDir, { recursive: true }).catch(() => {});
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "tmux: a workspace server is asked about before the screen starts, and starts on yes",
  ignore: !hasTmux(),
  async fn() {
    const configDir = await Deno.makeTempDir({ prefix: "amber-mcp-e2e-" });
    const workspace = await Deno.makeTempDir({ prefix: "amber-mcp-e2e-ws-" });
    await Deno.writeTextFile(
      `${workspace}/.mcp.json`,
      JSON.stringify({ mcpServers: { tui: ENTRY } }),
    );
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    try {
      await using tmux = await startAmber({
        baseUrl: `${server.url}/v1`,
        configDir,
        workspace,
        columns: 200,
      });
      const question = await tmux.waitFor(/\[y\/N\]/, "the question");
      assert.match(
        question,
        /Start MCP server 'tui' from \S*\.mcp\.json:\s+\S*deno run -A \S*_mcp_server\.ts\?\s+\[y\/N\]/,
      );
      await tmux.type("y");
      await tmux.keys("Enter");
      await tmux.waitFor(/^›/m, "the prompt");
      await tmux.type("/mcp");
      await tmux.keys("Enter");
      await tmux.waitFor(
        /tui {2}connected \(stdio, tui 1\.0\.0\)/,
        "the approved server connected",
      );
      const approvals = JSON.parse(await Deno.readTextFile(`${configDir}/mcp/approvals.json`));
      assert.equal(Object.keys(Object.values(approvals.workspaces)[0] as object).join(), "tui");
    } finally {
      await Deno.remove(configDir, { recursive: true }).catch(() => {});
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    }
  },
});
