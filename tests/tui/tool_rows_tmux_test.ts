// Tool rows in a real terminal (tmux, against the fake provider): two turns whose calls have the
// same id (`call_0`, as Gemini numbers them per process) each show their row under their own
// prompt, live and after `--resume`; Ctrl-X expands the last row and Ctrl-Y opens its output in
// the full-screen viewer, where `/` searches.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { hasTmux, startAmber } from "./_tmux.ts";

const PROMPT = /^›\s*$/m;

const TURNS: ScriptedTurn[] = [
  { toolCalls: [{ id: "call_0", name: "read", arguments: { path: "notes.txt" } }] },
  { text: "The notes say hello." },
  {
    toolCalls: [{
      id: "call_0",
      name: "bash",
      arguments: { command: "for i in 1 2 3 4 5 6; do echo line-$i; done" },
    }],
  },
  { text: "It printed six lines." },
];

// The rows, in the order the screen shows them: each under its own prompt.
function assertRowsInPlace(screen: string): void {
  const at = (pattern: RegExp) => {
    const match = pattern.exec(screen);
    assert.ok(match, `${pattern} on the screen:\n${screen}`);
    return match.index;
  };
  const order = [
    at(/› read the notes/),
    at(/⚙ read notes\.txt\n {2}✓ 1 +hello from the notes/),
    at(/The notes say hello\./),
    at(/› now print the lines/),
    at(/⚙ bash \$ for i in 1 2 3 4 5 6; do echo line-\$i; done\n {2}✓ line-1 {2}… \+\d+ lines/),
    at(/It printed six lines\./),
  ];
  assert.deepEqual([...order].sort((a, b) => a - b), order, `rows out of place:\n${screen}`);
  assert.equal(screen.match(/⚙ /g)?.length, 2, "one row per call");
}

Deno.test({
  name: "tmux: two turns with identical call ids keep their rows in place, also after --resume",
  ignore: !hasTmux(),
  async fn() {
    const configDir = await Deno.makeTempDir({ prefix: "amber-rows-" });
    const workspace = await Deno.makeTempDir({ prefix: "amber-rows-ws-" });
    await Deno.writeTextFile(`${workspace}/notes.txt`, "hello from the notes\n");
    const server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script(...TURNS);
    const baseUrl = `${server.url}/v1`;
    try {
      {
        await using tmux = await startAmber({ baseUrl, configDir, workspace, rows: 40 });
        await tmux.waitFor(PROMPT, "the prompt");
        await tmux.type("read the notes");
        await tmux.keys("Enter");
        await tmux.waitFor(/The notes say hello\./, "the first answer");
        await tmux.type("now print the lines");
        await tmux.keys("Enter");
        await tmux.waitFor(/Allow bash/, "the approval question");
        await tmux.type("y");
        const live = await tmux.waitFor(/It printed six lines\./, "the second answer");
        assertRowsInPlace(live);

        // Ctrl-X unfolds the last row's output, and folds it again.
        await tmux.keys("C-x");
        const expanded = await tmux.waitFor(/^ {4}line-6$/m, "the expanded output");
        assert.match(expanded, /✓ line-1 {2}\(\d/);
        await tmux.keys("C-x");
        await tmux.waitFor((s) => !/^ {4}line-6$/m.test(s), "the row folded again");

        // Ctrl-Y shows the whole output; `/` finds a line, Esc closes.
        await tmux.keys("C-y");
        await tmux.waitFor(/⚙ bash \$ for i[\s\S]*\d+ lines · \/ search/, "the viewer");
        await tmux.type("/line-4");
        await tmux.keys("Enter");
        const found = await tmux.waitFor(/match 1 of 1/, "the search");
        assert.match(found, /› line-4/);
        await tmux.keys("Escape");
        await tmux.waitFor(PROMPT, "the prompt after the viewer");
        await tmux.type("/quit");
        await tmux.keys("Enter");
        await tmux.waitFor(/amber exited 0/, "amber to leave");
      }
      const [id] = [...Deno.readDirSync(`${configDir}/sessions`)].map((e) =>
        e.name.replace(/\.jsonl$/, "")
      );
      await using resumed = await startAmber({
        baseUrl,
        configDir,
        workspace,
        rows: 40,
        args: [`--resume=${id}`],
      });
      const screen = await resumed.waitFor(/It printed six lines\./, "the resumed conversation");
      assertRowsInPlace(screen);
    } finally {
      await server.close();
      await Deno.remove(configDir, { recursive: true }).catch(() => {});
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    }
  },
});
