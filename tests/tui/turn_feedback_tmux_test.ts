// Feedback during long work, in a real terminal: tmux runs amber against a server that streams
// its answer slowly, and the screen is read while the answer still streams: the rule says how
// long the turn has run and the response's live tokens, the bar its live token count. And a
// SIGINT that arrives twice (the terminal's and `deno task`'s forwarding) is one press. Every
// wait polls the screen with a generous deadline; no timing assertions.

import assert from "node:assert/strict";
import { slowStream } from "../cli/_slow_stream.ts";
import { hasTmux, sessionDirs, startAmber } from "./_tmux.ts";

const ignore = !hasTmux();

// The rule's figures: the turn's seconds, the live tokens, and once measurable the rate.
const FIGURES = /Ctrl-C cancels ─+ (\d+)s · ↓(\d+) tok(?: · \d+ tok\/s)? ──/;

Deno.test({
  name:
    "tmux: while an answer streams, the rule shows the turn's time and live tokens, the bar too",
  ignore,
  async fn() {
    await using d = await sessionDirs("feedback");
    // 200 frames 100 ms apart: twenty seconds of answer, read in its first seconds.
    await using server = slowStream({ text: "word ".repeat(198), chunkSize: 5 }, 100);
    await using tmux = await startAmber({ baseUrl: server.url, ...d });
    await tmux.waitFor(/^›\s*$/m, "the prompt");
    await tmux.type("count slowly");
    await tmux.keys("Enter");
    const early = await tmux.waitFor(
      (screen) => (Number(FIGURES.exec(screen)?.[2]) || 0) > 0,
      "live tokens on the rule",
    );
    assert.ok(server.sent() < server.frames, "read while the answer streams");
    const bar = early.trimEnd().split("\n").at(-1)!;
    assert.match(bar, /↓\d+/, bar);
    const [, seconds, tokens] = FIGURES.exec(early)!;
    // Later, still streaming: the time and the tokens went up.
    const later = await tmux.waitFor((screen) => {
      const m = FIGURES.exec(screen);
      return m !== null && Number(m[1]) > Number(seconds) && Number(m[2]) > Number(tokens);
    }, "the figures to move on");
    assert.ok(server.sent() < server.frames, "still streaming");
    assert.match(later, /\d+ tok\/s/);
    await tmux.keys("C-c");
    await tmux.waitFor(/cancelled \(every committed step is kept\)/);
    const after = await tmux.capture();
    assert.doesNotMatch(after, FIGURES, "no turn, no figures on the rule");
  },
});

Deno.test({
  name: "tmux: two SIGINTs 50 ms apart at the prompt arm the quit once, they do not quit",
  ignore,
  async fn() {
    await using d = await sessionDirs("feedback");
    await using server = slowStream({ text: "unused" }, 10);
    await using tmux = await startAmber({ baseUrl: server.url, ...d });
    await tmux.waitFor(/^›\s*$/m, "the prompt");
    const shell = Number(await tmux.variable("pane_pid"));
    const found = await new Deno.Command("pgrep", { args: ["-P", String(shell)] }).output();
    const amber = Number(new TextDecoder().decode(found.stdout).trim().split("\n")[0]);
    assert.ok(amber > 0);
    Deno.kill(amber, "SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 50));
    Deno.kill(amber, "SIGINT");
    await tmux.waitFor(/Ctrl-C again to quit/);
    // Long enough for a second press to have quit: the screen would say amber exited.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.doesNotMatch(await tmux.capture(), /amber exited/);
    // A press well after the echo window is a second press: it quits (were the machine so slow
    // that the arming ran out meanwhile, that press arms again and the next one quits).
    for (let press = 0; press < 3 && !/amber exited/.test(await tmux.capture()); press++) {
      Deno.kill(amber, "SIGINT");
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    await tmux.waitFor(/amber exited 0/);
  },
});
