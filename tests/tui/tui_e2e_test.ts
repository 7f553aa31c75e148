// `amber` in a real terminal: tmux runs it against the fake provider started here; the test
// types with send-keys and reads the screen with capture-pane, polling until what it expects
// appears (no timing assertions: every wait has a generous deadline and says what it waited
// for). Each test kills its tmux server and its provider.

import assert from "node:assert/strict";
import { SessionFile } from "@amber/core/kernel";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { hasTmux, startAmber, type Tmux } from "./_tmux.ts";
import { switchHelloOn } from "../_hello_on.ts";

const ignore = !hasTmux();

interface World extends AsyncDisposable {
  readonly tmux: Tmux;
  readonly server: FakeProvider;
  readonly configDir: string;
}

async function amber(
  turns: ScriptedTurn[],
  options: { model?: string; baseUrl?: (server: FakeProvider) => string } = {},
): Promise<World> {
  const configDir = await Deno.makeTempDir({ prefix: "amber-e2e-" });
  // The worked example plugin is off by default; these tests use its tool and command.
  await switchHelloOn(configDir);
  const workspace = await Deno.makeTempDir({ prefix: "amber-e2e-ws-" });
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(...turns);
  const baseUrl = options.baseUrl?.(server) ?? `${server.url}/v1`;
  const tmux = await startAmber({ baseUrl, configDir, workspace, model: options.model });
  return {
    tmux,
    server,
    configDir,
    async [Symbol.asyncDispose]() {
      await tmux[Symbol.asyncDispose]();
      await server.close();
      await Deno.remove(configDir, { recursive: true }).catch(() => {});
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    },
  };
}

const PROMPT = /^›\s*$/m;

Deno.test({
  name: "tmux: a prompt streams its answer, rendered for the terminal",
  ignore,
  async fn() {
    await using world = await amber([{
      text:
        "Here is **the answer**:\n\n- first point\n- second point\n\n```ts\nconst x = 42;\n```\n",
      usage: { promptTokens: 1500, completionTokens: 42 },
    }]);
    const { tmux } = world;
    await tmux.waitFor(PROMPT, "the prompt");
    assert.equal(await tmux.variable("alternate_on"), "1", "the TUI uses the alternate screen");
    await tmux.type("what is the answer?");
    await tmux.keys("Enter");
    const screen = await tmux.waitFor(/const x = 42;/, "the code block");
    assert.match(screen, /› what is the answer\?/);
    assert.match(screen, /Here is the answer:/, "emphasis markers are rendered, not shown");
    assert.match(screen, /• first point\n• second point/);
    assert.match(screen, /┌ ts\n│ const x = 42;\n└/);
  },
});

Deno.test({
  name: "tmux: a tool needing approval is approved and runs",
  ignore,
  async fn() {
    await using world = await amber([
      { toolCalls: [{ name: "bash", arguments: { command: "echo approved-output" } }] },
      { text: "The command printed approved-output." },
    ]);
    const { tmux } = world;
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("run the command");
    await tmux.keys("Enter");
    await tmux.waitFor(/Allow bash: \$ echo approved-output/, "the approval prompt");
    assert.match(await tmux.capture(), /y {2}allow once[\s\S]*a {2}allow always[\s\S]*n {2}deny/);
    await tmux.type("y");
    await tmux.waitFor(/✓ approved-output/, "the tool's outcome");
    await tmux.waitFor(/The command printed approved-output\./, "the answer after the tool");
    const request = world.server.chats[1].body as { messages: { role: string; content: string }[] };
    const tool = request.messages.find((m) => m.role === "tool")!;
    assert.match(tool.content, /approved-output/, "the tool really ran");
  },
});

Deno.test({
  name: "tmux: the status bar shows the model and tokens and shrinks when the window narrows",
  ignore,
  async fn() {
    await using world = await amber(
      [{ text: "ok", usage: { promptTokens: 2400, completionTokens: 120 } }],
      { model: "fake-model-with-a-long-name" },
    );
    const { tmux } = world;
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("hi");
    await tmux.keys("Enter");
    await tmux.waitFor(/↑2\.4k ↓120/, "the token counts");
    const wide = await tmux.bar();
    assert.match(wide, /^fake-model-with-a-long-name │ build │ ↑2\.4k ↓120/);
    await tmux.resize(40);
    const narrow = await tmux.waitFor(
      (screen) => !/build/.test(screen.trimEnd().split("\n").at(-1) ?? ""),
      "the bar to drop a segment",
    );
    const bar = narrow.trimEnd().split("\n").at(-1)!;
    assert.match(bar, /^fake-model-with-a-long-name/, "the model stays longest");
    assert.ok(bar.length <= 40, `the bar fits 40 columns: '${bar}'`);
    assert.ok(bar.length < wide.length);
  },
});

