// An MCP server that stops answering. `--at=initialize`: reads every request and never answers
// one (not even initialize). `--at=call` (the default): a normal server whose `wait` tool never
// returns, not even when cancelled; `echo` answers. `--ignore-term` also ignores SIGTERM (and
// SIGINT), so only SIGKILL (or its process group's) ends it, as a stuck server would need.
//
//   deno run -A tests/mcp/_servers/hang.ts [--at=initialize|call] [--ignore-term] [--http=PORT]

import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { note, serve, serverOptions } from "./_serve.ts";

const options = serverOptions();
const at = options.at || "call";

if (options["ignore-term"] !== undefined) {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => note(`hang: ${signal} ignored`));
  }
}
// A stuck server does not notice its input closing either.
setInterval(() => {}, 60_000);

if (at === "initialize") {
  // Drain stdin so the client's writes never block, and answer nothing.
  process.stdin.on("data", () => {});
  note("hang: reading requests, answering none");
} else if (at === "call") {
  await serve(() => {
    const server = new McpServer({ name: "amber-test-hang", version: "1.0.0" });
    server.registerTool("echo", {
      description: "Returns its text unchanged.",
      inputSchema: { text: z.string() },
    }, ({ text }) => ({ content: [{ type: "text", text }] }));
    server.registerTool("wait", {
      description: "Never returns.",
    }, () => new Promise<never>(() => {}));
    return server;
  }, options);
  // serve() ends the process when stdin closes; a stuck server would not.
  process.stdin.removeAllListeners("end");
  note("hang: serving; wait never returns");
} else {
  throw new TypeError(`--at=${at}: expected initialize or call`);
}
