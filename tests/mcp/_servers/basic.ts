// A small, well-behaved MCP server for tests: tools `echo`, `add` (with structured output),
// `peek` (readOnlyHint), `sleep` (for timing), `count` (progress notifications) and `log`
// (a logging notification); the prompt `greet` with arguments; the resource `basic://readme` and
// the template `basic://notes/{id}`.
//
//   deno run -A tests/mcp/_servers/basic.ts [--http=PORT] [--name=NAME]
//
// It writes "basic: ready" to stderr once serving, so a test can see stderr reach the diagnostics.

// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { note, serve, type ServerOptions, serverOptions, sleep } from "./_serve.ts";

/** The text of `basic://readme`. */
export const README_TEXT = "basic test server: echo, add, peek, sleep, count, log";

/** Builds the server (one per session); `slow.ts` and the benchmarks reuse it. */
export function createBasicServer(options: ServerOptions = {}): McpServer {
  const server = new McpServer(
    { name: options.name || "amber-test-basic", version: "1.0.0" },
    { capabilities: { logging: {} } },
  );
  server.registerTool("echo", {
    description: "Returns its text unchanged.",
    inputSchema: { text: z.string().describe("What to echo") },
  }, ({ text }) => ({ content: [{ type: "text", text }] }));
  server.registerTool("add", {
    description: "Adds two numbers.",
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { sum: z.number() },
  }, ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
    structuredContent: { sum: a + b },
  }));
  server.registerTool("peek", {
    description: "Reports the server's name; changes nothing.",
    annotations: { readOnlyHint: true },
  }, () => ({ content: [{ type: "text", text: `peeked at ${options.name || "basic"}` }] }));
  server.registerTool("sleep", {
    description: "Waits the given milliseconds, then answers.",
    inputSchema: { ms: z.number().min(0) },
  }, async ({ ms }, extra) => {
    await sleep(ms, extra.signal);
    return { content: [{ type: "text", text: `slept ${ms} ms` }] };
  });
  server.registerTool("count", {
    description: "Counts to `steps`, sending a progress notification at each step.",
    inputSchema: { steps: z.number().int().min(1).max(100), ms: z.number().min(0).optional() },
  }, async ({ steps, ms }, extra) => {
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= steps; step++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: step, total: steps, message: `step ${step}` },
        });
      }
      // Waiting after each notification, the last one included, lets the client handle it
      // before the result arrives: the SDK's client drops progress that it reads in the same
      // chunk as the result (it handles notifications a microtask later), so give `ms` >= 20.
      await sleep(ms ?? 10, extra.signal);
    }
    return { content: [{ type: "text", text: `counted to ${steps}` }] };
  });
  server.registerTool("log", {
    description: "Sends its text as a logging notification (level warning).",
    inputSchema: { text: z.string() },
  }, async ({ text }) => {
    await server.sendLoggingMessage({ level: "warning", logger: "basic", data: text });
    return { content: [{ type: "text", text: "logged" }] };
  });
  server.registerPrompt("greet", {
    description: "Asks the model to greet someone.",
    argsSchema: { name: z.string(), style: z.string().optional() },
  }, ({ name, style }) => ({
    messages: [{
      role: "user",
      content: { type: "text", text: `Greet ${name}${style ? ` in a ${style} way` : ""}.` },
    }],
  }));
  server.registerResource("readme", "basic://readme", {
    description: "What this server offers.",
    mimeType: "text/plain",
  }, (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: README_TEXT }] }));
  server.registerResource(
    "note",
    new ResourceTemplate("basic://notes/{id}", { list: undefined }),
    { description: "A note by id.", mimeType: "text/plain" },
    (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: `note ${id}` }],
    }),
  );
  return server;
}

if (import.meta.main) {
  const options = serverOptions();
  await serve(() => createBasicServer(options), options);
  note("basic: ready");
}
