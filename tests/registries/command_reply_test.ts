// A command handler's reply: text, or a CommandReply whose prompt the outcome carries for the
// front end to send as the user's message. Anything else is an error outcome naming the
// command, for a core handler and a plugin's alike.

import assert from "node:assert/strict";
import type { CommandCapability, CommandHandler, CommandOutcome } from "@amber/core";
import { createCommandRegistry } from "@amber/registries/commands";
import { services } from "./_fixtures.ts";

function registryWith(handlers: { [path: string]: CommandHandler }) {
  const commands = createCommandRegistry();
  const capability: CommandCapability = {
    kind: "command",
    name: "tpl",
    root: "tpl",
    help: "Templates",
    subtree: Object.fromEntries(Object.keys(handlers).map((key) => [key, { help: key }])),
    handlers,
  };
  commands.install("templates", capability, services("templates"));
  return (path: string, arg = ""): Promise<CommandOutcome> => commands.dispatch("tpl", [path], arg);
}

Deno.test("a reply's prompt reaches the outcome, with its text or an empty one", async () => {
  const dispatch = registryWith({
    both: (arg) => ({ text: `expanding ${arg}`, prompt: `Summarize ${arg}.` }),
    prompt: (arg) => Promise.resolve({ prompt: `Explain ${arg}.` }),
    text: () => ({ text: "only text" }),
    plain: () => "plain",
  });
  assert.deepEqual(await dispatch("both", "notes.md"), {
    ok: true,
    text: "expanding notes.md",
    prompt: "Summarize notes.md.",
  });
  assert.deepEqual(await dispatch("prompt", "tabs"), {
    ok: true,
    text: "",
    prompt: "Explain tabs.",
  });
  // No `prompt` key at all: a front end tests for it, and the text outcome is as before.
  assert.deepEqual(await dispatch("text"), { ok: true, text: "only text" });
  assert.deepEqual(await dispatch("plain"), { ok: true, text: "plain" });
});

Deno.test("a reply of the wrong shape is an error outcome naming the command", async () => {
  const garbage: { [path: string]: unknown } = {
    number: 5,
    nothing: undefined,
    array: ["a"],
    empty: {},
    wrong: { output: "x" },
    text: { text: 1 },
    prompt: { prompt: null },
    blank: { prompt: " \n" },
  };
  const dispatch = registryWith(
    Object.fromEntries(
      Object.entries(garbage).map(([key, value]) => [key, (() => value) as CommandHandler]),
    ),
  );
  const errors: { [path: string]: string } = {};
  for (const path of Object.keys(garbage)) {
    const outcome = await dispatch(path);
    assert.equal(outcome.ok, false, `${path} must fail`);
    if (!outcome.ok) errors[path] = outcome.error;
  }
  assert.deepEqual(errors, {
    number: "'/tpl number' failed: its handler returned number, not text or a reply",
    nothing: "'/tpl nothing' failed: its handler returned undefined, not text or a reply",
    array: "'/tpl array' failed: its handler returned an array, not text or a reply",
    empty: "'/tpl empty' failed: its handler returned a reply with neither text nor prompt",
    wrong: "'/tpl wrong' failed: its handler returned a reply with neither text nor prompt",
    text: "'/tpl text' failed: its handler returned a reply whose text is number, not text",
    prompt: "'/tpl prompt' failed: its handler returned a reply whose prompt is null, not text",
    blank: "'/tpl blank' failed: its handler returned an empty prompt",
  });
});
