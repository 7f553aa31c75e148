// Long sessions in the interactive session: the reducer turns requests, usage and compaction
// events into the bar's figures (context fill, cache share, where the prefix broke) and the
// transcript's notices; the bar's segments say them and the dollars; `/compact` runs against
// the fake provider in a real terminal (tmux), and `/clear` leaves no figure of the conversation
// it ended on the bar.

import assert from "node:assert/strict";
import { emptyStatusSnapshot, type StatusSnapshot } from "@amber/core";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import type { AgentSession } from "../../cli/session/mod.ts";
import { type AppControls, SessionCommands } from "../../cli/tui/command_adapter.ts";
import {
  forgetConversation,
  INITIAL_VIEW,
  reduce,
  type TranscriptChange,
  type ViewState,
} from "../../cli/tui/reducer.ts";
import { TUI_SEGMENTS } from "../../cli/tui/status_line.ts";
import { TranscriptView } from "../../cli/tui/transcript_view.ts";
import { hasTmux, startAmber } from "./_tmux.ts";

function render(name: string, snapshot: Partial<StatusSnapshot>): { text: string; tone: string } {
  const segment = TUI_SEGMENTS.find((s) => s.name === name);
  assert.ok(segment, `segment ${name}`);
  return segment.render({ ...emptyStatusSnapshot(), ...snapshot });
}

Deno.test("the bar's context, cache and cost segments", () => {
  assert.deepEqual(render("context", { contextTokens: 620, contextWindow: 1000 }), {
    text: "ctx 62%",
    tone: "dim",
  });
  assert.equal(render("context", { contextTokens: 850, contextWindow: 1000 }).tone, "warn");
  assert.equal(render("context", { contextTokens: 990, contextWindow: 1000 }).tone, "crit");
  // No window known, or no request yet: nothing to say.
  assert.equal(render("context", { contextTokens: 620 }).text, "");
  assert.equal(render("context", { contextWindow: 1000 }).text, "");

  assert.deepEqual(render("cache", { cachedShare: 0.914 }), { text: "cache 91%", tone: "dim" });
  assert.deepEqual(render("cache", { cachedShare: 0.05, cacheBreak: "tools" }), {
    text: "cache 5% (tools changed)",
    tone: "warn",
  });
  assert.equal(render("cache", {}).text, "");

  assert.equal(render("cost", { turnCost: 0.012, sessionCost: 0.34 }).text, "$0.012 / $0.340");
  assert.equal(render("cost", { turnCost: 0.012 }).text, "", "no session total, no segment");
  assert.equal(render("cost", {}).text, "");
});

function run(events: Parameters<typeof reduce>[1][], from: ViewState = INITIAL_VIEW) {
  let state = from;
  const changes: TranscriptChange[] = [];
  for (const event of events) {
    const next = reduce(state, event, 0);
    state = next.state;
    changes.push(...next.changes);
  }
  return { state, changes };
}

Deno.test("a request sets the context figure; its usage the cache share; the next request clears it", () => {
  const first = run([
    { type: "request", step: 0, tokens: 2900, contextWindow: 4000, firstChanged: "core_system" },
  ]);
  // Nothing came before the first request the view saw: no block changed from it.
  assert.deepEqual(first.state.prompt, { tokens: 2900, window: 4000 });
  const { state } = run([
    { type: "request", step: 1, tokens: 3000, contextWindow: 4000, firstChanged: "tools" },
    { type: "usage", promptTokens: 2000, completionTokens: 5, cachedTokens: 1500 },
  ], first.state);
  assert.deepEqual(state.prompt, {
    tokens: 3000,
    window: 4000,
    firstChanged: "tools",
    cachedShare: 0.75,
  });
  // The next request's figures replace all of them: the cache share was the last prompt's.
  const next = run([{ type: "request", step: 2, tokens: 3100, contextWindow: 4000 }], state);
  assert.deepEqual(next.state.prompt, { tokens: 3100, window: 4000 });
  // A usage without cache counts leaves the share unknown.
  const plain = run([{ type: "usage", promptTokens: 10, completionTokens: 1 }], next.state);
  assert.equal(plain.state.prompt?.cachedShare, undefined);
});

