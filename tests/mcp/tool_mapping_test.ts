import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { Tool, ToolResult } from "@amber/core";
import { createToolRegistry } from "@amber/registries/tools";
import {
  MCP_OUTPUT_CAP,
  mcpTool,
  type McpToolPolicy,
  mcpToolResult,
} from "../../mcp/tool_mapping.ts";
import { contributionOf, services } from "../registries/_fixtures.ts";
import { type FeatureServer, featureServer, PNG, README } from "./_feature_server.ts";

const POLICY: McpToolPolicy = { trustReadOnly: false, timeoutMs: 5_000, outputCap: MCP_OUTPUT_CAP };

function toolOf(server: FeatureServer, name: string, policy: Partial<McpToolPolicy> = {}): Tool {
  const tool = server.tools.get(name);
  if (tool === undefined) throw new Error(`the server has no tool ${name}`);
  return mcpTool("memo", tool, server.client, { ...POLICY, ...policy });
}

async function call(
  server: FeatureServer,
  name: string,
  args: unknown = {},
  policy: Partial<McpToolPolicy> = {},
): Promise<ToolResult> {
  return await toolOf(server, name, policy).execute(args, { signal: new AbortController().signal });
}

async function withServer(test: (server: FeatureServer) => Promise<void>): Promise<void> {
  const server = await featureServer();
  try {
    await test(server);
  } finally {
    await server.close();
  }
}

Deno.test("mcpTool: the name, description and schema the model sees", () =>
  withServer(async (server) => {
    const echo = toolOf(server, "echo");
    strictEqual(echo.name, "mcp__memo__echo");
    strictEqual(echo.description, "MCP server 'memo', tool 'echo': Echo.\nReturns its text.");
    strictEqual(echo.verb, "calling");
    const schema = echo.parameters as Record<string, unknown>;
    strictEqual(schema.$schema, undefined, "the dialect key is not sent to providers");
    deepStrictEqual(schema.type, "object");
    deepStrictEqual(schema.properties, { text: { type: "string" } });
    deepStrictEqual(schema.required, ["text"]);
    // The registry takes the schema and holds the model's arguments to it.
    const registry = createToolRegistry();
    contributionOf(
      registry.install(
        "mcp.memo",
        { kind: "tool", name: "memo", tools: [echo] },
        services("mcp.memo"),
      ),
    );
    deepStrictEqual(await registry.execute("mcp__memo__echo", '{"text":"hi"}'), {
      ok: true,
      output: "hi",
    });
    const wrong = await registry.execute("mcp__memo__echo", '{"text":5}');
    strictEqual(wrong.ok, false);
    match(wrong.error ?? "", /text/);
  }));

Deno.test("mcpTool: a missing or broken input schema becomes an empty object schema", () => {
  const bare = { name: "x", inputSchema: { type: "object" as const } };
  const client = undefined as never;
  deepStrictEqual(mcpTool("s", bare, client, POLICY).parameters, {
    type: "object",
    properties: {},
  });
  const broken = { name: "x", inputSchema: { type: "string" } } as never;
  deepStrictEqual(mcpTool("s", broken, client, POLICY).parameters, {
    type: "object",
    properties: {},
  });
  const missing = { name: "x" } as never;
  deepStrictEqual(mcpTool("s", missing, client, POLICY).parameters, {
    type: "object",
    properties: {},
  });
  strictEqual(mcpTool("s", bare, client, POLICY).description, "MCP server 's', tool 'x'.");
});

Deno.test("mcpTool: only a read-only tool under trustReadOnly runs without asking", () =>
  withServer(async (server) => {
    const snapshot = toolOf(server, "snapshot");
    strictEqual(snapshot.readOnly, true);
    strictEqual(await snapshot.requiresApproval?.({}), true, "asks unless trusted");
    strictEqual(
      await toolOf(server, "snapshot", { trustReadOnly: true }).requiresApproval?.({}),
      false,
    );
    const echo = toolOf(server, "echo", { trustReadOnly: true });
    strictEqual(echo.readOnly, false);
    strictEqual(await echo.requiresApproval?.({ text: "x" }), true);
    strictEqual(await toolOf(server, "fail", { trustReadOnly: true }).requiresApproval?.({}), true);
  }));

Deno.test("mcpTool: the summary shows the arguments briefly and says destructive", () =>
  withServer((server) => {
    strictEqual(
      toolOf(server, "echo").summarize?.({ text: "hello" }),
      'memo echo {"text":"hello"}',
    );
    strictEqual(toolOf(server, "fail").summarize?.({}), "(destructive) memo fail {}");
    const long = toolOf(server, "echo").summarize?.({ text: "z".repeat(500) }) ?? "";
    ok(long.length < 120, long);
    ok(long.endsWith("..."));
    return Promise.resolve();
  }));

Deno.test("mcpTool: text, structured content and images reach the model", () =>
  withServer(async (server) => {
    deepStrictEqual(await call(server, "echo", { text: "hello" }), { ok: true, output: "hello" });
    // Structured content alone: its JSON is the text; `data` keeps the value either way.
    deepStrictEqual(await call(server, "stats"), {
      ok: true,
      output: '{"count":3}',
      data: { count: 3 },
    });
    deepStrictEqual(await call(server, "stats_text"), {
      ok: true,
      output: "three",
      data: { count: 3 },
    });
    deepStrictEqual(await call(server, "snapshot"), {
      ok: true,
      output: "a dot",
      images: [{ mimeType: "image/png", data: PNG }],
    });
  }));

