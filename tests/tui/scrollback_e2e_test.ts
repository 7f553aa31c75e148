// After the interactive session, the conversation stays in the terminal's scrollback: the TUI
// leaves the alternate screen, writes the transcript to the normal screen and says how to
// continue the session; `amber demo --interactive` does the same and says where its files stay.
// In a real terminal (tmux), read with capture-pane of the normal screen and its history.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import { hasTmux, startAmber, Tmux } from "./_tmux.ts";

const ignore = !hasTmux();
const PROMPT = /^›\s*$/m;
const EXITED = /amber exited 0/;

Deno.test({
  name: "tmux: after /quit the normal screen holds the conversation and the resume line",
  ignore,
  async fn() {
    await using tmp = await tempDir();
    const configDir = `${tmp.dir}/config`;
    const workspace = `${tmp.dir}/workspace`;
    await Deno.mkdir(configDir);
    await Deno.mkdir(workspace);
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script(
      { toolCalls: [{ id: "c1", name: "read", arguments: { path: "notes.txt" } }] },
      { text: "The notes say **remember the milk**." },
    );
    await Deno.writeTextFile(`${workspace}/notes.txt`, "remember the milk\n");
    await using tmux = await startAmber({ baseUrl: `${server.url}/v1`, configDir, workspace });
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("what do my notes say?");
    await tmux.keys("Enter");
    await tmux.waitFor(/remember the milk\./, "the answer");
    await tmux.waitFor(PROMPT, "the prompt back");
    await tmux.type("/quit");
    await tmux.keys("Enter");
    await tmux.waitFor(EXITED, "amber to exit");
    assert.equal(await tmux.variable("alternate_on"), "0", "back on the normal screen");
    const screen = await tmux.scrollback();
    const [id] = [...Deno.readDirSync(`${configDir}/sessions`)]
      .map((entry) => entry.name.replace(/\.jsonl$/, ""));
    // In the order the screen showed them, as plain text.
    const expected = [
      "› what do my notes say?",
      "⚙ read notes.txt",
      "The notes say remember the milk.",
      `amber: session ${id} (continue with: amber --resume ${id})`,
      "amber exited 0",
    ];
    let from = 0;
    for (const line of expected) {
      const at = screen.indexOf(line, from);
      assert.ok(at >= 0, `'${line}' after offset ${from} in:\n${screen}`);
      from = at + line.length;
    }
  },
});

Deno.test({
  name: "tmux: amber demo --interactive runs the script without a key and leaves it in scrollback",
  ignore,
  async fn() {
    await using tmp = await tempDir();
    await using tmux = await Tmux.start(
      ["demo", "--interactive"],
      {
        AMBER_CONFIG_DIR: `${tmp.dir}/config`,
        // The demo's scratch directory is made under TMPDIR: here, inside this test's.
        TMPDIR: tmp.dir,
        NO_COLOR: "1",
        TERM: "xterm-256color",
      },
      tmp.dir,
      { columns: 100, rows: 30 },
    );
    await tmux.waitFor(/amber demo: the model is scripted/, "the greeting");
    await tmux.waitFor(PROMPT, "the prompt");
    await tmux.type("hello?");
    await tmux.keys("Enter");
    await tmux.waitFor(/Send anything to go on/, "the first scripted turn");
    await tmux.waitFor(/Todos 0\/3 done/, "the todo panel");
    await tmux.waitFor(PROMPT, "the prompt back");
    await tmux.type("/quit");
    await tmux.keys("Enter");
    await tmux.waitFor(EXITED, "amber to exit");
    const screen = await tmux.scrollback();
    for (
      const line of [
        "› hello?",
        "⚙ read README.md",
        "Send anything to go on",
        "amber demo: session ",
      ]
    ) assert.ok(screen.includes(line), `'${line}' in:\n${screen}`);
    const root = /its transcript and the workspace stay in (\S+)/.exec(screen)?.[1];
    assert.ok(root?.startsWith(tmp.dir), `the demo's files stay under TMPDIR: ${root}`);
    const sessions = [...Deno.readDirSync(`${root}/config/sessions`)];
    assert.equal(sessions.length, 1, "the demo's session is kept");
    // The user's own config directory is left alone.
    assert.equal(
      await Deno.stat(`${tmp.dir}/config/sessions`).then(() => true, () => false),
      false,
    );
  },
});
