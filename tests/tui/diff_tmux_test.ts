// In a real terminal (tmux), an edit the user is asked to approve shows its diff: in the
// interactive session's approval question and then in the transcript, and in `amber run
// --approve ask` above its question. The file lies outside the workspace, the one place a
// bundled edit asks.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { hasTmux, startAmber, TASK_FLAGS, Tmux } from "./_tmux.ts";

const ignore = !hasTmux();
const PROMPT = /^›\s*$/m;

interface World extends AsyncDisposable {
  readonly server: FakeProvider;
  readonly configDir: string;
  readonly workspace: string;
  /** A folder outside the workspace, with `config.txt`. */
  readonly outside: string;
}

async function world(turns: (outside: string) => ScriptedTurn[]): Promise<World> {
  const configDir = await Deno.makeTempDir({ prefix: "amber-diff-" });
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-diff-ws-" }));
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-diff-out-" }));
  await Deno.writeTextFile(`${outside}/config.txt`, "name = demo\nport = 8080\nhost = localhost\n");
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(...turns(outside));
  return {
    server,
    configDir,
    workspace,
    outside,
    async [Symbol.asyncDispose]() {
      await server.close();
      for (const dir of [configDir, workspace, outside]) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}

const editPort = (outside: string): ScriptedTurn[] => [
  {
    toolCalls: [{
      name: "edit",
      arguments: {
        path: `${outside}/config.txt`,
        old_string: "port = 8080",
        new_string: "port = 9090",
      },
    }],
  },
  { text: "The port is now 9090." },
];

Deno.test({
  name: "tmux: an edit asked for approval shows its diff in the question and the transcript",
  ignore,
  async fn() {
    await using w = await world(editPort);
    await using tmux = await startAmber({
      baseUrl: `${w.server.url}/v1`,
      configDir: w.configDir,
      workspace: w.workspace,
    });
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("change the port");
    await tmux.keys("Enter");
    const question = await tmux.waitFor(/\+ port = 9090/, "the diff in the approval question");
    assert.match(question, /config\.txt \+1 -1\s+\(outside the workspace\)/);
    assert.match(question, /@@ -1,3 \+1,3 @@/);
    assert.match(question, /1 {3}name = demo\n2 - port = 8080\n2 \+ port = 9090\n3 {3}host/);
    // The question and its choices stay below the diff.
    assert.match(question, /\+ port = 9090[\s\S]*allow once[\s\S]*deny/);
    assert.equal(
      await Deno.readTextFile(`${w.outside}/config.txt`),
      "name = demo\nport = 8080\nhost = localhost\n",
    );
    await tmux.type("y");
    const after = await tmux.waitFor(/The port is now 9090\./, "the answer after the edit");
    assert.doesNotMatch(after, /allow once/, "the question is gone");
    assert.match(after, /- port = 8080/, "the transcript shows what was removed");
    assert.match(after, /\+ port = 9090/, "the transcript shows what was added");
    assert.match(await Deno.readTextFile(`${w.outside}/config.txt`), /port = 9090/);
  },
});

// tmux's own server on a socket of this test, for what _tmux.ts does not read: the screen with
// its colours (`capture-pane -e`), with amber started without NO_COLOR.
async function tmuxColours(...args: string[]): Promise<string> {
  const output = await new Deno.Command("tmux", {
    args: ["-L", COLOUR_SOCKET, "-f", "/dev/null", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) throw new Error(new TextDecoder().decode(output.stderr));
  return new TextDecoder().decode(output.stdout);
}
const ESC = String.fromCharCode(0x1b);
const SGR = `${ESC}\\[[0-9;]*m`;
const COLOUR_SOCKET = `amber-diff-colours-${crypto.randomUUID().slice(0, 8)}`;
const MAIN = new URL("../../cli/main.ts", import.meta.url).pathname;

Deno.test({
  name: "tmux: the approval question's diff is coloured: removed lines red, added green",
  ignore,
  async fn() {
    await using w = await world(editPort);
    const env = [
      `AMBER_CONFIG_DIR=${w.configDir}`,
      "OPENAI_API_KEY=sk-test-key-1234",
      "TERM=xterm-256color",
      `INIT_CWD=${w.workspace}`,
    ];
    const command = [
      Deno.execPath(),
      "run",
      "-A",
      ...TASK_FLAGS,
      MAIN,
      "--base-url",
      `${w.server.url}/v1`,
    ];
    await tmuxColours(
      "new-session",
      "-d",
      "-x",
      "100",
      "-y",
      "30",
      "-c",
      w.workspace,
      "env",
      "-u",
      "NO_COLOR",
      ...env,
      ...command,
      "--model",
      "fake-model",
    );
    try {
      const screen = async (): Promise<string> => await tmuxColours("capture-pane", "-p", "-e");
      const waitFor = async (pattern: RegExp): Promise<string> => {
        const deadline = Date.now() + 20_000;
        let text = "";
        while (Date.now() < deadline) {
          text = await screen();
          if (pattern.test(text.replace(new RegExp(SGR, "g"), ""))) return text;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`waited for ${pattern}; the screen was:\n${text}`);
      };
      await waitFor(/^›\s*$/m);
      await tmuxColours("send-keys", "-l", "change the port");
      await tmuxColours("send-keys", "Enter");
      const coloured = await waitFor(/\+ port = 9090/);
      // tmux writes each cell's colours as SGR: red (31) before the removed line, green (32)
      // before the added one.
      assert.match(coloured, new RegExp(`${ESC}\\[31m(${SGR})*- (${SGR})*port = 8080`));
      assert.match(coloured, new RegExp(`${ESC}\\[32m(${SGR})*\\+ (${SGR})*port = 9090`));
      await tmuxColours("send-keys", "n");
    } finally {
      await tmuxColours("kill-server").catch(() => {});
    }
  },
});

Deno.test({
  name: "tmux: a long write outside the workspace is cut to the screen, question and choices kept",
  ignore,
  async fn() {
    const content = Array.from({ length: 60 }, (_, i) => `entry ${i + 1}`).join("\n") + "\n";
    await using w = await world((outside) => [
      { toolCalls: [{ name: "write", arguments: { path: `${outside}/list.txt`, content } }] },
      { text: "Written." },
    ]);
    await using tmux = await startAmber({
      baseUrl: `${w.server.url}/v1`,
      configDir: w.configDir,
      workspace: w.workspace,
      rows: 18,
    });
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("write the list");
    await tmux.keys("Enter");
    const question = await tmux.waitFor(/more lines · full diff/, "the cut diff");
    assert.match(question, /Allow write/, "the question stays in view");
    assert.match(question, /list\.txt \+60 -0\s+\(outside the workspace\)/);
    assert.match(question, /1 \+ entry 1\n/);
    assert.match(question, /allow once[\s\S]*deny/, "the choices stay in view");
    assert.doesNotMatch(question, /entry 60/);
    await tmux.type("y");
    await tmux.waitFor(/Written\./, "the answer after the write");
    assert.equal(await Deno.readTextFile(`${w.outside}/list.txt`), content);
  },
});

Deno.test({
  name: "tmux: amber run --approve ask shows an edit's diff above its question",
  ignore,
  async fn() {
    await using w = await world(editPort);
    // Colours on (no NO_COLOR), as a user's terminal has them: the text reads the same.
    await using tmux = await Tmux.start(
      [
        "run",
        "--approve",
        "ask",
        "--base-url",
        `${w.server.url}/v1`,
        "--model",
        "fake-model",
        "change the port",
      ],
      {
        AMBER_CONFIG_DIR: w.configDir,
        OPENAI_API_KEY: "sk-test-key-1234",
        TERM: "xterm-256color",
        INIT_CWD: w.workspace,
      },
      w.workspace,
    );
    const screen = await tmux.waitFor(/\? allow edit/, "the approval question");
    assert.match(screen, /config\.txt \+1 -1\s+\(outside the workspace\)/);
    assert.match(screen, /2 - port = 8080\n2 \+ port = 9090\n[\s\S]*\? allow edit/);
    await tmux.type("y");
    await tmux.keys("Enter");
    await tmux.waitFor(/amber exited 0/, "the run to finish");
    assert.match(await Deno.readTextFile(`${w.outside}/config.txt`), /port = 9090/);
  },
});
