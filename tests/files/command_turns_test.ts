// A markdown command's `model` and `allowed-tools` act on the turn its prompt starts, and on that
// turn only: in a session (as the interactive session and `amber acp` run it), in `amber run`
// end to end. Its argument hint reaches the drawer and the editor protocol's command list, and a
// command file edited between turns is read again when its command runs.

import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { client, methods } from "@agentclientprotocol/sdk";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { availableCommands } from "../../cli/acp/slash_commands.ts";
import { runSlashCommand } from "../../cli/slash_line.ts";
import type { AgentSession } from "../../cli/session/mod.ts";
import { type AppControls, SessionCommands } from "../../cli/tui/command_adapter.ts";
import { TranscriptView } from "../../cli/tui/transcript_view.ts";
import { tempDir } from "../_helpers.ts";
import { startAmberAcp } from "../acp/_amber_acp.ts";
import { amberIn, layout, markdown, openFilesSession, seen } from "./_files_session.ts";

const SMALL = markdown(["description: Ask the small model", "model: other-model"], "Answer $1.");
const LOOK = markdown(
  ["description: Look only", "argument-hint: [path]", "allowed-tools: Read"],
  "Look at $1 without changing anything.",
);
const BASH = { toolCalls: [{ name: "bash", arguments: { command: "echo from-bash" } }] };

// Runs `line` as the front ends do: the command, then its prompt as a turn with its `turn`.
async function command(session: AgentSession, line: string) {
  const outcome = await runSlashCommand(session.host, line);
  ok(outcome?.ok === true && outcome.prompt !== undefined, JSON.stringify(outcome));
  return await session.turn(outcome.prompt, outcome.turn ? { command: outcome.turn } : {});
}

Deno.test("a command's model answers its turn; the next prompt has the session's model", async () => {
  await using s = await openFilesSession({ "ws/.amber/commands/small.md": SMALL }, [
    { text: "small answer" },
    { text: "big answer" },
  ]);
  const first = await command(s.session, "/small quickly");
  equal(first.cause.kind, "completed");
  await s.session.turn("And now?");
  equal(seen(s.server, 0).model, "other-model");
  equal(seen(s.server, 1).model, "fake-model");
  equal(s.session.model, "fake-model");
});

Deno.test("a model the provider does not know fails the turn naming the command file", async () => {
  await using s = await openFilesSession({ "ws/.amber/commands/small.md": SMALL }, [
    { fault: { kind: "status", status: 404, message: "no such model" } },
    { text: "fine" },
  ]);
  const result = await command(s.session, "/small x");
  ok(result.cause.kind === "error" && result.cause.failure.kind === "provider");
  match(result.cause.failure.message, /the model 'other-model' named by \/small \(.*small\.md\)/);
  const next = await s.session.turn("hello");
  equal(next.cause.kind, "completed");
  equal(seen(s.server, 1).model, "fake-model");
});

Deno.test("allowed-tools: Read refuses bash in the command's turn, not in the next", async () => {
  await using s = await openFilesSession(
    { "ws/.amber/commands/look.md": LOOK },
    [BASH, { text: "looked" }, BASH, { text: "ran" }],
    { approval: "auto" },
  );
  await command(s.session, "/look src");
  const refused = seen(s.server, 1).results;
  equal(refused.length, 1);
  match(refused[0], /allowed-tools of \/look \(.*look\.md\) refused bash/);
  ok(!refused[0].includes("from-bash"));
  await s.session.turn("Now run it.");
  const results = seen(s.server, 3).results;
  match(results.at(-1)!, /from-bash/);
  ok(!results.at(-1)!.includes("allowed-tools"));
});

Deno.test("the editor protocol's command list carries a command's argument hint", async () => {
  await using s = await openFilesSession({ "ws/.amber/commands/look.md": LOOK }, []);
  const look = availableCommands(s.session.host.registries.command.tree())
    .find((entry) => entry.name === "look");
  deepStrictEqual(look, { name: "look", description: "Look only", input: { hint: "[path]" } });
});

// The interactive session's controls as its commands use them, no turn running.
function controls(startTurn: AppControls["startTurn"]): AppControls {
  return {
    transcript: new TranscriptView(),
    busy: () => false,
    showPanel: () => {},
    startTurn,
    startCompaction: () => {},
    forget: () => {},
    scrollHome: () => {},
    settingsChanged: () => {},
    label: () => ({ verb: "", summary: "" }),
    quit: () => {},
    redraw: () => {},
  };
}

