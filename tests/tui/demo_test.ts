// `amber demo --interactive` headless: the interactive session over a fake terminal plays the
// scripted conversation (a plan, reads, an edit, an approved edit outside the workspace, a
// streamed command, the hello plugin's tool, an answer) on the fake provider, one scripted turn
// per prompt; and the hello plugin is offered to the model only where it was switched on.

import assert from "node:assert/strict";
import { makeBundledPlugins } from "@amber/plugins";
import { openInteractiveDemo } from "../../cli/commands/demo_interactive.ts";
import { DEMO_TURNS } from "../../cli/commands/demo_script.ts";
import { openFakeSession } from "../cli/_fake_session.ts";
import { FakeTerminal } from "./_harness.ts";

function toolNames(body: unknown): string[] {
  const tools = (body as { tools?: { function?: { name?: string } }[] }).tools ?? [];
  return tools.map((tool) => tool.function?.name ?? "");
}

// The demo on a fake terminal, drawn without colour and at once.
function openDemo(terminal: FakeTerminal) {
  return openInteractiveDemo({
    terminal,
    plugins: makeBundledPlugins,
    color: false,
    frameMs: 1,
    tickMs: 50,
  });
}

async function waitFor(terminal: FakeTerminal, test: RegExp | (() => boolean), what: string) {
  const check = typeof test === "function" ? test : () => test.test(terminal.text());
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}; the screen:\n${terminal.text()}`);
}

Deno.test("amber demo --interactive plays one scripted turn per prompt, whatever is typed", async () => {
  const terminal = new FakeTerminal(100, 40);
  const demo = await openDemo(terminal);
  const { app } = demo.tui;
  const idle = (what: string) => waitFor(terminal, () => !app.busy, what);
  try {
    const exit = app.run();
    await waitFor(terminal, /amber demo: the model is scripted/, "the greeting");
    assert.match(terminal.text(), /Ctrl-T/, "the greeting says what to try");

    terminal.type("where is the greeting?\r");
    await waitFor(terminal, /Send anything to go on/, "the first turn's answer");
    await idle("the first turn to end");
    assert.match(terminal.text(), /⚙ read README\.md/);
    assert.match(terminal.text(), /\[~\] Find the greeting/, "the todo list shows the plan");

    terminal.type("ok\r");
    await waitFor(terminal, /Allow edit/, "the question about the edit outside the workspace");
    assert.equal(
      await Deno.readTextFile(`${demo.workspace}/src/greet.ts`).then((t) => t.includes("Hello")),
      true,
      "the edit inside the workspace ran without a question",
    );
    terminal.type("y");
    await waitFor(terminal, /Send anything again/, "the second turn's answer");
    await idle("the second turn to end");
    assert.match(await Deno.readTextFile(`${demo.root}/notes/CHANGELOG.md`), /0\.1\.1/);

    terminal.type("fine\r");
    await waitFor(terminal, /Allow bash/, "the question about the command");
    terminal.type("y");
    await waitFor(terminal, /All done/, "the third turn's answer");
    await idle("the third turn to end");
    assert.match(terminal.text(), /Hello, you!/, "the hello plugin's tool ran");

    terminal.type("and now?\r");
    await waitFor(terminal, /That was the whole script/, "the closing answer");
    await idle("the last turn to end");

    const chats = demo.server.chats;
    const scripted = DEMO_TURNS.reduce((sum, turn) => sum + turn.length, 0);
    assert.equal(chats.length, scripted + 1, "one model call per scripted answer, then closing");
    assert.ok(toolNames(chats[0].body).includes("greet"), "the demo offers hello's tool");
    app.quit();
    assert.equal(await exit, 0);
  } finally {
    await demo[Symbol.asyncDispose]();
    await Deno.remove(demo.root, { recursive: true });
  }
});

Deno.test("a turn cancelled halfway does not shift the rest of its script onto the next prompt", async () => {
  const terminal = new FakeTerminal(100, 40);
  const demo = await openDemo(terminal);
  const { app } = demo.tui;
  try {
    const exit = app.run();
    terminal.type("one\r");
    await waitFor(terminal, /Send anything to go on/, "the first answer");
    await waitFor(terminal, () => !app.busy, "the first turn to end");
    terminal.type("two\r");
    await waitFor(terminal, /Allow edit/, "the question");
    terminal.type("\x03");
    await waitFor(terminal, () => !app.busy, "the second turn to be cancelled");
    assert.doesNotMatch(terminal.text(), /Send anything again/, "its last answer never came");
    terminal.type("three\r");
    await waitFor(terminal, /Allow bash/, "the third prompt's scripted turn");
    assert.doesNotMatch(terminal.text(), /Send anything again/);
    assert.equal(demo.script.prompt, 2);
    app.quit();
    assert.equal(await exit, 0);
  } finally {
    await demo[Symbol.asyncDispose]();
    await Deno.remove(demo.root, { recursive: true });
  }
});

Deno.test("the hello plugin's tool is not offered to a real session's model", async () => {
  await using fake = await openFakeSession([{ text: "Hi." }]);
  const result = await fake.session.turn("hello");
  assert.equal(result.cause.kind, "completed");
  const offered = toolNames(fake.server.chats[0].body);
  assert.ok(offered.includes("read"), offered.join(", "));
  assert.ok(!offered.includes("greet"), `greet was offered: ${offered.join(", ")}`);
});