Deno.test("a compaction's notices, and the context figure of the compacted conversation after it", () => {
  const before = run([
    { type: "request", step: 0, tokens: 3500, contextWindow: 4000 },
    { type: "usage", promptTokens: 3500, completionTokens: 5, cachedTokens: 3000 },
  ]).state;
  const done = run([
    { type: "compactionStarted", reason: "manual", tokens: 3500, budget: 4000, threshold: 3400 },
    {
      type: "compactionFinished",
      reason: "manual",
      success: true,
      tokensBefore: 3500,
      tokensAfter: 1200,
      strategy: "default",
    },
  ], before);
  assert.deepEqual(done.changes, [
    {
      kind: "notice",
      text: "compacting the conversation (3.5k tokens of a 4.0k-token window)",
      tone: "dim",
    },
    {
      kind: "notice",
      text: "compacted the conversation: 3.5k → 1.2k tokens (default)",
      tone: "good",
    },
  ]);
  assert.deepEqual(done.state.prompt, { tokens: 1200, window: 4000 });

  const vetoed = run([{
    type: "compactionFinished",
    reason: "auto",
    success: false,
    tokensBefore: 3500,
    tokensAfter: 3500,
    message: "vetoed by plugin 'keep'",
  }], before);
  assert.deepEqual(vetoed.changes, [{
    kind: "notice",
    text: "the conversation was not compacted: vetoed by plugin 'keep'",
    tone: "warn",
  }]);
  assert.equal(vetoed.state.prompt, before.prompt);

  // A resumed session compacted before any request: the window comes from the compaction.
  const resumed = run([
    { type: "compactionStarted", reason: "manual", tokens: 900, budget: 4000, threshold: 3400 },
  ]);
  assert.deepEqual(resumed.state.prompt, { tokens: 900, window: 4000 });
});

Deno.test("after /clear the view keeps no figure of the conversation it showed", () => {
  const { state } = run([
    { type: "stepStart", step: 0 },
    { type: "request", step: 0, tokens: 3000, contextWindow: 4000 },
    { type: "text", delta: "hi" },
    { type: "stepEnd", step: 0, usage: { promptTokens: 3000, completionTokens: 2 } },
  ]);
  assert.equal(state.meter.promptTokens, 3000);
  const cleared = forgetConversation(state);
  assert.equal(cleared.prompt, undefined);
  assert.deepEqual(cleared.meter, INITIAL_VIEW.meter);
});

Deno.test("/compact: refused while a turn runs, said when there is no conversation, else started", () => {
  const started: string[] = [];
  let busy = false;
  const app: AppControls = {
    transcript: new TranscriptView(),
    busy: () => busy,
    showPanel: () => {},
    startTurn: () => {},
    startCompaction: (instructions) => started.push(instructions),
    forget: () => {},
    scrollHome: () => {},
    settingsChanged: () => {},
    label: () => ({ verb: "", summary: "" }),
    quit: () => {},
    redraw: () => {},
  };
  const messages: { role: string; content: string }[] = [];
  // The commands read only these of the session.
  const session = { problem: undefined, messages } as unknown as AgentSession;
  const commands = new SessionCommands(session, app);
  assert.equal(commands.compact(""), "there is no conversation to compact yet");
  messages.push({ role: "user", content: "hi" });
  assert.equal(commands.compact("the file names"), "");
  assert.deepEqual(started, ["the file names"]);
  busy = true;
  assert.throws(() => commands.compact(""), /a turn is running/);
});

