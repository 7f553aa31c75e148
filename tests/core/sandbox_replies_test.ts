// What crosses the sandbox besides text: a command's reply with a prompt for the model, and a
// tool result's images. A sandboxed plugin (in memory: `servePlugin` on the far end of the
// connection) is held to the same shapes as one in amber's process; garbage from it is an error
// naming the command, never an outcome.

import assert from "node:assert/strict";
import type { CommandHandler, Plugin, ToolResult } from "@amber/core";
import { loadSandboxedPlugin } from "@amber/core/sandbox";
import { makeRuntime, OPEN_BOUND } from "../_helpers.ts";
import { memoryProcesses } from "./_memory_connection.ts";
import { SPAWN } from "./_sandboxed_box.ts";

const IMAGE = { mimeType: "image/png", data: "iVBORw0KGgo=" };

function promptPlugin(): Plugin {
  const handlers: { [path: string]: CommandHandler } = {
    review: (arg) => ({ text: `reviewing ${arg}`, prompt: `Review ${arg} for bugs.` }),
    ask: (arg) => ({ prompt: `Explain ${arg}.`, extra: "dropped" } as never),
    plain: (arg) => `plain ${arg}`,
    number: () => 42 as never,
    empty: () => ({}) as never,
    blank: () => ({ prompt: "  " }),
    typed: () => ({ prompt: 7 }) as never,
  };
  return {
    id: "box",
    version: "1.0.0",
    name: "Box",
    bound: OPEN_BOUND,
    initialize: () => true,
    shutdown() {},
    capabilities: () => [
      {
        kind: "command",
        name: "box",
        root: "box",
        help: "Box commands",
        subtree: Object.fromEntries(Object.keys(handlers).map((key) => [key, { help: key }])),
        handlers,
      },
      {
        kind: "tool",
        name: "box_tools",
        tools: [{
          name: "shot",
          description: "A screenshot.",
          parameters: { type: "object" },
          execute: (): ToolResult => ({ ok: true, output: "shot", images: [IMAGE] }),
        }, {
          name: "bad_shot",
          description: "A screenshot gone wrong.",
          parameters: { type: "object" },
          execute: () => ({ ok: true, output: "shot", images: [{ data: 1 }] }) as never,
        }],
      },
    ],
  };
}

async function scene() {
  const processes = memoryProcesses(promptPlugin);
  const { runtime, registries } = makeRuntime();
  const sandboxed = await loadSandboxedPlugin({
    ...SPAWN,
    connect: processes.connect,
    onFault: (fault) => runtime.fail(fault.pluginId, fault.where, fault.message),
  });
  runtime.register(sandboxed.plugin);
  await runtime.start();
  return {
    registries,
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await sandboxed.close();
    },
  };
}

Deno.test("a sandboxed plugin's command reply carries its prompt; only text and prompt cross", async () => {
  await using s = await scene();
  const dispatch = (path: string, arg = "") => s.registries.command.dispatch("box", [path], arg);
  assert.deepEqual(await dispatch("review", "main.ts"), {
    ok: true,
    text: "reviewing main.ts",
    prompt: "Review main.ts for bugs.",
  });
  assert.deepEqual(await dispatch("ask", "closures"), {
    ok: true,
    text: "",
    prompt: "Explain closures.",
  });
  assert.deepEqual(await dispatch("plain", "x"), { ok: true, text: "plain x" });
});

Deno.test("a sandboxed plugin's garbage reply is an error naming the command", async () => {
  await using s = await scene();
  const dispatch = (path: string) => s.registries.command.dispatch("box", [path], "");
  const errors: string[] = [];
  for (const path of ["number", "empty", "blank", "typed"]) {
    const outcome = await dispatch(path);
    assert.equal(outcome.ok, false, path);
    if (!outcome.ok) errors.push(outcome.error);
  }
  for (const error of errors) assert.match(error, /^'\/box [a-z]+' failed: /);
  assert.match(errors[0], /returned number, not text or a reply/);
  assert.match(errors[1], /a reply with neither text nor prompt/);
  assert.match(errors[2], /an empty prompt/);
  assert.match(errors[3], /prompt is number, not text/);
});

Deno.test("a sandboxed tool's images cross; malformed ones fail the call", async () => {
  await using s = await scene();
  const signal = new AbortController().signal;
  assert.deepEqual(await s.registries.tool.execute("shot", {}, { signal }), {
    ok: true,
    output: "shot",
    images: [IMAGE],
  });
  const bad = await s.registries.tool.execute("bad_shot", {}, { signal });
  assert.equal(bad.ok, false);
  assert.match(bad.error ?? "", /bad_shot/);
});