Deno.test("mcpTool: structured content that breaks the listed output schema is an error", () =>
  withServer(async (server) => {
    const result = await call(server, "bad_stats");
    strictEqual(result.ok, false);
    match(result.error ?? "", /output schema/);
  }));

Deno.test("mcpTool: audio, links and embedded resources become lines the model reads", () =>
  withServer(async (server) => {
    deepStrictEqual(await call(server, "mixed"), {
      ok: true,
      output: [
        "[audio/wav audio, 4 bytes, left out: amber sends no audio to the model]",
        "resource: memo://notes/1 (note 1, text/plain)",
        "resource: memo://x (x)",
        README,
        "[memo://data.bin: application/zip data, 3 bytes, not shown]",
      ].join("\n"),
    });
  }));

Deno.test("mcpTool: isError is an error result with the server's text", () =>
  withServer(async (server) => {
    deepStrictEqual(await call(server, "fail"), { ok: false, output: "", error: "disk is full" });
  }));

Deno.test("mcpTool: output over the cap is cut and the cut stated", () =>
  withServer(async (server) => {
    const result = await call(server, "big", { size: 250 }, { outputCap: 100 });
    strictEqual(result.output, `${"y".repeat(100)}\n[output cut: 100 of 250 characters shown]`);
    strictEqual(
      (await call(server, "big", { size: 100 }, { outputCap: 100 })).output,
      "y".repeat(100),
    );
  }));

Deno.test("mcpTool: progress shows as 3/10 message and keeps a long call alive", () =>
  withServer(async (server) => {
    const seen: string[] = [];
    const tool = toolOf(server, "slow", { timeoutMs: 300 });
    // 5 steps of 120 ms: twice the timeout in all, never 300 ms without progress.
    const result = await tool.execute({ steps: 5, ms: 120 }, {
      signal: new AbortController().signal,
      progress: (message) => seen.push(message),
    });
    deepStrictEqual(result, { ok: true, output: "done after 5 steps" });
    deepStrictEqual(seen, ["1/5 step 1", "2/5 step 2", "3/5 step 3", "4/5 step 4", "5/5 step 5"]);
    const untotalled: string[] = [];
    await tool.execute({ steps: 2, ms: 1, total: false }, {
      signal: new AbortController().signal,
      progress: (message) => untotalled.push(message),
    });
    deepStrictEqual(untotalled, ["1 step 1", "2 step 2"]);
  }));

Deno.test("mcpTool: a call with no answer times out, and the server is told", () =>
  withServer(async (server) => {
    const result = await call(server, "wait", {}, { timeoutMs: 100 });
    deepStrictEqual(result, {
      ok: false,
      output: "",
      error: "timed out: the server did not answer (or report progress) within 100 ms",
    });
    await until(() => server.cancelled.length === 1);
  }));

Deno.test("mcpTool: cancelling the run cancels the call on the server", () =>
  withServer(async (server) => {
    const controller = new AbortController();
    const running = toolOf(server, "wait").execute({}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    deepStrictEqual(await running, {
      ok: false,
      output: "",
      error: "cancelled: the server was told to stop",
    });
    await until(() => server.cancelled.length === 1);
    const before = await toolOf(server, "echo").execute({ text: "x" }, {
      signal: controller.signal,
    });
    strictEqual(before.error, "cancelled before the call was sent");
  }));

Deno.test("mcpTool: calls that share the run's signal leave nothing on it", () =>
  withServer(async (server) => {
    const controller = new AbortController();
    const echo = toolOf(server, "echo");
    for (let call = 0; call < 5; call++) {
      await echo.execute({ text: String(call) }, { signal: controller.signal });
    }
    // The SDK listens on a request's signal for good: had it been the run's, this cancel would
    // tell the server that each of the five finished calls was cancelled.
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    deepStrictEqual(server.received.filter((method) => method === "notifications/cancelled"), []);
    strictEqual(server.received.filter((method) => method === "tools/call").length, 5);
  }));

Deno.test("mcpToolResult: what is not a tool result is an error saying so", () => {
  const garbage = mcpToolResult({ content: "text" }, MCP_OUTPUT_CAP);
  strictEqual(garbage.ok, false);
  match(garbage.error ?? "", /not a tool result/);
  const declared = {
    name: "stats",
    inputSchema: { type: "object" as const },
    outputSchema: { type: "object" as const },
  };
  const missing = mcpToolResult(
    { content: [{ type: "text", text: "3" }] },
    MCP_OUTPUT_CAP,
    declared,
  );
  deepStrictEqual(missing, {
    ok: false,
    output: "",
    error: "tool 'stats' declares an output schema but returned no structured content",
  });
  deepStrictEqual(mcpToolResult({ content: [] }, MCP_OUTPUT_CAP), {
    ok: true,
    output: "(no output)",
  });
  deepStrictEqual(
    mcpToolResult({ content: [{ type: "image", mimeType: "image/png", data: PNG }] }, 10),
    {
      ok: true,
      output: "(1 image)",
      images: [{ mimeType: "image/png", data: PNG }],
    },
  );
  const bmp = mcpToolResult(
    { content: [{ type: "image", mimeType: "image/bmp", data: "AAAA" }] },
    100,
  );
  deepStrictEqual(bmp, {
    ok: true,
    output: "[image: image/bmp, 3 bytes, left out: a type amber does not send]",
  });
});

async function until(condition: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("the condition did not hold in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
