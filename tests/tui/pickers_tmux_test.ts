// The `/model` picker and `@` completion in a real terminal (tmux, 100x30, as the README's
// captures are taken): the fake provider lists real model ids, which the catalog describes with
// their context windows and prices; `@` offers the workspace's files with .gitignore respected.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { hasTmux, startAmber, type Tmux } from "./_tmux.ts";

const ignore = !hasTmux();

interface World extends AsyncDisposable {
  readonly tmux: Tmux;
  readonly server: FakeProvider;
  readonly workspace: string;
}

async function amber(turns: ScriptedTurn[], files: Record<string, string> = {}): Promise<World> {
  const configDir = await Deno.makeTempDir({ prefix: "amber-pick-" });
  const workspace = await Deno.makeTempDir({ prefix: "amber-pick-ws-" });
  for (const [path, text] of Object.entries(files)) {
    const full = `${workspace}/${path}`;
    await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(full, text);
  }
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.models = ["gpt-4.1", "gpt-4.1-mini", "gpt-5", "gpt-5-mini", "o3", "o4-mini"];
  server.script(...turns);
  const tmux = await startAmber({
    baseUrl: `${server.url}/v1`,
    configDir,
    workspace,
    model: "gpt-5-mini",
  });
  return {
    tmux,
    server,
    workspace,
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
  name: "tmux: /model opens the picker of the provider's models with windows and prices",
  ignore,
  async fn() {
    await using world = await amber([{ text: "switched and answered" }]);
    const { tmux, server } = world;
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("/model");
    await tmux.keys("Enter");
    const screen = await tmux.waitFor(/o4-mini/, "the provider's models");
    console.log(`--- /model picker (100x30) ---\n${screen.trimEnd()}\n---`);
    assert.match(screen, /Models of openai/);
    assert.match(screen, /› gpt-5-mini \(in use\) +400,000 +0\.25 +2/);
    assert.match(screen, /^ +o3 +200,000 +2 +8$/m);
    assert.match(screen, /type to filter · ↑↓ select · Enter pick · Esc close/);
    await tmux.type("4.1");
    await tmux.waitFor((s) => !/o4-mini/.test(s) && /gpt-4\.1-mini/.test(s), "the list narrowed");
    await tmux.keys("Down", "Enter");
    await tmux.waitFor(/provider openai, model gpt-4\.1-mini/, "the switch");
    await tmux.type("hello");
    await tmux.keys("Enter");
    await tmux.waitFor(/switched and answered/);
    assert.equal((server.chats.at(-1)?.body as { model: string }).model, "gpt-4.1-mini");
  },
});

Deno.test({
  name: "tmux: @ completes workspace files fuzzily, .gitignore respected, and attaches the file",
  ignore,
  async fn() {
    await using world = await amber([{ text: "The notes list two tasks." }], {
      ".gitignore": "build/\n*.log\n",
      "README.md": "# demo\n",
      "docs/notes.md": "- write the parser\n- test the parser\n",
      "src/notes_view.ts": "export {};\n",
      "src/parser/notes.ts": "export {};\n",
      "build/notes.js": "ignored\n",
      "notes.log": "ignored\n",
    });
    const { tmux, server } = world;
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("summarise @notes");
    const screen = await tmux.waitFor(/@src\/parser\/notes\.ts/, "the files offered");
    console.log(`--- @ completion (100x30) ---\n${screen.trimEnd()}\n---`);
    const offered = [...screen.matchAll(/^ +@(\S+) +file$/gm)].map((m) => m[1]);
    assert.deepEqual(offered, ["docs/notes.md", "src/notes_view.ts", "src/parser/notes.ts"]);
    await tmux.keys("Tab");
    await tmux.waitFor(/^› summarise @docs\/notes\.md\s*$/m, "the path completed");
    await tmux.keys("Enter");
    const after = await tmux.waitFor(/The notes list two tasks\./);
    assert.match(after, /attached docs\/notes\.md \(2 lines\)/);
    const body = JSON.stringify(server.chats.at(-1)?.body);
    assert.ok(body.includes("- write the parser\\n- test the parser"), body);
  },
});
