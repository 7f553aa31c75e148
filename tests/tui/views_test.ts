// The views the frame is composed of: wrapped lines in cells, the transcript, the status bar,
// dialogs and approvals, and the UI services of a headless host.

import assert from "node:assert/strict";
import {
  emptyStatusSnapshot,
  EventBus,
  headlessUi,
  type PluginServices,
  UiUnavailableError,
} from "@amber/core";
import { createStatusRegistry } from "@amber/registries/status";
import { Approvals } from "../../cli/tui/approvals.ts";
import { Dialogs } from "../../cli/tui/dialogs.ts";
import type { Key } from "../../cli/tui/input.ts";
import { lineWidth, plainText, sanitize, wrapSpans } from "../../cli/tui/lines.ts";
import { composeStatus, TUI_SEGMENTS } from "../../cli/tui/status_line.ts";
import { INITIAL_VIEW, reduce, type ViewState } from "../../cli/tui/reducer.ts";
import { TranscriptView } from "../../cli/tui/transcript_view.ts";

const key = (name: string, mods: Partial<Key> = {}): Key => ({
  name,
  ctrl: false,
  alt: false,
  shift: false,
  ...mods,
});

const services: PluginServices = {
  owner: "core",
  tools: { get: () => undefined, list: () => [] },
  events: new EventBus(),
  config: () => ({ plugins: {} }),
  host: {},
  workspace: { root: "/" },
};

Deno.test("wrapping counts cells: wide characters take two, nothing is split", () => {
  const lines = wrapSpans([{ text: "中文字 ab 日本語テキスト", style: 0 }], 8);
  assert.deepEqual(lines.map(plainText), ["中文字", "ab", "日本語テ", "キスト"]);
  for (const line of lines) assert.ok(lineWidth(line) <= 8);
  const code = wrapSpans([{ text: "a  b  c", style: 0 }], 3, { hard: true });
  assert.deepEqual(code.map(plainText), ["a  ", "b  ", "c"], "hard wrap keeps spaces");
  assert.equal(sanitize("ok\x1b]0;title\x07"), "ok]0;title");
});

Deno.test("the transcript shows prompts, answers, tools and notices, and only what fits", () => {
  const view = new TranscriptView();
  view.addUser("first");
  view.appendReasoning("pondering ");
  view.appendReasoning("deeply");
  view.appendText("answer one");
  const call = { id: "c1", name: "read", arguments: '{"path":"a.txt"}' };
  view.toolStart({ step: 0, call }, { verb: "reading", summary: "a.txt" });
  assert.deepEqual(view.view(40, 20, 0).map(plainText).slice(-1), ["⚙ read a.txt  reading…"]);
  view.toolEnd({ step: 0, call }, { ok: true, output: "line 1\nline 2\nline 3" }, 1500);
  const denied = { id: "c2", name: "bash", arguments: "{}" };
  view.toolEnd(
    { step: 0, call: denied },
    { ok: false, output: "", error: "the user denied 'bash'" },
    0,
    {
      verb: "running",
      summary: "$ rm -rf /",
    },
  );
  view.notice("cancelled", "warn");
  assert.deepEqual(view.view(40, 20, 0).map(plainText), [
    "› first",
    "",
    "▾ thinking",
    "pondering deeply",
    "",
    "answer one",
    "",
    "⚙ read a.txt",
    "  ✓ line 1  … +2 lines  (1.5 s)",
    "⚙ bash $ rm -rf /",
    "  ✗ the user denied 'bash'",
    "",
    "cancelled",
  ]);
  assert.deepEqual(view.view(40, 2, 0).map(plainText), ["", "cancelled"], "the last lines");
  assert.deepEqual(view.view(40, 2, 3).map(plainText), [
    "  ✓ line 1  … +2 lines  (1.5 s)",
    "⚙ bash $ rm -rf /",
  ], "scrolled back three lines");
  assert.equal(view.totalLines(40), 13);
  view.toggleReasoning();
  assert.equal(plainText(view.view(40, 20, 0)[2]), "▸ thinking · 2 words (Ctrl-O shows)");
});

