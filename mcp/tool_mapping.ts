/**
 * An MCP server's tool as an amber {@linkcode Tool}: its name under the server's, its JSON Schema,
 * its annotations turned into approval, and its result turned into what the model reads.
 *
 * @module
 */

import type { JsonSchema, Tool, ToolCallContext, ToolResult } from "@amber/core";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolResultSchema,
  type Progress,
  type Tool as SdkTool,
} from "@modelcontextprotocol/sdk/types.js";
import { capText, emptyContent, renderBlock } from "./_content.ts";
import { requestError, withRequestSignal } from "./_request.ts";
import { mcpToolName } from "./server_config.ts";
import type { McpToolPolicy } from "./tool_policy.ts";

export { MCP_OUTPUT_CAP, type McpToolPolicy } from "./tool_policy.ts";

/**
 * The amber tool that calls `tool` on the server `server` through `client`.
 *
 * The name is `mcp__<server>__<tool>` (see `mcpToolName`); the description says which server it
 * comes from, with the tool's title; the parameters are the tool's `inputSchema` (an object
 * schema, without its top-level `$schema`; anything else becomes an empty object schema). A tool
 * the server marks `readOnlyHint` is read-only, and runs without approval only when
 * `policy.trustReadOnly` is set; every other call asks, and the summary of one the server marks
 * `destructiveHint` says so. A call is cancelled with the run (the SDK sends
 * `notifications/cancelled`), times out after `policy.timeoutMs` without an answer or a progress
 * notification, and reports progress as `3/10 message`. The result is
 * {@linkcode mcpToolResult}'s; a failed, cancelled or timed-out request is an error result.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { mcpTool, MCP_OUTPUT_CAP } from "./tool_mapping.ts";
 * const client = new Client({ name: "example", version: "1.0.0" });
 * const tool = mcpTool("docs", {
 *   name: "search",
 *   title: "Search the docs",
 *   inputSchema: { type: "object", properties: { query: { type: "string" } } },
 *   annotations: { readOnlyHint: true },
 * }, client, { trustReadOnly: true, timeoutMs: 60_000, outputCap: MCP_OUTPUT_CAP });
 * assert.equal(tool.name, "mcp__docs__search");
 * assert.equal(tool.readOnly, true);
 * assert.equal(await tool.requiresApproval?.({ query: "hooks" }), false);
 * assert.equal(tool.summarize?.({ query: "hooks" }), 'docs search {"query":"hooks"}');
 * ```
 */
export function mcpTool(
  server: string,
  tool: SdkTool,
  client: Client,
  policy: McpToolPolicy,
): Tool {
  const annotations = tool.annotations ?? {};
  const readOnly = annotations.readOnlyHint === true;
  const destructive = !readOnly && annotations.destructiveHint === true;
  const ask = !(readOnly && policy.trustReadOnly);
  return {
    name: mcpToolName(server, tool.name),
    description: describeTool(server, tool),
    parameters: inputSchema(tool.inputSchema),
    verb: "calling",
    readOnly,
    requiresApproval: () => ask,
    summarize: (args) =>
      `${destructive ? "(destructive) " : ""}${server} ${tool.name} ${briefArguments(args)}`,
    execute: (args, context) => callTool(client, tool, args, context, policy),
  };
}

/**
 * What the model reads of a `tools/call` result: the text blocks joined by newlines; the
 * structured content as JSON text when there is no text (and always in `data`); images in
 * `images`; a line for audio (left out), for each resource link (`resource: <uri> (<name>,
 * <mimeType>)`) and for an embedded blob; an embedded resource's text. Text over `outputCap`
 * characters is cut, and the cut stated. `isError` makes an error result with the same text. A
 * value that is not a tool result is an error result saying so, as is a result without
 * structured content from a `tool` that declares an output schema. (The SDK's client checks
 * structured content against the tool's `outputSchema` before this sees it.)
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpToolResult } from "./tool_mapping.ts";
 * const result = mcpToolResult({
 *   content: [
 *     { type: "text", text: "3 matches" },
 *     { type: "resource_link", uri: "file:///a.md", name: "a.md", mimeType: "text/markdown" },
 *   ],
 * }, 1000);
 * assert.deepEqual(result, {
 *   ok: true,
 *   output: "3 matches\nresource: file:///a.md (a.md, text/markdown)",
 * });
 * assert.equal(mcpToolResult({ content: [{ type: "text", text: "x".repeat(20) }] }, 8).output,
 *   "xxxxxxxx\n[output cut: 8 of 20 characters shown]");
 * ```
 */
