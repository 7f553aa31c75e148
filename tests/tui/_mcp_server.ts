// An MCP server for the interactive session's tests: the `basic` test server (tests/mcp/_servers)
// with two tools that ask the client back: `ask_model` sends a sampling request and answers with
// what the model said (or the error), `ask_user` sends an elicitation for a name and a colour and
// answers with the action and content.
//
//   deno run -A tests/tui/_mcp_server.ts

// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { createBasicServer } from "../mcp/_servers/basic.ts";
import { note, serve, serverOptions } from "../mcp/_servers/_serve.ts";

function createServer(): McpServer {
  const server = createBasicServer({ name: "tui" });
  server.registerTool("ask_model", {
    description: "Asks the client's model a question (sampling) and returns its answer.",
    inputSchema: { question: z.string() },
  }, async ({ question }) => {
    try {
      const answer = await server.server.createMessage({
        messages: [{ role: "user", content: { type: "text", text: question } }],
        systemPrompt: "You answer for an MCP server.",
        maxTokens: 100,
      });
      const text = answer.content.type === "text" ? answer.content.text : answer.content.type;
      return { content: [{ type: "text", text: `the model said: ${text}` }] };
    } catch (error) {
      return {
        content: [{ type: "text", text: `sampling failed: ${(error as Error).message}` }],
        isError: true,
      };
    }
  });
  server.registerTool("ask_user", {
    description: "Asks the user for a name and a colour (elicitation).",
  }, async () => {
    try {
      const answer = await server.server.elicitInput({
        message: "Who is asking?",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", title: "Your name" },
            colour: { type: "string", enum: ["red", "green"] },
          },
          required: ["name"],
        },
      });
      return {
        content: [{
          type: "text",
          text: `elicited ${answer.action} ${JSON.stringify(answer.content ?? {})}`,
        }],
      };
    } catch (error) {
      return {
        content: [{ type: "text", text: `elicitation failed: ${(error as Error).message}` }],
        isError: true,
      };
    }
  });
  return server;
}

if (import.meta.main) {
  await serve(createServer, serverOptions());
  note("tui: ready");
}