Deno.test("a transcript replays a saved conversation the way it was shown live", () => {
  const view = new TranscriptView();
  view.replay([
    { role: "user", content: "greet Ada" },
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "t1", name: "greet", arguments: '{"name":"Ada"}' }],
    },
    { role: "tool", toolCallId: "t1", name: "greet", content: "Hello, Ada!" },
    { role: "assistant", content: "Done." },
  ], () => ({ verb: "greeting", summary: "greet Ada" }));
  assert.deepEqual(view.view(40, 10, 0).map(plainText), [
    "› greet Ada",
    "",
    "⚙ greet Ada",
    "  ✓ Hello, Ada!",
    "",
    "Done.",
  ]);
});

Deno.test("the transcript renders a block once per width until it changes", () => {
  const view = new TranscriptView();
  for (let i = 0; i < 500; i++) {
    view.addUser(`question ${i}`);
    view.appendText(`answer ${i}`);
  }
  const first = view.view(60, 10, 0);
  const again = view.view(60, 10, 0);
  assert.equal(first.at(-1), again.at(-1), "the same line objects: cached");
  view.appendText(" more");
  assert.equal(plainText(view.view(60, 10, 0).at(-1)!), "answer 499 more");
});

Deno.test("the bar drops the TUI's segments by drop priority and keeps model and tokens", () => {
  const status = createStatusRegistry();
  status.install("core", {
    kind: "status",
    name: "model",
    priority: 100,
    dropPriority: 90,
    render: (s) => ({ text: s.model, tone: "accent" }),
  }, services);
  status.install("core", {
    kind: "status",
    name: "tokens",
    priority: 300,
    dropPriority: 40,
    render: (s) => ({ text: `↑${s.promptTokens} ↓${s.completionTokens}`, tone: "dim" }),
  }, services);
  for (const segment of TUI_SEGMENTS) status.install("core", segment, services);
  const snapshot = {
    ...emptyStatusSnapshot(),
    model: "gpt-5",
    reasoningEffort: "high",
    latencyMs: 840,
    tps: 61.4,
    runningJobs: 2,
    promptTokens: 10,
    completionTokens: 5,
    scrollMode: true,
  };
  const wide = plainText(composeStatus(status, 200, snapshot));
  assert.equal(
    wide,
    "SCROLL │ gpt-5 │ effort high │ build │ ↑10 ↓5 │ 840 ms │ 61 tok/s │ 2 jobs",
  );
  const narrow = plainText(composeStatus(status, 30, snapshot));
  assert.equal(narrow, "SCROLL │ gpt-5 │ ↑10 ↓5");
  assert.equal(plainText(composeStatus(status, 14, snapshot)), "SCROLL │ gpt-5");
});

Deno.test("the meter measures latency to the first delta and tokens per second", () => {
  let state: ViewState = INITIAL_VIEW;
  const at = (event: Parameters<typeof reduce>[1], now: number) => {
    state = reduce(state, event, now).state;
  };
  at({ type: "stepStart", step: 0 }, 0);
  at({ type: "text", delta: "a" }, 300);
  at({ type: "text", delta: "b" }, 900);
  at({ type: "stepEnd", step: 0, usage: { promptTokens: 50, completionTokens: 100 } }, 2300);
  const meter = state.meter;
  assert.deepEqual([meter.latencyMs, meter.tps, meter.completionTokens], [300, 50, 100]);
  at({ type: "stepStart", step: 1 }, 3000);
  at({ type: "stepEnd", step: 1 }, 3100);
  // Issue 15: the last response's figures are never shown as the current one's.
  assert.deepEqual(
    [state.meter.tps, state.meter.completionTokens, state.meter.latencyMs],
    [0, 0, 0],
    "a response without usage or output shows none of the last one's figures",
  );
});

