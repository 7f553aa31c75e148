// An MCP server that dies: on a call of its `boom` tool, `--after=MS` milliseconds after it
// started serving, or at once before serving with `--at-start` (a server that fails to start).
// It exits with `--code=N` (3 by default) after a line on stderr saying why. `echo` works until then.
//
//   deno run -A tests/mcp/_servers/crash.ts [--after=MS] [--at-start] [--code=N] [--http=PORT]

// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { note, numberOption, serve, serverOptions } from "./_serve.ts";

const options = serverOptions();
const code = numberOption(options, "code", 3);

function die(why: string): never {
  note(`crash: ${why}, exiting with ${code}`);
  Deno.exit(code);
}

if (options["at-start"] !== undefined) die("told to fail at start");

await serve(() => {
  const server = new McpServer({ name: "amber-test-crash", version: "1.0.0" });
  server.registerTool("echo", {
    description: "Returns its text unchanged.",
    inputSchema: { text: z.string() },
  }, ({ text }) => ({ content: [{ type: "text", text }] }));
  server.registerTool("boom", {
    description: "Ends the server's process without answering.",
  }, () => die("boom was called"));
  return server;
}, options);

const after = numberOption(options, "after", -1);
if (after >= 0) setTimeout(() => die(`${after} ms passed`), after);
