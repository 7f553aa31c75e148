// In a real terminal (tmux), an edit the user is asked to approve shows its diff: in the
// interactive session's approval question and then in the transcript, and in `amber run
// --approve ask` above its question. The file lies outside the workspace, the one place a
// bundled edit asks.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { hasTmux, startAmber, Tmux } from "./_tmux.ts";

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
    assert.match(question, /config\.txt \+1 -1 \(outside the workspace\)/);
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
    assert.match(question, /list\.txt \+60 -0 \(outside the workspace\)/);
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
    assert.match(screen, /config\.txt \+1 -1 \(outside the workspace\)/);
    assert.match(screen, /2 - port = 8080\n2 \+ port = 9090\n[\s\S]*\? allow edit/);
    await tmux.type("y");
    await tmux.keys("Enter");
    await tmux.waitFor(/amber exited 0/, "the run to finish");
    assert.match(await Deno.readTextFile(`${w.outside}/config.txt`), /port = 9090/);
  },
});
