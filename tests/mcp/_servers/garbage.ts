// An MCP server that writes a line that is not JSON-RPC on its stdout. `--at=start` (the
// default): the line comes first, before anything is asked. `--at=initialize`: the line is the
// answer to initialize. `--at=call`: a normal server whose `spew` tool writes the line (and then
// answers); `echo` answers. `--line=TEXT` picks the line.
//
//   deno run -A tests/mcp/_servers/garbage.ts [--at=start|initialize|call] [--line=TEXT]

import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serve, serverOptions } from "./_serve.ts";

/** The line written when `--line` is not given. */
export const GARBAGE_LINE = "this is not JSON-RPC: garbage from the test server";

if (import.meta.main) {
  const options = serverOptions();
  const at = options.at || "start";
  const line = options.line || GARBAGE_LINE;
  const spew = () => void Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
  if (at === "start") {
    spew();
    // Then keep reading, answering nothing, until the client gives up on us.
    process.stdin.on("data", () => {});
  } else if (at === "initialize") {
    let answered = false;
    process.stdin.on("data", () => {
      if (!answered) spew();
      answered = true;
    });
  } else if (at === "call") {
    await serve(() => {
      const server = new McpServer({ name: "amber-test-garbage", version: "1.0.0" });
      server.registerTool("echo", {
        description: "Returns its text unchanged.",
        inputSchema: { text: z.string() },
      }, ({ text }) => ({ content: [{ type: "text", text }] }));
      server.registerTool("spew", {
        description: "Writes a line that is not JSON-RPC, then answers.",
      }, () => {
        spew();
        return { content: [{ type: "text", text: "spewed" }] };
      });
      return server;
    }, options);
  } else {
    throw new TypeError(`--at=${at}: expected start, initialize or call`);
  }
}