Deno.test({
  name: "tmux: / shows completions; /set plugin off|on hello removes and restores /hello greet",
  ignore,
  async fn() {
    await using world = await amber([]);
    const { tmux } = world;
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("/");
    await tmux.waitFor(/\/hello greet +Greet someone by name/, "the drawer with /hello greet");
    // Narrowed by what is typed: the whole list no longer fits the drawer (`/agents` came in).
    await tmux.type("se");
    await tmux.waitFor(/\/set plugin +Turn a plugin on or off/, "the drawer with /set plugin");
    await tmux.type("t plugin off hello");
    await tmux.keys("Enter");
    await tmux.waitFor(/hello: disabled/, "the plugin to go off");
    await tmux.type("/");
    await tmux.waitFor(/\/help +Show the commands/, "the drawer");
    assert.doesNotMatch(await tmux.capture(), /\/hello greet/, "its command is gone");
    await tmux.type("set plugin on hello");
    await tmux.keys("Enter");
    await tmux.waitFor(/hello: active/, "the plugin to come back");
    await tmux.type("/");
    await tmux.waitFor(/\/hello greet +Greet someone by name/, "its command back in the drawer");
  },
});

Deno.test({
  name: "tmux: /plugins shows the console and Esc closes it",
  ignore,
  async fn() {
    await using world = await amber([]);
    const { tmux } = world;
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("/plugins");
    await tmux.keys("Enter");
    const screen = await tmux.waitFor(/Esc close ·/, "the console's footer");
    assert.match(screen, /^ Plugins/m);
    assert.match(screen, /^ provider\n +openai +OpenAI/m);
    assert.match(screen, /^ tools\n +tool_read +Read/m);
    await tmux.keys("Escape");
    await tmux.waitFor((s) => !s.includes("Esc close ·") && PROMPT.test(s), "the prompt again");
  },
});

/**
 * A proxy in front of the fake provider that passes each server-sent event on after a pause:
 * the answer streams slowly enough to be interrupted in the middle.
 */
function slowProxy(upstream: string, pauseMs: number): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const url = new URL(request.url);
    const response = await fetch(`${upstream}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.method === "POST" ? await request.text() : undefined,
    });
    if (response.body === null) return response;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buffer = "";
    let closed = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        while (!buffer.includes("\n\n")) {
          const { value, done } = await reader.read();
          if (done) {
            if (buffer !== "") controller.enqueue(encoder.encode(buffer));
            buffer = "";
            controller.close();
            return;
          }
          buffer += decoder.decode(value, { stream: true });
        }
        const end = buffer.indexOf("\n\n") + 2;
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        if (!closed) controller.enqueue(encoder.encode(event));
      },
      cancel() {
        closed = true;
        return reader.cancel();
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  });
}

Deno.test({
  name: "tmux: Ctrl-C during a stream cancels it; the transcript keeps the committed steps",
  ignore,
  async fn() {
    const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
    let proxy: Deno.HttpServer<Deno.NetAddr> | undefined;
    await using world = await amber([
      { toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] },
      { text: `Streaming slowly: ${words}`, chunkSize: 6 },
    ], {
      baseUrl: (server) => {
        proxy = slowProxy(server.url, 60);
        return `http://127.0.0.1:${proxy.addr.port}/v1`;
      },
    });
    try {
      const { tmux, configDir } = world;
      await tmux.waitFor(PROMPT, "the prompt");
      await tmux.type("greet Ada, then talk");
      await tmux.keys("Enter");
      await tmux.waitFor(/✓ Hello, Ada!/, "the committed tool step");
      await tmux.waitFor(/Streaming slowly: word0/, "the answer to start streaming");
      await tmux.keys("C-c");
      const screen = await tmux.waitFor(/cancelled \(every committed step is kept\)/, "cancel");
      assert.doesNotMatch(screen, /word299/, "the stream was cut short");
      const [id] = [...Deno.readDirSync(`${configDir}/sessions`)].map((e) =>
        e.name.replace(/\.jsonl$/, "")
      );
      const session = await SessionFile.load(configDir, id);
      assert.deepEqual(session.steps[0].messages.map((m) => m.role), ["user", "assistant", "tool"]);
      assert.equal(session.steps[0].messages[2].content, "Hello, Ada!");
      const last = session.steps.at(-1)!;
      assert.equal(last.end, "cancelled");
      assert.match(last.messages[0]?.content ?? "", /^Streaming slowly: word0/);
      // A second Ctrl-C at the idle prompt leaves, and the terminal is as it was.
      await tmux.waitFor(/Ctrl-C again to quit/, "the hint");
      await tmux.keys("C-c");
      const after = await tmux.waitFor(/amber exited 0/, "amber to exit");
      assert.match(after, new RegExp(`continue with: amber --resume ${id}`));
      assert.equal(await tmux.variable("alternate_on"), "0", "the alternate screen was left");
      assert.equal(await tmux.variable("cursor_flag"), "1", "the cursor shows again");
    } finally {
      await proxy?.shutdown();
    }
  },
});
