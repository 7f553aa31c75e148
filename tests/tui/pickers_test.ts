// The pickers and completion of the interactive session, in-process on the fake provider:
// `/model` lists the provider's models and switches to the one picked, `/provider` the presets,
// `/resume` the saved sessions; Tab completes their arguments; `@path` completes a workspace file
// and the file reaches the model; the `/plugins` console switches with Space and names a
// plugin's contributions and dependents.

import assert from "node:assert/strict";
import { listSessions } from "@amber/core/kernel";
import { baseAndApp } from "./_console_plugins.ts";
import { startTui } from "./_harness.ts";

const DOWN = "\x1b[B";
const UP = "\x1b[A";

function lastModel(chats: readonly { body: unknown }[]): string | undefined {
  return (chats.at(-1)?.body as { model?: string } | undefined)?.model;
}

Deno.test("/model opens a picker of the provider's models; typing narrows it, Enter switches", async () => {
  await using t = await startTui({ columns: 100, rows: 30, turns: [{ text: "answered" }] });
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("/model\r");
  const screen = await t.waitFor(/fake-small/, "the provider's listing");
  assert.match(screen, /Models of openai/);
  assert.match(screen, /model +context +\$\/M in +\$\/M out/);
  assert.match(screen, /^ *› fake-model \(in use\) +- +- +-$/m, "the model in use, selected");
  assert.match(screen, /^ +fake-large +- +- +-$/m);
  assert.match(screen, /type to filter · ↑↓ select · Enter pick · Esc close/);
  t.terminal.type("large");
  await t.waitFor((s) => /Filter: large/.test(s) && !/fake-small/.test(s), "the list narrowed");
  t.terminal.type("\r");
  await t.waitFor(/provider openai, model fake-large/, "the switch, said in the transcript");
  t.terminal.type("hi\r");
  await t.waitFor(/answered/);
  await t.idle();
  assert.equal(lastModel(t.server.chats), "fake-large");
});

Deno.test("Esc closes the model picker without switching; Tab completes a model after /model", async () => {
  await using t = await startTui({ columns: 100, rows: 30 });
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("/model\r");
  await t.waitFor(/fake-small/);
  t.terminal.type("\x1b");
  await t.waitFor((s) => !/Models of openai/.test(s), "the picker to close");
  assert.equal(t.tui.session.model, "fake-model");
  t.terminal.type("/model fake-s");
  await t.waitFor(/^ +fake-small *$/m, "the drawer offering the matching model");
  t.terminal.type("\t");
  await t.waitFor(/^› \/model fake-small$/m, "the completed line");
  t.terminal.type("\x15/model fake-l\r");
  await t.waitFor(/provider openai, model fake-large/, "Enter on a partial value picks the match");
  assert.equal(t.tui.session.model, "fake-large");
});

