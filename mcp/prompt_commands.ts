/**
 * An MCP server's prompts as slash commands: `/mcp__<server>__<prompt> args` fills the prompt's
 * arguments from the line, asks the server for the prompt, and hands its text to the front end to
 * send to the model as the user's message.
 *
 * @module
 */

import { AmberError, type CommandCapability, type CommandReply } from "@amber/core";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { GetPromptResult, Prompt as SdkPrompt } from "@modelcontextprotocol/sdk/types.js";
import { emptyContent, renderBlock } from "./_content.ts";
import { errorText } from "./_request.ts";
import { mcpToolName } from "./server_config.ts";

/**
 * A prompt command could not run: the line left a required argument out, gave more words than
 * the prompt takes, or the server did not give the prompt.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { McpPromptError } from "./prompt_commands.ts";
 * const error = new McpPromptError("missing required argument: name");
 * assert.equal(error.name, "McpPromptError");
 * ```
 */
export class McpPromptError extends AmberError {
  /** Creates the error with its message and, for a failed request, its cause. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpPromptError";
  }
}

/**
 * One root command per prompt of the server `server`, executable itself (handler key `""`).
 *
 * The root is `mcp__<server>__<prompt>` made as a tool name is (see `mcpToolName`) and in lower
 * case, since a command root is `[a-z0-9_-]+`. Its help is the prompt's description and argument
 * names (`[name]` for an optional one); its manual has the usage and each argument's description.
 * The handler reads the rest of the line as the prompt's arguments: words in the declared order,
 * or `name=value`; quotes (`"` or `'`) group words into one value; words beyond the last
 * argument join the last one filled in order, so a one-argument prompt takes the whole line.
 * A required argument left out throws a {@linkcode McpPromptError} listing every missing one.
 * Otherwise it calls `prompts/get` (deadline `timeoutMs`) and returns `{ prompt }`: the text of
 * the messages joined by blank lines (each with its role when the server's messages are not all
 * the user's), an embedded resource's text included, an image or audio noted in a line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { mcpPromptCommands } from "./prompt_commands.ts";
 * const client = new Client({ name: "example", version: "1.0.0" });
 * const [command] = mcpPromptCommands("Docs", [{
 *   name: "explain",
 *   description: "Explain a topic.",
 *   arguments: [{ name: "topic", required: true }, { name: "level" }],
 * }], client, 60_000);
 * assert.equal(command.root, "mcp__docs__explain");
 * assert.equal(command.help, "Explain a topic. (arguments: topic [level])");
 * await assert.rejects(async () => await command.handlers[""](""), {
 *   name: "McpPromptError",
 *   message: "missing required argument: topic (usage: /mcp__docs__explain <topic> [level])",
 * });
 * ```
 */
export function mcpPromptCommands(
  server: string,
  prompts: readonly SdkPrompt[],
  client: Client,
  timeoutMs: number,
): readonly CommandCapability[] {
  return prompts.map((prompt) => promptCommand(server, prompt, client, timeoutMs));
}

function promptCommand(
  server: string,
  prompt: SdkPrompt,
  client: Client,
  timeoutMs: number,
): CommandCapability {
  const root = mcpToolName(server, prompt.name).toLowerCase();
  const declared = prompt.arguments ?? [];
  const usage = `/${root}${
    declared.map((arg) => arg.required === true ? ` <${arg.name}>` : ` [${arg.name}]`).join("")
  }`;
  const about = firstLine(prompt.description) || firstLine(prompt.title) ||
    `The prompt '${prompt.name}' of the MCP server '${server}'.`;
  const names = declared.map((arg) => arg.required === true ? arg.name : `[${arg.name}]`);
  const help = names.length === 0 ? about : `${about} (arguments: ${names.join(" ")})`;
  const width = Math.max(0, ...declared.map((arg) => arg.name.length));
  const man = [
    `Usage: ${usage}`,
    "",
    `Sends the prompt '${prompt.name}' of the MCP server '${server}' to the model as your message.`,
    ...(prompt.description === undefined ? [] : [prompt.description]),
    ...(declared.length === 0 ? [] : [
      "",
      "Arguments, in this order or as name=value (quote a value that has spaces):",
      ...declared.map((arg) =>
        `  ${arg.name.padEnd(width)}  ${arg.required === true ? "(required) " : ""}${
          arg.description ?? ""
        }`.trimEnd()
      ),
    ]),
  ].join("\n");
  const handler = async (line: string): Promise<CommandReply> => {
    const args = promptArguments(prompt, line, usage);
    let result: GetPromptResult;
    try {
      result = await client.getPrompt({ name: prompt.name, arguments: args }, {
        timeout: timeoutMs,
      });
    } catch (error) {
      throw new McpPromptError(
        `the server '${server}' did not give the prompt '${prompt.name}': ${errorText(error)}`,
        { cause: error },
      );
    }
    const text = promptText(result);
    if (text === "") {
      throw new McpPromptError(`the prompt '${prompt.name}' of '${server}' has no text`);
    }
    return { prompt: text };
  };
  return { kind: "command", name: root, root, help, man, subtree: {}, handlers: { "": handler } };
}

// Fills the declared arguments from the line: `name=value` for a declared name, the other words
// in order; the words left over join the last argument filled in order.
function promptArguments(prompt: SdkPrompt, line: string, usage: string): Record<string, string> {
  const declared = prompt.arguments ?? [];
  const known = new Set(declared.map((arg) => arg.name));
  const values: Record<string, string> = {};
  const positional: string[] = [];
  for (const word of splitWords(line)) {
    const equals = word.indexOf("=");
    const name = equals > 0 ? word.slice(0, equals) : "";
    if (known.has(name)) values[name] = word.slice(equals + 1);
    else positional.push(word);
  }
  let last: string | undefined;
  for (const arg of declared) {
    if (positional.length === 0) break;
    if (Object.hasOwn(values, arg.name)) continue;
    values[arg.name] = positional.shift() ?? "";
    last = arg.name;
  }
  if (positional.length > 0) {
    if (last === undefined) {
      throw new McpPromptError(
        `too many words: '${positional.join(" ")}' fills no argument (usage: ${usage})`,
      );
    }
    values[last] = [values[last], ...positional].join(" ");
  }
  const missing = declared.filter((arg) =>
    arg.required === true && !Object.hasOwn(values, arg.name)
  )
    .map((arg) => arg.name);
  if (missing.length > 0) {
    throw new McpPromptError(
      `missing required argument${missing.length === 1 ? "" : "s"}: ${missing.join(", ")} ` +
        `(usage: ${usage})`,
    );
  }
  return values;
}

/**
 * The words of a command line: runs of characters between spaces, where a quoted part (`"..."` or
 * `'...'`) may hold spaces and loses its quotes. `a "b c"d` is `a`, `b cd`; `""` is one empty word.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitWords } from "./prompt_commands.ts";
 * assert.deepEqual(splitWords(`main.ts focus="error handling" 'it''s'`), [
 *   "main.ts",
 *   "focus=error handling",
 *   "its",
 * ]);
 * ```
 */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote = "";
  for (const char of line) {
    if (quote !== "") {
      if (char === quote) quote = "";
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

function promptText(result: GetPromptResult): string {
  const allUser = result.messages.every((message) => message.role === "user");
  const texts: string[] = [];
  for (const message of result.messages) {
    const rendered = emptyContent();
    renderBlock(message.content, rendered, false);
    const text = rendered.parts.join("\n");
    if (text === "") continue;
    texts.push(allUser ? text : `${message.role}: ${text}`);
  }
  return texts.join("\n\n");
}

function firstLine(text: string | undefined): string {
  return text?.trim().split("\n")[0]?.trim() ?? "";
}