Deno.test("the interactive session starts a command's turn with its model and tools", async () => {
  await using s = await openFilesSession({
    "ws/.amber/commands/small.md": SMALL,
    "ws/.amber/commands/look.md": LOOK,
  }, []);
  const started: { prompt: string; command?: unknown }[] = [];
  const app = controls((prompt, command) => started.push({ prompt, command }));
  const commands = new SessionCommands(s.session, app);
  await commands.dispatch("/small now");
  await commands.dispatch("/look src");
  equal(started.length, 2);
  deepStrictEqual(started.map((turn) => turn.prompt), [
    "Answer now.\n",
    "Look at src without changing anything.\n",
  ]);
  match(JSON.stringify(started[0].command), /"model":"other-model"/);
  match(JSON.stringify(started[1].command), /"allowedTools":\["Read"\]/);
});

Deno.test("a command file edited between turns is expanded anew when the command runs", async () => {
  await using s = await openFilesSession({
    "ws/.amber/commands/note.md": markdown([], "Old note on $1."),
  }, [{ text: "one" }, { text: "two" }]);
  await command(s.session, "/note a");
  await Deno.writeTextFile(
    `${s.workspace}/.amber/commands/note.md`,
    markdown(["argument-hint: [topic]"], "A much newer note on $1."),
  );
  const outcome = await runSlashCommand(s.session.host, "/note b");
  ok(outcome?.ok === true);
  equal(outcome.prompt, "A much newer note on b.\n");
});

Deno.test("the interactive session reads an edited command file again before running it", async () => {
  await using s = await openFilesSession({
    "ws/.amber/commands/note.md": markdown([], "Old note on $1."),
  }, []);
  const started: string[] = [];
  const commands = new SessionCommands(s.session, controls((prompt) => started.push(prompt)));
  await commands.dispatch("/note a");
  await Deno.writeTextFile(
    `${s.workspace}/.amber/commands/note.md`,
    markdown([], "A much newer note on $1."),
  );
  await commands.dispatch("/note b");
  deepStrictEqual(started, ["Old note on a.\n", "A much newer note on b.\n"]);
});

Deno.test("the drawer shows a command's description with its usage, else the description", async () => {
  await using s = await openFilesSession({
    "ws/.amber/commands/look.md": LOOK,
    "ws/.amber/commands/small.md": SMALL,
  }, []);
  const help = new Map(s.session.host.registries.command.tree().map((r) => [r.name, r.help]));
  equal(help.get("look"), "Look only: /look [path]");
  equal(help.get("small"), "Ask the small model");
});

// `amber run prompt` in `workspace` against `server`, with a home of its own.
function amberRun(dir: string, workspace: string, server: FakeProvider, prompt: string) {
  return amberIn(dir, workspace, [
    "run",
    prompt,
    "--base-url",
    `${server.url}/v1`,
    "--model",
    "fake-model",
  ]);
}

Deno.test("amber run '/cmd' uses the command's model and allowed-tools", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/ws`;
  await layout(tmp.dir, {
    "home/.keep": "",
    "config/.keep": "",
    "ws/.amber/commands/small.md": SMALL,
    "ws/.amber/commands/look.md": LOOK,
  });
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "small answer" }, BASH, { text: "looked" });
  const small = await amberRun(tmp.dir, workspace, server, "/small now");
  equal(small.code, 0, small.err);
  equal(small.out, "small answer\n");
  equal(seen(server, 0).model, "other-model");
  const look = await amberRun(tmp.dir, workspace, server, "/look src");
  equal(look.code, 0, look.err);
  equal(seen(server, 1).model, "fake-model");
  const [result] = seen(server, 2).results;
  match(result, /allowed-tools of \/look \(.*look\.md\) refused bash/);
});

Deno.test("amber acp runs a command's turn on its model, the next prompt on the session's", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/ws`;
  await layout(tmp.dir, { "home/.keep": "", "ws/.amber/commands/small.md": SMALL });
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "small answer" }, { text: "big answer" });
  await using amber = startAmberAcp(client({ name: "test-editor" }), {
    configDir: `${tmp.dir}/config`,
    workspace,
    baseUrl: `${server.url}/v1`,
    args: ["--model", "fake-model"],
    env: { HOME: `${tmp.dir}/home` },
  });
  await amber.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  const { sessionId } = await amber.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  for (const text of ["/small now", "And now?"]) {
    const response = await amber.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    equal(response.stopReason, "end_turn");
  }
  deepStrictEqual([seen(server, 0).model, seen(server, 1).model], ["other-model", "fake-model"]);
});
