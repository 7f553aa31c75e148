/**
 * `amber demo`: a real session (the kernel, the bundled tool plugins, a transcript) against
 * amber's fake provider on 127.0.0.1, with a scripted exchange in a temporary workspace: the
 * model reads a file, searches, edits, and answers. No key, no network; it says so.
 *
 * `amber demo --interactive` opens the interactive session there instead: whatever the user
 * types, the scripted model answers with its next turn (see `demo_script.ts`), so the keys,
 * approvals, diffs, the todo list and plugin switches can be tried without a key. The hello
 * plugin, off everywhere else, is switched on in the demo's own config directory.
 *
 * @module
 */

import { join } from "node:path";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { openHost } from "../host.ts";
import { AgentSession, describeEnd } from "../session/mod.ts";
import { DEMO_KEY, makeDemoPlace } from "./demo_script.ts";
import { runPrinter } from "./run_printer.ts";

/** `amber demo`. */
export const demoCommand: CliCommand = {
  name: "demo",
  usage: `  demo [--interactive]            a scripted session against amber's fake provider on
                                  127.0.0.1 in a temporary workspace (no key, no network);
                                  --interactive: in the interactive session, to try its keys`,
  flags: ["interactive"],
  run: demo,
};

const PROMPT = "The greeting in this project has a typo. Fix it and tell me what you changed.";

async function demo(context: CommandContext): Promise<number> {
  if (context.words.length > 0) throw new UsageError("demo takes no arguments");
  if (context.parsed.switches.has("interactive")) {
    const { runInteractiveDemo } = await import("./demo_interactive.ts");
    return await runInteractiveDemo(context);
  }
  const { io } = context;
  // The fake provider is only needed here, so it is loaded only here.
  const { FakeProvider, openaiEncoder } = await import("@amber/providers/testing");
  const { root, workspace, configDir } = await makeDemoPlace();

  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(
    {
      text: "Let me look at the project and find the greeting.",
      toolCalls: [
        { id: "call_read_readme", name: "read", arguments: { path: "README.md" } },
        { id: "call_search", name: "search", arguments: { pattern: "Helo" } },
      ],
      usage: { promptTokens: 1412, completionTokens: 61 },
    },
    {
      toolCalls: [{ id: "call_read_src", name: "read", arguments: { path: "src/greet.ts" } }],
      usage: { promptTokens: 1630, completionTokens: 24 },
    },
    {
      text: "The README promises `Hello`, the code says `Helo`. Fixing it.",
      toolCalls: [{
        id: "call_edit",
        name: "edit",
        arguments: { path: "src/greet.ts", old_string: "`Helo, ", new_string: "`Hello, " },
      }],
      usage: { promptTokens: 1798, completionTokens: 58 },
    },
    {
      text: "Fixed the typo in `src/greet.ts`: `greet()` returned `Helo, <name>!` and now " +
        "returns `Hello, <name>!`, as the README says. A search found no other occurrence.\n",
      usage: { promptTokens: 1911, completionTokens: 49 },
    },
  );

  io.err(
    "amber demo: a real session against amber's fake provider on 127.0.0.1. The model's answers\n" +
      "are scripted; the tools, the plugin runtime and the transcript are the real thing.\n" +
      `workspace: ${workspace}\n`,
  );
  const session = await AgentSession.open({
    openHost: (services) =>
      openHost({ ...services, plugins: context.plugins(), configDir, workspace }),
    overrides: { provider: "openai", model: "amber-demo", baseUrl: `${server.url}/v1` },
    // The fake provider takes any key; this one cannot occur in the transcript it is kept from.
    env: (name) => name === "OPENAI_API_KEY" ? DEMO_KEY : undefined,
    approval: "auto",
    maxSteps: 10,
  });
  const host = session.host;
  // Off everywhere else (real models are not offered its tool); on in the demo's own config.
  await host.runtime.setState("hello", true);
  try {
    session.subscribe(runPrinter(io, false));
    io.err(`you: ${PROMPT}\n`);
    const result = await session.turn(PROMPT);
    if (result.cause.kind !== "completed") {
      io.err(`amber: the demo did not complete: ${describeEnd(result.cause)}`);
      return 1;
    }
    const fixed = await Deno.readTextFile(join(workspace, "src", "greet.ts"));
    io.err(
      `\nsrc/greet.ts now reads:\n${
        fixed.trimEnd().split("\n").map((l) => `  ${l}`).join("\n")
      }\n` +
        `transcript: ${join(configDir, "sessions", `${session.id}.jsonl`)}\n` +
        `(the workspace and the transcript stay in ${root} for you to look at)\n` +
        `(${server.chats.length} model calls, ${result.steps} steps; ` +
        `this was a demo — for a real model: amber run "<prompt>" --provider <preset>)`,
    );
    return 0;
  } finally {
    session.close();
    await host.close();
  }
}