Deno.test("/resume opens a picker of the sessions, newest first; Tab completes an id after /resume", async () => {
  await using t = await startTui({
    columns: 100,
    rows: 30,
    turns: [{ text: "first answer" }, { text: "second answer" }],
  });
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("the first question\r");
  await t.waitFor(/first answer/);
  await t.idle();
  t.terminal.type("/clear\r");
  await t.waitFor((s) => !s.includes("first answer"), "a cleared screen");
  t.terminal.type("the second question\r");
  await t.waitFor(/second answer/);
  await t.idle();
  t.terminal.type("/resume\r");
  await t.waitFor(/Sessions, newest first/);
  await t.waitFor(/› \d{8}-\d{6}-\w+ .* the first question/, "the other session, not this one");
  assert.doesNotMatch(t.terminal.text(), /the second question$/m);
  t.terminal.type("\x1b");
  await t.waitFor((s) => !s.includes("Sessions, newest first"), "the picker to close");
  t.terminal.type("/clear\r");
  await t.waitFor((s) => !s.includes("second answer"), "a cleared screen");
  // Newest first as `amber sessions` orders them (two sessions of the same second may tie).
  const [newest, oldest] = await listSessions(t.configDir);
  t.terminal.type("/resume\r");
  const screen = await t.waitFor(
    (s) => s.includes("Sessions, newest first") && s.includes(oldest.id),
    "the sessions listed",
  );
  const rows = screen.split("\n");
  const first = rows.findIndex((row) => row.includes(newest.id));
  const second = rows.findIndex((row) => row.includes(oldest.id));
  assert.ok(first > 0 && second > first, screen);
  const date = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d`;
  assert.match(
    rows[first],
    new RegExp(`› ${newest.id} +${date} +1 +fake-model +- +${newest.title}`),
  );
  t.terminal.type(DOWN);
  await t.waitFor(new RegExp(`› ${oldest.id}`));
  t.terminal.type("\r");
  await t.waitFor(new RegExp(`resumed session ${oldest.id}`));
  const answer = oldest.title.includes("first") ? "first answer" : "second answer";
  assert.match(t.terminal.text(), new RegExp(`› ${oldest.title}\n\n${answer}`));

  t.terminal.type(`/resume ${newest.id.slice(0, 6)}`);
  await t.waitFor(new RegExp(`^ +${newest.id} +`, "m"), "the drawer offering the ids");
  t.terminal.type("\t");
  await t.waitFor(new RegExp(`^› /resume ${newest.id}$`, "m"));
});

Deno.test("/provider opens a picker of the presets, each saying whether its key is set", async () => {
  await using t = await startTui({ columns: 100, rows: 30 });
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("/provider\r");
  const screen = await t.waitFor(/Providers/);
  assert.match(screen, /provider +key +default model/);
  assert.match(screen, /› openai \(in use\) +OPENAI_API_KEY (not )?set/);
  assert.match(screen, /ollama +no key needed/);
  t.terminal.type("ollama\r");
  await t.waitFor(/provider ollama/, "the switch");
  assert.equal(t.tui.session.provider, "ollama");
});

Deno.test("@ completes a workspace file, and the file's content reaches the model", async () => {
  await using t = await startTui({ columns: 100, rows: 30, turns: [{ text: "summarised" }] });
  await Deno.mkdir(`${t.workspace}/docs`);
  await Deno.writeTextFile(`${t.workspace}/docs/notes.md`, "alpha\nbeta\ngamma\n");
  await Deno.writeTextFile(`${t.workspace}/.gitignore`, "*.log\n");
  await Deno.writeTextFile(`${t.workspace}/notes.log`, "ignored\n");
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("summarise @note");
  const screen = await t.waitFor(/@docs\/notes\.md +file/, "the file offered");
  assert.doesNotMatch(screen, /notes\.log/, ".gitignore is respected");
  t.terminal.type("\t");
  await t.waitFor(/^› summarise @docs\/notes\.md$/m, "the completed path");
  t.terminal.type("please\r");
  await t.waitFor(/summarised/);
  await t.idle();
  const shown = t.terminal.text();
  assert.match(shown, /› summarise @docs\/notes\.md please\n/, "the prompt as typed");
  assert.match(shown, /attached docs\/notes\.md \(3 lines\)/);
  assert.doesNotMatch(shown, /gamma/, "the content is the model's, not the transcript's");
  const body = t.server.chats.at(-1)!.body as { messages: { role: string; content: unknown }[] };
  const user = body.messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
  assert.ok(
    user.some((text) =>
      text.includes(
        'summarise @docs/notes.md please\\n\\n<attached_file path=\\"docs/notes.md\\">\\nalpha\\nbeta\\ngamma\\n</attached_file>',
      )
    ),
    user.join("\n"),
  );
});

Deno.test("/plugins names the selected plugin's contributions and dependents; Space switches it", async () => {
  await using t = await startTui({ columns: 100, rows: 30, plugins: baseAndApp() });
  const runtime = t.tui.host.runtime;
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type("/plugins\r");
  await t.waitFor(/Esc close ·/, "the console");
  t.terminal.type(UP);
  t.terminal.type(UP);
  let screen = await t.waitFor(/Enter switch base off/);
  assert.match(
    screen,
    /base \(BASE 1\.0\.0, active\) · contributes 1 tool, 1 command · required by app/,
  );
  assert.match(screen, /^ +tool: base_tool$/m);
  assert.match(screen, /^ +command: base_root$/m);
  t.terminal.type(" ");
  screen = await t.waitFor(/Switch off base\?/, "the plan, asked about");
  assert.match(
    screen,
    /1\. app \(it requires base\): 1 tool, 1 command|1\. app \(it requires base\): 1 command, 1 tool/,
  );
  assert.equal(runtime.state("base").status, "active");
  t.terminal.type("y");
  await t.waitFor(/base: disabled \(switched off first: app\)/);
  assert.notEqual(runtime.state("app").status, "active", "its dependent went with it");
  t.terminal.type(" ");
  await t.waitFor(/base: active/, "Space switches it back on");
  assert.equal(runtime.state("base").status, "active");
});
