import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import type { CommandCapability, CommandReply } from "@amber/core";
import { createCommandRegistry } from "@amber/registries/commands";
import { mcpPromptCommands, splitWords } from "../../mcp/prompt_commands.ts";
import { services } from "../registries/_fixtures.ts";
import { type FeatureServer, featureServer, README } from "./_feature_server.ts";

async function withCommands(
  test: (commands: Map<string, CommandCapability>, server: FeatureServer) => Promise<void>,
  name = "memo",
): Promise<void> {
  const server = await featureServer();
  try {
    const { prompts } = await server.client.listPrompts();
    const commands = mcpPromptCommands(name, prompts, server.client, 5_000);
    await test(new Map(commands.map((command) => [command.root, command])), server);
  } finally {
    await server.close();
  }
}

function run(commands: Map<string, CommandCapability>, root: string, line: string) {
  const command = commands.get(root);
  if (command === undefined) throw new Error(`no command ${root}`);
  return Promise.resolve(command.handlers[""](line)) as Promise<CommandReply>;
}

Deno.test("mcpPromptCommands: one root per prompt, with its arguments in help and manual", () =>
  withCommands(async (commands) => {
    deepStrictEqual([...commands.keys()], [
      "mcp__memo__greet",
      "mcp__memo__review",
      "mcp__memo__chat",
    ]);
    const greet = commands.get("mcp__memo__greet");
    strictEqual(greet?.help, "Greets someone. (arguments: name [style])");
    strictEqual(greet?.name, "mcp__memo__greet");
    deepStrictEqual(greet?.subtree, {});
    strictEqual(
      greet?.man,
      [
        "Usage: /mcp__memo__greet <name> [style]",
        "",
        "Sends the prompt 'greet' of the MCP server 'memo' to the model as your message.",
        "Greets someone.",
        "",
        "Arguments, in this order or as name=value (quote a value that has spaces):",
        "  name   (required) Who to greet",
        "  style  How",
      ].join("\n"),
    );
    strictEqual(commands.get("mcp__memo__chat")?.help, "A conversation to go on from.");
    await Promise.resolve();
  }));

Deno.test("mcpPromptCommands: a server name in capitals still makes a valid root", () =>
  withCommands(async (commands) => {
    deepStrictEqual([...commands.keys()][0], "mcp__memo__greet");
    const registry = createCommandRegistry();
    const result = registry.install("mcp.memo", [...commands.values()][0], services("mcp.memo"));
    strictEqual(result.status, "installed");
    await Promise.resolve();
  }, "MeMo"));

Deno.test("mcpPromptCommands: arguments in order, by name, quoted, and the rest joined", () =>
  withCommands(async (commands, server) => {
    deepStrictEqual(await run(commands, "mcp__memo__greet", "Ada"), { prompt: "Greet Ada." });
    deepStrictEqual(await run(commands, "mcp__memo__greet", "Ada formal"), {
      prompt: "Greet Ada in a formal way.",
    });
    deepStrictEqual(await run(commands, "mcp__memo__greet", "style=warm name='Ada Lovelace'"), {
      prompt: "Greet Ada Lovelace in a warm way.",
    });
    deepStrictEqual(await run(commands, "mcp__memo__greet", 'style="very dry" Grace'), {
      prompt: "Greet Grace in a very dry way.",
    });
    // Words past the last argument join it: a one-line request needs no quotes.
    deepStrictEqual(await run(commands, "mcp__memo__greet", "Ada very, very formal"), {
      prompt: "Greet Ada in a very, very formal way.",
    });
    // A `name=` that names no argument is an ordinary word.
    deepStrictEqual(await run(commands, "mcp__memo__greet", "x=1"), { prompt: "Greet x=1." });
    deepStrictEqual(server.promptCalls.map((call) => call.args), [
      { name: "Ada" },
      { name: "Ada", style: "formal" },
      { name: "Ada Lovelace", style: "warm" },
      { name: "Grace", style: "very dry" },
      { name: "Ada", style: "very, very formal" },
      { name: "x=1" },
    ]);
  }));

Deno.test("mcpPromptCommands: missing required arguments are an error listing them", () =>
  withCommands(async (commands, server) => {
    await rejects(run(commands, "mcp__memo__review", ""), {
      name: "McpPromptError",
      message: "missing required arguments: file, focus " +
        "(usage: /mcp__memo__review <file> <focus> [depth])",
    });
    await rejects(run(commands, "mcp__memo__review", "depth=deep main.ts"), {
      message:
        "missing required argument: focus (usage: /mcp__memo__review <file> <focus> [depth])",
    });
    await rejects(run(commands, "mcp__memo__chat", "hello there"), {
      message: "too many words: 'hello there' fills no argument (usage: /mcp__memo__chat)",
    });
    deepStrictEqual(server.promptCalls, [], "the server was never asked");
  }));

Deno.test("mcpPromptCommands: embedded resources are included, images noted, roles kept", () =>
  withCommands(async (commands) => {
    deepStrictEqual(await run(commands, "mcp__memo__review", 'main.ts "error handling"'), {
      prompt: [
        "Review main.ts for error handling.",
        README,
        "[image: image/png, 70 bytes, left out: an image cannot go in this message]",
      ].join("\n\n"),
    });
    deepStrictEqual(await run(commands, "mcp__memo__chat", ""), {
      prompt: "user: What is memo?\n\nassistant: A test server.\n\nuser: Say more.",
    });
  }));

Deno.test("mcpPromptCommands: through the command registry the outcome carries the prompt", () =>
  withCommands(async (commands) => {
    const registry = createCommandRegistry();
    for (const command of commands.values()) {
      strictEqual(registry.install("mcp.memo", command, services("mcp.memo")).status, "installed");
    }
    deepStrictEqual(await registry.dispatch("mcp__memo__greet", [], "Ada"), {
      ok: true,
      text: "",
      prompt: "Greet Ada.",
    });
    const missing = await registry.dispatch("mcp__memo__greet", [], "");
    deepStrictEqual(missing, {
      ok: false,
      error: "'/mcp__memo__greet' failed: missing required argument: name " +
        "(usage: /mcp__memo__greet <name> [style])",
    });
  }));

Deno.test("mcpPromptCommands: a prompt the server will not give is an error naming it", () =>
  withCommands(async (_commands, server) => {
    const [gone] = mcpPromptCommands("memo", [{ name: "gone" }], server.client, 5_000);
    await rejects(Promise.resolve(gone.handlers[""]("")), (error: Error) => {
      strictEqual(error.name, "McpPromptError");
      strictEqual(
        error.message.startsWith("the server 'memo' did not give the prompt 'gone': "),
        true,
        error.message,
      );
      return true;
    });
  }));

Deno.test("splitWords: quotes group words and go; blanks separate", () => {
  deepStrictEqual(splitWords("  a  b\tc "), ["a", "b", "c"]);
  deepStrictEqual(splitWords(`a "b c"d`), ["a", "b cd"]);
  deepStrictEqual(splitWords(`'' x`), ["", "x"]);
  deepStrictEqual(splitWords(`"it's" 'say "hi"'`), ["it's", 'say "hi"']);
  deepStrictEqual(splitWords(`"unclosed words`), ["unclosed words"]);
  deepStrictEqual(splitWords(""), []);
});
