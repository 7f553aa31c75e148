// The TUI in-process against the fake provider: the real host, plugins and kernel, keys typed
// into the app, the screen read from a virtual terminal that applies every byte it wrote.

import assert from "node:assert/strict";
import { any, type Plugin } from "@amber/core";
import { SessionFile } from "@amber/core/kernel";
import { startTui } from "./_harness.ts";

const ESC = "\x1b";
const CTRL_C = "\x03";

async function sessionIds(configDir: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const entry of Deno.readDir(`${configDir}/sessions`)) {
    ids.push(entry.name.replace(/\.jsonl$/, ""));
  }
  return ids.sort();
}

Deno.test("a prompt streams its answer, rendered, and the bar shows model and tokens", async () => {
  await using t = await startTui({
    turns: [{
      reasoning: "The user says hi.",
      text: "Hi! Here is **bold** and:\n\n- one\n- two\n\n```sh\necho ok\n```\n",
      usage: { promptTokens: 1200, completionTokens: 34 },
      chunkSize: 3,
    }],
  });
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("hello there\r");
  // The closing fence comes a chunk after the code line: wait for the block, not only its text.
  const screen = await t.waitFor(/echo ok\n└/);
  assert.match(screen, /› hello there/);
  assert.match(screen, /▾ thinking\nThe user says hi\./);
  assert.match(screen, /Hi! Here is bold and:/);
  assert.match(screen, /• one\n• two/);
  assert.match(screen, /┌ sh\n│ echo ok\n└/);
  const bar = (await t.waitFor(/↑1\.2k ↓34/)).split("\n").at(-1)!;
  assert.match(bar, /^fake-model │ .*↑1\.2k ↓34/);
  // What the terminal shows is exactly what was composed: the diff renderer lost nothing.
  for (let row = 0; row < 24; row++) {
    assert.equal(t.terminal.vt.rowText(row), t.tui.app.screen.rowText(row), `row ${row}`);
  }
  // Reasoning collapses to one line with Ctrl-O.
  t.terminal.type("\x0f");
  await t.waitFor(/▸ thinking · 4 words/);
});

Deno.test("a tool that needs approval asks; once, always for the session, and deny", async () => {
  const bash = (command: string) => ({ toolCalls: [{ name: "bash", arguments: { command } }] });
  await using t = await startTui({
    turns: [
      bash("echo first-run"),
      { text: "ran it" },
      bash("echo second-run"),
      bash("echo third-run"),
      { text: "ran both" },
      bash("echo denied-run"),
      { text: "ok, not run" },
    ],
  });
  await t.waitFor(/^›$/m);
  t.terminal.type("run it\r");
  await t.waitFor(/Allow bash: \$ echo first-run/);
  t.terminal.type("y");
  await t.waitFor(/✓ first-run/);
  await t.waitFor(/ran it/);
  await t.idle();

  t.terminal.type("twice\r");
  await t.waitFor(/Allow bash: \$ echo second-run/);
  t.terminal.type("a");
  await t.waitFor(/ran both/);
  await t.idle();
  const screen = t.terminal.text();
  assert.match(screen, /✓ second-run/);
  assert.match(screen, /✓ third-run/, "'always' was remembered: no second prompt");
  assert.doesNotMatch(screen, /Allow bash: \$ echo third-run/);

  // A new session forgets "always".
  t.terminal.type("/clear\r");
  await t.waitFor((s) => !s.includes("ran both"), "the cleared screen");
  t.terminal.type("again\r");
  await t.waitFor(/Allow bash: \$ echo denied-run/);
  t.terminal.type("n");
  await t.waitFor(/ok, not run/);
  assert.match(t.terminal.text(), /✗ the user denied 'bash'/);
});

Deno.test("Ctrl-C cancels the running turn, keeps the committed steps; a second Ctrl-C exits", async () => {
  await using t = await startTui({
    turns: [
      { toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] },
      { text: "never seen", fault: { kind: "slowFirstByte", delayMs: 30_000 } },
    ],
  });
  await t.waitFor(/^›$/m);
  t.terminal.type("greet Ada, then think long\r");
  await t.waitFor(/✓ Hello, Ada!/);
  await t.waitFor(/working · Ctrl-C cancels/);
  t.terminal.type(CTRL_C);
  await t.waitFor(/cancelled \(every committed step is kept\)/);
  const [id] = await sessionIds(t.configDir);
  const session = await SessionFile.load(t.configDir, id);
  assert.equal(session.steps.length, 2);
  assert.deepEqual(session.steps[0].messages.map((m) => m.role), ["user", "assistant", "tool"]);
  assert.equal(session.steps[0].messages[2].content, "Hello, Ada!");
  assert.equal(session.steps[1].end, "cancelled");
  await t.waitFor(/Ctrl-C again to quit/);
  t.terminal.type(CTRL_C);
  assert.equal(await t.exit, 0);
});

