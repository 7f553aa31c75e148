// `amber` in a real terminal (tmux) against the fake provider: the model writes a plan with
// `todowrite`, then runs a slow `bash`. While the command runs, the todo panel shows the plan
// over the input and the bash row shows the command's output growing; Ctrl-T hides the panel
// and shows it again. Every wait polls the screen with a generous deadline (no timing
// assertions); the command prints far slower than the screen is read, so "growing" is seen.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { hasTmux, startAmber } from "./_tmux.ts";

const PROMPT = /^›\s*$/m;

Deno.test({
  name: "tmux: the todo panel shows the plan while bash's output streams into its row",
  ignore: !hasTmux(),
  async fn() {
    const configDir = await Deno.makeTempDir({ prefix: "amber-todo-e2e-" });
    const workspace = await Deno.makeTempDir({ prefix: "amber-todo-e2e-ws-" });
    const server = await FakeProvider.start({ encoders: [openaiEncoder] });
    // The command waits for a file the test writes, so it is still running while the screen is
    // read, however slow the machine.
    const command = "for i in 1 2 3; do echo tick-$i; sleep 0.2; done; " +
      "while [ ! -e go ]; do sleep 0.1; done; echo tick-last";
    server.script(
      {
        toolCalls: [{
          name: "todowrite",
          arguments: {
            todos: [
              { content: "Read the notes", status: "completed" },
              { content: "Run the slow check", status: "in_progress" },
              { content: "Report back", status: "pending" },
            ],
          },
        }],
      },
      { toolCalls: [{ name: "bash", arguments: { command } }] },
      { text: "All checked." },
    );
    await using tmux = await startAmber({
      baseUrl: `${server.url}/v1`,
      configDir,
      workspace,
      rows: 30,
    });
    try {
      await tmux.waitFor(PROMPT, "the prompt");
      assert.doesNotMatch(await tmux.capture(), /Todos/, "no panel before there is a plan");
      await tmux.type("check it slowly");
      await tmux.keys("Enter");
      await tmux.waitFor(/Allow bash/, "the approval prompt for bash");
      const asked = await tmux.capture();
      assert.match(asked, /Todos 1\/3 done/, "the panel opened by itself with the plan");
      await tmux.type("y");
      const early = await tmux.waitFor(/tick-1/, "the first line of output while it runs");
      assert.match(early, /─ Todos 1\/3 done ─+ Ctrl-T hides ─/);
      assert.match(
        early,
        /\[x\] Read the notes\n\s*\[~\] Run the slow check\n\s*\[ \] Report back/,
      );
      assert.doesNotMatch(early, /tick-last/);
      const later = await tmux.waitFor(/tick-3/, "more output while it still runs");
      assert.doesNotMatch(later, /tick-last|All checked/, "the command is still running");
      // The panel sits under the transcript, over the rule and the input line.
      const rows = later.split("\n");
      const header = rows.findIndex((row) => /Todos 1\/3 done/.test(row));
      const input = rows.findLastIndex((row) => /^›/.test(row));
      assert.ok(header > 0 && input > header + 3, later);
      assert.ok(rows.findIndex((row) => /tick-3/.test(row)) < header, later);

      await tmux.keys("C-t");
      const hidden = await tmux.waitFor((s) => !/Todos 1\/3/.test(s), "Ctrl-T hides the panel");
      assert.match(hidden, /tick-3/, "the row keeps its output");
      await tmux.keys("C-t");
      await tmux.waitFor(/Todos 1\/3 done/, "Ctrl-T shows it again");

      await Deno.writeTextFile(`${workspace}/go`, "");
      const done = await tmux.waitFor(/All checked\./, "the answer after the command");
      assert.match(done, /Todos 1\/3 done/, "the panel stays open after the turn");
    } finally {
      await server.close();
      await Deno.remove(configDir, { recursive: true }).catch(() => {});
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    }
  },
});