export function mcpToolResult(result: unknown, outputCap: number, tool?: SdkTool): ToolResult {
  const parsed = CallToolResultSchema.safeParse(result);
  if (!parsed.success) {
    return failure(`the server's answer is not a tool result: ${parsed.error.message}`, outputCap);
  }
  const { content, structuredContent, isError } = parsed.data;
  if (tool?.outputSchema !== undefined && structuredContent === undefined && isError !== true) {
    return failure(
      `tool '${tool.name}' declares an output schema but returned no structured content`,
      outputCap,
    );
  }
  const rendered = emptyContent();
  for (const block of content) renderBlock(block, rendered, isError !== true);
  if (structuredContent !== undefined && rendered.texts === 0) {
    rendered.parts.unshift(JSON.stringify(structuredContent));
  }
  const text = rendered.parts.join("\n");
  if (isError === true) {
    return failure(text === "" ? "the tool failed and said nothing" : text, outputCap);
  }
  const { images } = rendered;
  const output = text !== ""
    ? capText(text, outputCap)
    : images.length > 0
    ? `(${images.length} image${images.length === 1 ? "" : "s"})`
    : "(no output)";
  return {
    ok: true,
    output,
    ...(structuredContent === undefined ? {} : { data: structuredContent }),
    ...(images.length === 0 ? {} : { images }),
  };
}

async function callTool(
  client: Client,
  tool: SdkTool,
  args: unknown,
  context: ToolCallContext,
  policy: McpToolPolicy,
): Promise<ToolResult> {
  const { signal } = context;
  if (signal.aborted) return failure("cancelled before the call was sent", policy.outputCap);
  try {
    const result = await withRequestSignal(signal, (own) =>
      client.callTool(
        { name: tool.name, arguments: argumentsOf(args) },
        CallToolResultSchema,
        {
          signal: own,
          timeout: policy.timeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: (progress) => context.progress?.(progressText(progress)),
        },
      ));
    // Checked once more (10-30 µs a result): the SDK's type admits the old `{ toolResult }` too.
    return mcpToolResult(result, policy.outputCap, tool);
  } catch (error) {
    return failure(requestError(error, policy.timeoutMs, signal), policy.outputCap);
  }
}

function failure(text: string, outputCap: number): ToolResult {
  return { ok: false, output: "", error: capText(text, outputCap) };
}

function describeTool(server: string, tool: SdkTool): string {
  const title = tool.title ?? tool.annotations?.title;
  const head = `MCP server '${server}', tool '${tool.name}'${
    title === undefined || title === "" ? "" : `: ${title}`
  }.`;
  const description = tool.description?.trim() ?? "";
  return description === "" ? head : `${head}\n${description}`;
}

// The schema the model fills in. A top-level `$schema` goes, as for converted Standard Schemas:
// several providers refuse the key. `properties` is added when absent, which changes nothing but
// is what some providers expect of an object.
function inputSchema(schema: unknown): JsonSchema {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return { type: "object", properties: {} };
  }
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  if (rest.type !== "object") return { type: "object", properties: {} };
  return "properties" in rest ? rest : { ...rest, properties: {} };
}

function argumentsOf(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null && !Array.isArray(args)
    ? args as Record<string, unknown>
    : {};
}

const SUMMARY_ARGUMENTS = 80;

function briefArguments(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args ?? {}) ?? "";
  } catch {
    text = String(args);
  }
  return text.length <= SUMMARY_ARGUMENTS ? text : `${text.slice(0, SUMMARY_ARGUMENTS - 3)}...`;
}

// A progress notification as the running tool line shows it: `3/10 message`, `3 message` when
// the server gives no total.
function progressText(progress: Progress): string {
  const count = progress.total === undefined
    ? `${progress.progress}`
    : `${progress.progress}/${progress.total}`;
  const message = progress.message?.trim() ?? "";
  return message === "" ? count : `${count} ${message}`;
}