Deno.test("/ opens the drawer from the live tree; plugin commands follow the plugin", async () => {
  await using t = await startTui({ rows: 30 });
  await t.waitFor(/^›$/m);
  t.terminal.type("/");
  await t.waitFor(/\/hello greet +Greet someone by name/);
  t.terminal.type(`${ESC}`);
  await t.waitFor((s) => !s.includes("/hello greet"), "the drawer to close");
  t.terminal.type("\x15/set plugin off hello\r");
  await t.waitFor(/hello: disabled/);
  t.terminal.type("/");
  await t.waitFor(/\/help +Show the commands/);
  assert.doesNotMatch(t.terminal.text(), /\/hello greet/);
  t.terminal.type("set plugin on hello\r");
  await t.waitFor(/hello: active/);
  t.terminal.type("/hel");
  await t.waitFor(/\/hello greet/);
  // Tab completes the selection; Enter runs it with the argument typed after it.
  t.terminal.type("\t");
  await t.waitFor(/^› \/hello greet$/m);
  t.terminal.type("amber\r");
  await t.waitFor(/Hello, amber!/);
});

Deno.test("a panel takes the screen, sees keys only while focused, and Esc closes it", async () => {
  const seen: string[] = [];
  const panelPlugin: Plugin = {
    id: "keys",
    version: "1.0.0",
    name: "Keys",
    bound: { panels: any() },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      kind: "panel",
      name: "keys",
      id: "keys",
      title: "Key log",
      lines: () => [`seen: ${seen.join(",")}`],
      onKey: (key) => {
        seen.push(key);
        return key === "r";
      },
    }],
  };
  await using t = await startTui({ plugins: [panelPlugin] });
  await t.waitFor(/^›$/m);
  t.terminal.type("r");
  await t.waitFor(/› r$/m);
  t.terminal.type("\x15/panel keys\r");
  await t.waitFor(/Key log/);
  t.terminal.type("r");
  await t.waitFor(/seen: r$/m);
  t.terminal.type(`${ESC}[A`);
  await t.waitFor(/seen: r,up/);
  t.terminal.type(ESC);
  await t.waitFor((s) => !s.includes("Key log"), "the panel to close");
  t.terminal.type("x");
  await t.waitFor(/› x$/m);
  assert.deepEqual(seen, ["r", "up"], "no key reached the panel while it was closed");

  t.terminal.type("\x15/plugins\r");
  await t.waitFor(/Plugins[\s\S]*provider\n +openai/);
  assert.doesNotMatch(t.terminal.text(), /hello +Hello/, "below the fold");
  t.terminal.type(`${ESC}[F`);
  await t.waitFor(/hello +Hello +0\.1\.0 +active/);
  t.terminal.type(ESC);
  await t.waitFor((s) => !s.includes("Esc close ·"), "the console to close");
});

Deno.test("a resize recomposes at once; the bar drops segments when narrow", async () => {
  await using t = await startTui({
    model: "a-rather-long-model-name",
    turns: [{ text: "ok", usage: { promptTokens: 5000, completionTokens: 700 } }],
  });
  await t.waitFor(/^›$/m);
  t.terminal.type("hi\r");
  const wide = (await t.waitFor(/↑5\.0k ↓700/)).split("\n").at(-1)!;
  assert.match(wide, /a-rather-long-model-name │ build │ ↑5\.0k ↓700/);
  t.terminal.resize(40, 24);
  const narrow = t.terminal.text().split("\n").at(-1)!;
  assert.match(narrow, /^a-rather-long-model-name │ ↑5\.0k/, "recomposed without waiting");
  assert.doesNotMatch(narrow, /build/, "the lowest drop priority went first");
  t.terminal.resize(20, 24);
  assert.equal(t.terminal.text().split("\n").at(-1), "a-rather-long-model…");
});