Deno.test("dialogs: text, secret, choice, confirm; Esc dismisses; a signal withdraws", async () => {
  const dialogs = new Dialogs();
  const name = dialogs.askText("Name?", { initial: "A" });
  dialogs.key(key("text", { text: "da" }));
  assert.match(plainText(dialogs.layout(40)!.lines[1]), /› Ada/);
  dialogs.key(key("enter"));
  assert.equal(await name, "Ada");

  const secret = dialogs.askSecret("Key?");
  dialogs.key(key("paste", { text: "sk-1\n23" }));
  assert.equal(plainText(dialogs.layout(40)!.lines[1]), "› ••••••");
  dialogs.key(key("enter"));
  assert.equal(await secret, "sk-123", "a pasted secret loses its line breaks");

  const dismissed = dialogs.choose("Pick", ["a", "b"]);
  dialogs.key(key("escape"));
  assert.equal(await dismissed, undefined);

  const confirm = dialogs.confirm("Sure?");
  dialogs.key(key("text", { text: "n" }));
  assert.equal(await confirm, false);

  const controller = new AbortController();
  const withdrawn = dialogs.askText("Slow?", { signal: controller.signal });
  assert.equal(dialogs.active, true);
  controller.abort();
  assert.equal(await withdrawn, undefined);
  assert.equal(dialogs.active, false);

  // Questions queue: the second shows once the first is answered.
  const one = dialogs.confirm("One?");
  const two = dialogs.confirm("Two?");
  assert.match(plainText(dialogs.layout(40)!.lines[0]), /One\?/);
  dialogs.key(key("text", { text: "y" }));
  assert.match(plainText(dialogs.layout(40)!.lines[0]), /Two\?/);
  dialogs.key(key("enter"));
  assert.deepEqual([await one, await two], [true, true]);
});

Deno.test("approvals go through the dialog; deny and dismissal deny; gates say so", async () => {
  const dialogs = new Dialogs();
  const approvals = new Approvals(dialogs);
  const request = (name: string, correlationId?: string) => ({
    call: { id: "c", name, arguments: "{}" },
    args: {},
    summary: `${name} it`,
    ...(correlationId ? { correlationId } : {}),
  });
  const denied = approvals.ask(request("bash"));
  assert.match(plainText(dialogs.layout(60)!.lines[0]), /Allow bash: bash it/);
  dialogs.key(key("text", { text: "n" }));
  assert.equal(await denied, "deny");
  const dismissed = approvals.ask(request("bash"));
  dialogs.key(key("c", { ctrl: true }));
  assert.equal(await dismissed, "deny");
  const always = approvals.ask(request("bash"));
  dialogs.key(key("down"));
  dialogs.key(key("enter"));
  assert.equal(await always, "always");
  const gated = approvals.ask(request("bash", "gate-1"));
  assert.equal(dialogs.active, true, "a gate's confirmation is put to the user");
  assert.match(plainText(dialogs.layout(80)!.lines[0]), /a tool gate asks to confirm/);
  dialogs.key(key("text", { text: "y" }));
  assert.equal(await gated, "once");
  // A gate asks every time, so "always" is not offered: `a` picks nothing, ↓ Enter denies.
  const reasoned = approvals.ask({ ...request("write", "gate-2"), reason: "it is Friday" });
  const lines = dialogs.layout(80)!.lines.map(plainText).join("\n");
  assert.match(lines, /Allow write: write it \(it is Friday\)/);
  assert.doesNotMatch(lines, /always/);
  dialogs.key(key("text", { text: "a" }));
  assert.equal(dialogs.active, true);
  dialogs.key(key("down"));
  dialogs.key(key("enter"));
  assert.equal(await reasoned, "deny");
  // Remembering "always" is the session's (tests/cli/session_test.ts).
});

Deno.test("a headless host's UI services refuse questions cleanly", async () => {
  const notes: string[] = [];
  const ui = headlessUi((message, tone) => notes.push(`${tone}: ${message}`));
  assert.equal(ui.interactive, false);
  for (
    const ask of [
      () => ui.askText("Name?"),
      () => ui.askSecret("Key?"),
      () => ui.choose("Pick", ["a"]),
      () => ui.confirm("Sure?"),
    ]
  ) {
    await assert.rejects(ask(), (error: unknown) => {
      assert.ok(error instanceof UiUnavailableError);
      assert.match((error as Error).message, /headless/);
      return true;
    });
  }
  ui.notify("indexed", "good");
  assert.deepEqual(notes, ["good: indexed"]);
  headlessUi(() => {
    throw new Error("sink broke");
  }).notify("still fine");
});

Deno.test("a headless host hands plugins the refusing UI services", async () => {
  const { openHost } = await import("../../cli/host.ts");
  const configDir = await Deno.makeTempDir({ prefix: "amber-ui-" });
  const host = await openHost({ configDir, workspace: configDir, thirdParty: false, plugins: [] });
  try {
    assert.equal(host.services.ui?.interactive, false);
    await assert.rejects(host.services.ui!.askText("Name?"), UiUnavailableError);
  } finally {
    await host.close();
    await Deno.remove(configDir, { recursive: true });
  }
});
