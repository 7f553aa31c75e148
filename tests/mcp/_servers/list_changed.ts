// An MCP server whose lists change while connected, written on the SDK's low-level `Server` so
// that a list can also be made to fail. Tools: `grow` adds a tool `extra_N` (or, with
// `kind: "prompt"` / `"resource"`, a prompt `extra_N` / a resource `list://extra/N`) and sends the
// matching notifications/*/list_changed; `shrink` removes the newest extra tool; `break` makes
// every list request fail from then on (then sends tools/list_changed), `mend` undoes that.
// `--every=MS` grows a tool on a timer as well. `extra_N` tools answer "extra N: <text>".
//
//   deno run -A tests/mcp/_servers/list_changed.ts [--every=MS] [--http=PORT]

// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { note, numberOption, serve, serverOptions } from "./_serve.ts";

const FIXED: readonly Tool[] = [
  {
    name: "grow",
    description: "Adds a tool (or a prompt or resource) and says the list changed.",
    inputSchema: {
      type: "object",
      properties: { kind: { type: "string", enum: ["tool", "prompt", "resource"] } },
    },
  },
  {
    name: "shrink",
    description: "Removes the newest extra tool.",
    inputSchema: { type: "object" },
  },
  { name: "break", description: "Makes every list request fail.", inputSchema: { type: "object" } },
  { name: "mend", description: "Makes list requests work again.", inputSchema: { type: "object" } },
];

/** Builds one session's server; its lists start with the fixed tools, one prompt, one resource. */
function create(): Server {
  const server = new Server({ name: "amber-test-list-changed", version: "1.0.0" }, {
    capabilities: {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true },
    },
  });
  const tools: number[] = [];
  const prompts: number[] = [0];
  const resources: number[] = [0];
  let next = 1;
  let broken = false;
  const listable = () => {
    if (broken) throw new McpError(-32603, "lists are broken (the break tool was called)");
  };

  const grow = async (kind: string): Promise<string> => {
    const n = next++;
    if (kind === "prompt") {
      prompts.push(n);
      await server.sendPromptListChanged();
    } else if (kind === "resource") {
      resources.push(n);
      await server.sendResourceListChanged();
    } else {
      tools.push(n);
      await server.sendToolListChanged();
    }
    return `added ${kind} extra_${n}`;
  };

  server.setRequestHandler(ListToolsRequestSchema, () => {
    listable();
    return {
      tools: [
        ...FIXED,
        ...tools.map((n): Tool => ({
          name: `extra_${n}`,
          description: `Extra tool number ${n}.`,
          inputSchema: { type: "object", properties: { text: { type: "string" } } },
        })),
      ],
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const text = (name: string) => ({ content: [{ type: "text" as const, text: name }] });
    switch (params.name) {
      case "grow":
        return text(await grow(String(params.arguments?.kind ?? "tool")));
      case "shrink": {
        const n = tools.pop();
        await server.sendToolListChanged();
        return text(n === undefined ? "nothing to remove" : `removed extra_${n}`);
      }
      case "break":
        broken = true;
        await server.sendToolListChanged();
        return text("lists broken");
      case "mend":
        broken = false;
        await server.sendToolListChanged();
        return text("lists mended");
    }
    const n = Number(/^extra_(\d+)$/.exec(params.name)?.[1]);
    if (!tools.includes(n)) {
      return { isError: true, content: [{ type: "text", text: `no tool ${params.name}` }] };
    }
    return text(`extra ${n}: ${String(params.arguments?.text ?? "")}`);
  });
  server.setRequestHandler(ListPromptsRequestSchema, () => {
    listable();
    return {
      prompts: prompts.map((n) => ({
        name: n === 0 ? "base" : `extra_${n}`,
        description: `Prompt number ${n}.`,
      })),
    };
  });
  server.setRequestHandler(GetPromptRequestSchema, ({ params }) => ({
    messages: [{ role: "user", content: { type: "text", text: `prompt ${params.name}` } }],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, () => {
    listable();
    return {
      resources: resources.map((n) => ({
        uri: n === 0 ? "list://base" : `list://extra/${n}`,
        name: n === 0 ? "base" : `extra_${n}`,
        mimeType: "text/plain",
      })),
    };
  });
  server.setRequestHandler(ReadResourceRequestSchema, ({ params }) => ({
    contents: [{ uri: params.uri, mimeType: "text/plain", text: `resource ${params.uri}` }],
  }));

  const every = numberOption(options, "every", 0);
  if (every > 0) {
    const timer = setInterval(() => grow("tool").catch(() => clearInterval(timer)), every);
    server.onclose = () => clearInterval(timer);
  }
  return server;
}

const options = serverOptions();
await serve(create, options);
note("list_changed: ready");