Deno.test("plugins ask through the UI services and get the answer", async () => {
  let ui: import("@amber/core").UiService | undefined;
  const asking: Plugin = {
    id: "asker",
    version: "1.0.0",
    name: "Asker",
    bound: { commands: any() },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      kind: "command",
      name: "ask",
      root: "ask",
      help: "Ask something",
      subtree: {},
      handlers: {
        "": async () => {
          const name = await ui!.askText("Your name?");
          const secret = await ui!.askSecret("Token?");
          const color = await ui!.choose("Colour?", ["red", "blue"]);
          const sure = await ui!.confirm("Sure?");
          ui!.notify("noted", "good");
          return `${name} ${secret?.length} ${color} ${sure}`;
        },
      },
    }, {
      kind: "tool",
      name: "grab",
      tools: (services) => {
        ui = services.host.ui;
        return [];
      },
    }],
  };
  await using t = await startTui({
    plugins: [{ ...asking, bound: { commands: any(), tools: any() } }],
  });
  await t.waitFor(/^›$/m);
  assert.equal(ui?.interactive, true);
  t.terminal.type("/ask\r");
  await t.waitFor(/\? Your name\?/);
  t.terminal.type("Ada\r");
  await t.waitFor(/\? Token\?/);
  t.terminal.type("hunter2");
  await t.waitFor(/› •••••••/);
  assert.doesNotMatch(t.terminal.text(), /hunter2/);
  t.terminal.type("\r");
  await t.waitFor(/\? Colour\?/);
  t.terminal.type(`${ESC}[B\r`);
  await t.waitFor(/\? Sure\?/);
  t.terminal.type("y");
  await t.waitFor(/Ada 7 blue true/);
  assert.match(t.terminal.text(), /noted/);
  const history = await Deno.readTextFile(`${t.configDir}/history.jsonl`);
  assert.equal(history, '"/ask"\n', "answers, secrets above all, stay out of the history");
});

Deno.test("/sessions, /resume and /model work on the live session", async () => {
  await using t = await startTui({ turns: [{ text: "first answer" }, { text: "second answer" }] });
  await t.waitFor(/^›$/m);
  t.terminal.type("first question\r");
  await t.waitFor(/first answer/);
  await t.idle();
  const [id] = await sessionIds(t.configDir);
  t.terminal.type("/clear\r");
  await t.waitFor((s) => !s.includes("first answer"), "a cleared screen");
  t.terminal.type("/sessions\r");
  await t.waitFor(new RegExp(`${id} +1 steps +fake-model +first question`));
  t.terminal.type(`/resume ${id}\r`);
  await t.waitFor(/resumed session/);
  assert.match(t.terminal.text(), /› first question\n\nfirst answer/);
  t.terminal.type("/model other-model\r");
  await t.waitFor(/provider openai, model other-model/);
  t.terminal.type("and again\r");
  await t.waitFor(/second answer/);
  await t.idle();
  assert.equal(
    t.server.chats.at(-1)!.body && (t.server.chats.at(-1)!.body as { model: string }).model,
    "other-model",
  );
  const resumed = await SessionFile.load(t.configDir, id);
  assert.equal(resumed.steps.length, 2, "the second turn continued the resumed session");
  assert.equal(await sessionIds(t.configDir).then((ids) => ids.length), 1);
});

Deno.test("a long answer scrolls by the terminal's scrolling; the screen stays exact", async () => {
  const words = Array.from({ length: 400 }, (_, i) => (i % 25 === 24 ? `w${i}\n` : `w${i}`));
  await using t = await startTui({ rows: 12, turns: [{ text: words.join(" "), chunkSize: 5 }] });
  await t.waitFor(/^›$/m);
  t.terminal.type("go\r");
  await t.waitFor(/w399/);
  assert.ok(t.terminal.vt.scrolled > 0, "the terminal was told to scroll");
  for (let row = 0; row < 12; row++) {
    assert.equal(t.terminal.vt.rowText(row), t.tui.app.screen.rowText(row), `row ${row}`);
  }
});

Deno.test("without a key the session says what to set, and /provider switches to one that works", async () => {
  await using t = await startTui({ env: () => undefined, turns: [{ text: "local answer" }] });
  await t.waitFor(/set OPENAI_API_KEY to use provider 'openai'/);
  t.terminal.type("hello\r");
  await t.waitFor(/› hello\n\nset OPENAI_API_KEY/);
  assert.equal(t.server.chats.length, 0, "nothing was sent");
  t.terminal.type(`/provider ollama\r`);
  await t.waitFor(/provider ollama, model /);
  assert.equal(t.tui.session.problem, undefined);
});

Deno.test("/quit during a turn cancels it, lets it commit, and leaves", async () => {
  await using t = await startTui({
    turns: [{ text: "never", fault: { kind: "slowFirstByte", delayMs: 30_000 } }],
  });
  await t.waitFor(/^›$/m);
  t.terminal.type("think\r");
  await t.waitFor(/working · Ctrl-C cancels/);
  t.terminal.type("/quit\r");
  assert.equal(await t.exit, 0);
  const [id] = await sessionIds(t.configDir);
  const session = await SessionFile.load(t.configDir, id);
  assert.equal(session.steps.at(-1)?.end, "cancelled");
});
