// An MCP server in this process (the SDK's McpServer over its in-memory transport) with one of
// each kind of content the mapping of tools, prompts and resources has to handle, and a client
// connected to it. The server records the cancellations it sees, so a test can tell that a
// cancel reached it.

// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type JSONRPCMessage,
  ListResourcesRequestSchema,
  type Resource,
  type Tool as SdkTool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/** A 1x1 PNG, base64. */
export const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** The static resources, in the order the server lists them. */
export const RESOURCES: readonly Resource[] = [
  { uri: "memo://readme", name: "readme", mimeType: "text/plain", description: "About memo." },
  { uri: "memo://logo.png", name: "logo", mimeType: "image/png" },
  { uri: "memo://data.bin", name: "data", mimeType: "application/octet-stream" },
  { uri: "memo://broken", name: "broken", mimeType: "text/plain" },
  { uri: "memo://notes/1", name: "note 1", title: "The first note", mimeType: "text/plain" },
];

/** The text of `memo://readme`. */
export const README = "memo: a server with one of everything";

/** What a test sees of the server and its client. */
export interface FeatureServer {
  /** The connected client; its tool list is read, so the SDK checks structured output. */
  readonly client: Client;
  /** The server's tools as `tools/list` gave them, by name. */
  readonly tools: ReadonlyMap<string, SdkTool>;
  /** The ids of the requests the server saw cancelled, and the reason it was given. */
  readonly cancelled: string[];
  /** The method of every request and notification the server received, in order. */
  readonly received: string[];
  /** The arguments each prompt was asked with, in order. */
  readonly promptCalls: { readonly name: string; readonly args: Record<string, unknown> }[];
  /** Closes both ends. */
  close(): Promise<void>;
}

/** Options of {@linkcode featureServer}. */
export interface FeatureServerOptions {
  /** How many resources a `resources/list` page holds. */
  readonly pageSize?: number;
}