Deno.test({
  name: "tmux: /compact in the interactive session, its notices and the bar's cost and context",
  ignore: !hasTmux(),
  async fn() {
    const configDir = await Deno.makeTempDir({ prefix: "amber-compact-e2e-" });
    const workspace = await Deno.makeTempDir({ prefix: "amber-compact-e2e-ws-" });
    // A small window with prices; compacting is left to the user.
    await Deno.writeTextFile(
      `${configDir}/config.yaml`,
      JSON.stringify({
        models: { "fake-model": { contextWindow: 4000, input: 2, output: 10 } },
        compaction: { keepTurns: 1, auto: false },
      }),
    );
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script(
      {
        text: `First answer. ${"Many words about src/a.ts. ".repeat(120)}`,
        usage: { promptTokens: 1000, completionTokens: 100 },
      },
      { text: "Second answer.", usage: { promptTokens: 2000, completionTokens: 10 } },
      {
        text: "SUMMARY: src/a.ts was discussed.",
        usage: { promptTokens: 400, completionTokens: 40 },
      },
    );
    try {
      await using tmux = await startAmber({
        baseUrl: `${server.url}/v1`,
        configDir,
        workspace,
        columns: 120,
      });
      await tmux.waitFor(/^›/m, "the prompt");
      // The drawer offers it, with what it does.
      await tmux.type("/comp");
      await tmux.waitFor(/compact\s+Compact the conversation now/, "/compact in the drawer");
      await tmux.type("act");
      await tmux.keys("Enter");
      await tmux.waitFor(/there is no conversation to compact yet/, "nothing to compact");

      // The turn's spinner is gone once it ended.
      const idle = (screen: string) => !/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/.test(screen);
      await tmux.type("first question");
      await tmux.keys("Enter");
      // Its long text scrolls its start away: its cost on the bar says it came.
      await tmux.waitFor((s) => /\$0\.003 \/ \$0\.003/.test(s) && idle(s), "the first answer");
      await tmux.type("second question");
      await tmux.keys("Enter");
      await tmux.waitFor((s) => /Second answer\./.test(s) && idle(s), "the second answer");
      // (1000 × 2 + 100 × 10) / 1e6 = $0.003, then (2000 × 2 + 10 × 10) / 1e6 = $0.0041.
      const bar = await tmux.waitFor(
        (screen) => /\$0\.004 \/ \$0\.007/.test(screen.trimEnd().split("\n").at(-1) ?? ""),
        "the turn's and the session's cost on the bar",
      );
      const before = Number(/ctx (\d+)%/.exec(bar.trimEnd().split("\n").at(-1)!)?.[1]);
      assert.ok(before > 50, bar);

      await tmux.type("/compact the file names");
      await tmux.keys("Enter");
      const done = await tmux.waitFor(
        /compacted the conversation: [\d.]+k → [\d.]+k tokens \(default\)/,
        "the compaction's notice",
      );
      assert.match(done, /compacting the conversation \([\d.]+k tokens of a 4\.0k-token window\)/);
      const after = await tmux.waitFor(
        (screen) => /\$0\.004 \/ \$0\.008/.test(screen.trimEnd().split("\n").at(-1) ?? ""),
        "the summary's cost on the bar",
      );
      const fill = Number(/ctx (\d+)%/.exec(after.trimEnd().split("\n").at(-1)!)?.[1]);
      assert.ok(fill < before, `ctx ${fill}% after, ${before}% before`);
      assert.match(JSON.stringify(server.chats[2].body), /the file names/);

      // A new conversation: nothing of the last one's figures stays on the bar.
      await tmux.type("/clear");
      await tmux.keys("Enter");
      const cleared = await tmux.waitFor(
        (screen) => !/ctx \d+%|\$0\.0/.test(screen.trimEnd().split("\n").at(-1) ?? ""),
        "the bar without the old figures",
      );
      assert.match(cleared.trimEnd().split("\n").at(-1)!, /fake-model/);
    } finally {
      await Deno.remove(configDir, { recursive: true });
      await Deno.remove(workspace, { recursive: true });
    }
  },
});