/** Starts the server and connects a client to it. */
export async function featureServer(options: FeatureServerOptions = {}): Promise<FeatureServer> {
  const cancelled: string[] = [];
  const promptCalls: { name: string; args: Record<string, unknown> }[] = [];
  const server = new McpServer({ name: "memo", version: "1.2.3" });
  registerTools(server, cancelled);
  registerPrompts(server, promptCalls);
  registerResources(server, options.pageSize ?? 100);

  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  // The server lies about `bad_stats`: its list gives an output schema the tool does not keep,
  // which only the client's check can catch (McpServer would check a schema it knew of).
  const send = serverSide.send.bind(serverSide);
  serverSide.send = (message, sendOptions) => send(withBadSchema(message), sendOptions);
  await server.connect(serverSide);
  const received: string[] = [];
  const onmessage = serverSide.onmessage;
  serverSide.onmessage = (message, extra) => {
    if ("method" in message) received.push(message.method);
    onmessage?.(message, extra);
  };
  const client = new Client({ name: "amber-test", version: "1.0.0" });
  await client.connect(clientSide);
  const { tools } = await client.listTools();
  return {
    client,
    tools: new Map(tools.map((tool) => [tool.name, tool])),
    cancelled,
    received,
    promptCalls,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

function withBadSchema(message: JSONRPCMessage): JSONRPCMessage {
  if (!("result" in message)) return message;
  const tools = (message.result as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return message;
  const lied = tools.map((tool: SdkTool) =>
    tool.name === "bad_stats"
      ? {
        ...tool,
        outputSchema: {
          type: "object",
          properties: { count: { type: "number" } },
          required: ["count"],
        },
      }
      : tool
  );
  return { ...message, result: { ...message.result, tools: lied } };
}

function waitForAbort(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

function registerTools(server: McpServer, cancelled: string[]): void {
  server.registerTool("echo", {
    title: "Echo",
    description: "Returns its text.",
    inputSchema: { text: z.string() },
  }, ({ text }) => ({ content: [{ type: "text", text }] }));
  server.registerTool("stats", {
    description: "Counts, as structured content only.",
    outputSchema: { count: z.number() },
  }, () => ({ content: [], structuredContent: { count: 3 } }));
  server.registerTool("stats_text", {
    description: "Counts, as text and structured content.",
    outputSchema: { count: z.number() },
  }, () => ({ content: [{ type: "text", text: "three" }], structuredContent: { count: 3 } }));
  server.registerTool("bad_stats", {
    description: "Counts, but not as its listed output schema says.",
  }, () => ({ content: [], structuredContent: { count: "many" } }));
  server.registerTool("snapshot", {
    description: "A picture with a caption.",
    annotations: { readOnlyHint: true },
  }, () => ({
    content: [
      { type: "text", text: "a dot" },
      { type: "image", mimeType: "image/png", data: PNG },
    ],
  }));
  server.registerTool("mixed", {
    description: "One of each other kind of block.",
  }, () => ({
    content: [
      { type: "audio", mimeType: "audio/wav", data: "UklGRg==" },
      {
        type: "resource_link",
        uri: "memo://notes/1",
        name: "note 1",
        mimeType: "text/plain",
      },
      { type: "resource_link", uri: "memo://x", name: "x" },
      { type: "resource", resource: { uri: "memo://readme", text: README } },
      {
        type: "resource",
        resource: { uri: "memo://data.bin", mimeType: "application/zip", blob: "AAAA" },
      },
    ],
  }));
  server.registerTool("fail", {
    description: "Always fails.",
    annotations: { destructiveHint: true },
  }, () => ({ content: [{ type: "text", text: "disk is full" }], isError: true }));
  server.registerTool("big", {
    description: "Returns `size` characters.",
    inputSchema: { size: z.number().int() },
  }, ({ size }) => ({ content: [{ type: "text", text: "y".repeat(size) }] }));
  server.registerTool("slow", {
    description: "Reports progress `steps` times, `ms` apart, then answers.",
    inputSchema: { steps: z.number().int(), ms: z.number(), total: z.boolean().optional() },
  }, async ({ steps, ms, total }, extra) => {
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= steps; step++) {
      await waitForAbort(extra.signal, ms);
      if (token === undefined) continue;
      await extra.sendNotification({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: step,
          ...(total === false ? {} : { total: steps }),
          message: `step ${step}`,
        },
      });
    }
    return { content: [{ type: "text", text: `done after ${steps} steps` }] };
  });
  server.registerTool("wait", {
    description: "Waits until it is cancelled (at most 10 s).",
  }, async (extra) => {
    extra.signal.addEventListener("abort", () => {
      cancelled.push(`${extra.requestId}: ${String(extra.signal.reason)}`);
    }, { once: true });
    await waitForAbort(extra.signal, 10_000);
    return { content: [{ type: "text", text: "never cancelled" }] };
  });
}

function registerPrompts(
  server: McpServer,
  calls: { name: string; args: Record<string, unknown> }[],
): void {
  server.registerPrompt("greet", {
    description: "Greets someone.",
    argsSchema: {
      name: z.string().describe("Who to greet"),
      style: z.string().optional().describe("How"),
    },
  }, (args) => {
    calls.push({ name: "greet", args });
    const { name, style } = args;
    return {
      messages: [{
        role: "user",
        content: { type: "text", text: `Greet ${name}${style ? ` in a ${style} way` : ""}.` },
      }],
    };
  });
  server.registerPrompt("review", {
    description: "Reviews a file, with the readme attached.",
    argsSchema: { file: z.string(), focus: z.string(), depth: z.string().optional() },
  }, (args) => {
    calls.push({ name: "review", args });
    return {
      messages: [
        { role: "user", content: { type: "text", text: `Review ${args.file} for ${args.focus}.` } },
        {
          role: "user",
          content: { type: "resource", resource: { uri: "memo://readme", text: README } },
        },
        { role: "user", content: { type: "image", mimeType: "image/png", data: PNG } },
      ],
    };
  });
  server.registerPrompt("chat", {
    description: "A conversation to go on from.",
  }, () => ({
    messages: [
      { role: "user", content: { type: "text", text: "What is memo?" } },
      { role: "assistant", content: { type: "text", text: "A test server." } },
      { role: "user", content: { type: "text", text: "Say more." } },
    ],
  }));
}

function registerResources(server: McpServer, pageSize: number): void {
  server.registerResource("readme", "memo://readme", { mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: README }],
  }));
  server.registerResource("logo", "memo://logo.png", { mimeType: "image/png" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }],
  }));
  server.registerResource("data", "memo://data.bin", {}, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "application/octet-stream", blob: "AAECAwQF" }],
  }));
  server.registerResource("broken", "memo://broken", {}, () => {
    throw new Error("the disk is gone");
  });
  server.registerResource(
    "notes",
    new ResourceTemplate("memo://notes/{id}", { list: undefined }),
    { description: "A note by id.", mimeType: "text/plain" },
    (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: `note ${id}` }],
    }),
  );
  // Pages of `pageSize`, so that a test can see the listing follow the cursor.
  server.server.setRequestHandler(ListResourcesRequestSchema, (request) => {
    const start = Number(request.params?.cursor ?? "0");
    const end = start + pageSize;
    return {
      resources: RESOURCES.slice(start, end),
      ...(end < RESOURCES.length ? { nextCursor: String(end) } : {}),
    };
  });
}
