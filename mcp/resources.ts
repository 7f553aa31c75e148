/**
 * An MCP server's resources for the model and the user: a tool that lists them (with the
 * templates), a tool that reads one, and a hook that attaches the resources a prompt mentions as
 * `@<server>:<uri>`.
 *
 * @module
 */

import type {
  HookCapability,
  HookInput,
  HookReaction,
  Message,
  Tool,
  ToolResult,
} from "@amber/core";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  ErrorCode,
  McpError,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from "@modelcontextprotocol/sdk/types.js";
import { capText, emptyContent, type RenderedContent, renderResourceContents } from "./_content.ts";
import { requestError, withRequestSignal } from "./_request.ts";
import { mcpPluginId, mcpToolName } from "./server_config.ts";
import { MCP_MENTION } from "./mention.ts";
import { MCP_OUTPUT_CAP, type McpToolPolicy } from "./tool_policy.ts";

export { MCP_MENTION } from "./mention.ts";

// Pages of a listing fetched in one call at most; the rest is left to the next call's cursor.
const MAX_PAGES = 20;
// A listing's line at most: a long description is cut, so that lines add up to about the cap.
const MAX_LINE = 300;
// What every attachment message starts with: the hooks of other servers pass over it.
const ATTACHMENT_TAG = "<mcp_resource ";

/**
 * The resource tools of the server `server`: `mcp__<server>__list_resources` and
 * `mcp__<server>__read_resource`. Offer them only when the server has the resources capability.
 *
 * `list_resources` gives one line per resource (URI, name, title, type, description), then one
 * per resource template, following the server's pages until the lines reach `policy.outputCap`
 * characters (or 20 pages); when more remain, a last line gives the `cursor` to call again with,
 * which goes on from the first entry not shown. It is read-only and never asks.
 * `read_resource {uri}` gives the resource's text (cut at `policy.outputCap`, the cut stated); a
 * blob that is an image comes as an image, any other as a line with its type and size; several
 * contents are each headed by their URI. It is read-only and asks unless `policy.trustReadOnly`.
 * Both pass the run's signal and `policy.timeoutMs`; a failed request is an error result.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { mcpResourceTools } from "./resources.ts";
 * const client = new Client({ name: "example", version: "1.0.0" });
 * const policy = { trustReadOnly: false, timeoutMs: 60_000, outputCap: 30_000 };
 * const [list, read] = mcpResourceTools("docs", client, policy);
 * assert.deepEqual([list.name, read.name], ["mcp__docs__list_resources", "mcp__docs__read_resource"]);
 * assert.equal(await list.requiresApproval?.({}), false);
 * assert.equal(await read.requiresApproval?.({ uri: "guide://intro" }), true);
 * ```
 */
export function mcpResourceTools(
  server: string,
  client: Client,
  policy: McpToolPolicy,
): readonly Tool[] {
  const listName = mcpToolName(server, "list_resources");
  const readName = mcpToolName(server, "read_resource");
  const list: Tool = {
    name: listName,
    description: `List the resources of the MCP server '${server}' and its resource templates: ` +
      `URI, name, type and description. Read one with ${readName}; for a template, fill in ` +
      "its {placeholders} to make the URI. When a last line gives a cursor, call again with it " +
      "for the rest.",
    parameters: {
      type: "object",
      properties: {
        cursor: { type: "string", description: "Where the previous call stopped, if it said." },
      },
      additionalProperties: false,
    },
    verb: "listing",
    readOnly: true,
    requiresApproval: () => false,
    summarize: () => `${server} list resources`,
    execute: async (args, context) => {
      try {
        return await withRequestSignal(
          context.signal,
          (own) => listing(server, client, listName, cursorOf(args), own, policy),
        );
      } catch (error) {
        return failure(requestError(error, policy.timeoutMs, context.signal));
      }
    },
  };
  const read: Tool = {
    name: readName,
    description: `Read a resource of the MCP server '${server}' by its URI (one that ` +
      `${listName} gives, or a template's with its placeholders filled in). Returns its text; ` +
      "an image comes as an image.",
    parameters: {
      type: "object",
      properties: { uri: { type: "string", description: "The resource's URI." } },
      required: ["uri"],
      additionalProperties: false,
    },
    verb: "reading",
    readOnly: true,
    requiresApproval: () => !policy.trustReadOnly,
    summarize: (args) => `${server} read ${String(uriOf(args))}`,
    execute: async (args, context) => {
      const uri = String(uriOf(args));
      try {
        const result = await withRequestSignal(
          context.signal,
          (own) => client.readResource({ uri }, { signal: own, timeout: policy.timeoutMs }),
        );
        const rendered = renderContents(result, true);
        const text = rendered.parts.join("\n");
        return {
          ok: true,
          output: text !== ""
            ? capText(text, policy.outputCap)
            : rendered.images.length > 0
            ? `(${uri} is an image)`
            : `(${uri} is empty)`,
          ...(rendered.images.length === 0 ? {} : { images: rendered.images }),
        };
      } catch (error) {
        return failure(requestError(error, policy.timeoutMs, context.signal));
      }
    },
  };
  return [list, read];
}

/**
 * The hook that attaches what a prompt mentions: at `StepStart`, in the user messages since the
 * model last spoke (so each message once), it finds `@<server>:<uri>` mentions of this server
 * (its name in any case), reads each URI once (deadline `timeoutMs`, which should be under the
 * hook deadline, `timeouts.hook`), and adds one user message with an `<mcp_resource>` section per
 * URI: its text (cut at {@linkcode MCP_OUTPUT_CAP}), a line for a blob, or the read's error.
 * Messages it added are never searched again, by this hook or another server's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { mcpAttachmentHook } from "./resources.ts";
 * const hook = mcpAttachmentHook("docs", new Client({ name: "x", version: "1" }), 4_000);
 * assert.equal(hook.point, "StepStart");
 * const input = {
 *   point: "StepStart" as const,
 *   step: 0,
 *   transcript: [{ role: "user" as const, content: "no mention here" }],
 *   state: new Map(),
 * };
 * assert.deepEqual(await hook.run(input), {});
 * ```
 */
export function mcpAttachmentHook(
  server: string,
  client: Client,
  timeoutMs: number,
): HookCapability {
  return {
    kind: "hook",
    name: `${mcpPluginId(server)}.attachments`,
    point: "StepStart",
    run: async (input: HookInput): Promise<HookReaction> => {
      const uris = mentionedUris(input.transcript, server);
      if (uris.length === 0) return {};
      const sections = await Promise.all(
        uris.map((uri) => attachment(server, client, uri, timeoutMs)),
      );
      const message: Message = { role: "user", content: sections.join("\n\n") };
      return { messages: [message] };
    },
  };
}

async function listing(
  server: string,
  client: Client,
  listName: string,
  cursor: string | undefined,
  signal: AbortSignal,
  policy: McpToolPolicy,
): Promise<ToolResult> {
  const options = { signal, timeout: policy.timeoutMs };
  let position: ListPosition | undefined = { kind: "r", skip: 0 };
  if (cursor !== undefined) {
    position = parseCursor(cursor);
    if (position === undefined) {
      return failure(`'${cursor}' is not a cursor that ${listName} gave; call it without one`);
    }
  }
  const lines = { r: [] as string[], t: [] as string[] };
  let size = 0;
  let pages = 0;
  let more: string | undefined;
  // Whole pages are fetched; the lines past the cap are left for the next call, whose cursor
  // fetches the same page again and skips what this call showed.
  pageLoop: while (position !== undefined) {
    const { kind, page: at, skip }: ListPosition = position;
    const request = at === undefined ? {} : { cursor: at };
    let items: string[];
    let next: string | undefined;
    if (kind === "r") {
      const page = await client.listResources(request, options);
      items = page.resources.map(resourceLine);
      next = page.nextCursor;
    } else {
      try {
        const page = await client.listResourceTemplates(request, options);
        items = page.resourceTemplates.map(templateLine);
        next = page.nextCursor;
      } catch (error) {
        // A server with resources but no templates may not know the method at all.
        if (error instanceof McpError && error.code === ErrorCode.MethodNotFound) break;
        throw error;
      }
    }
    pages++;
    for (let index = skip; index < items.length; index++) {
      if (size > 0 && size >= policy.outputCap) {
        more = `${kind}${index}:${at ?? ""}`;
        break pageLoop;
      }
      lines[kind].push(items[index]);
      size += items[index].length + 1;
    }
    position = next !== undefined
      ? { kind, page: next, skip: 0 }
      : kind === "r"
      ? { kind: "t", skip: 0 }
      : undefined;
    if (position !== undefined && (size >= policy.outputCap || pages >= MAX_PAGES)) {
      more = `${position.kind}0:${position.page ?? ""}`;
      break;
    }
  }
  const out: string[] = [];
  if (lines.r.length > 0) out.push(`Resources of the MCP server '${server}':`, ...lines.r);
  if (lines.t.length > 0) {
    if (out.length > 0) out.push("");
    out.push("Resource templates (fill in the {placeholders} to make a URI):", ...lines.t);
  }
  if (out.length === 0) {
    out.push(
      cursor === undefined
        ? `The MCP server '${server}' lists no resources.`
        : "No more resources.",
    );
  }
  if (more !== undefined) {
    out.push("", `[more: call ${listName} with cursor "${more}" for the rest]`);
  }
  return { ok: true, output: out.join("\n") };
}

// Where a listing goes on: which list, the server's cursor of the page (none for the first), and
// how many of that page's entries were shown already.
interface ListPosition {
  readonly kind: "r" | "t";
  readonly page?: string;
  readonly skip: number;
}

// A cursor this tool gave: `r` (resources) or `t` (templates), the entries to skip, `:`, and the
// server's cursor of the page (empty for the first page).
function parseCursor(cursor: string): ListPosition | undefined {
  const match = /^([rt])(\d{1,9}):(.*)$/s.exec(cursor);
  if (match === null) return undefined;
  const kind = match[1] === "r" ? "r" : "t";
  return { kind, skip: Number(match[2]), ...(match[3] === "" ? {} : { page: match[3] }) };
}

function resourceLine(resource: Resource): string {
  return describedLine(
    resource.uri,
    resource.name,
    resource.title,
    resource.mimeType,
    resource.description,
  );
}

function templateLine(template: ResourceTemplate): string {
  return describedLine(
    template.uriTemplate,
    template.name,
    template.title,
    template.mimeType,
    template.description,
  );
}

function describedLine(
  uri: string,
  name: string,
  title: string | undefined,
  mimeType: string | undefined,
  description: string | undefined,
): string {
  const about = description?.trim().split("\n")[0] ?? "";
  const line = `${uri} - ${name}${title === undefined || title === name ? "" : ` "${title}"`}${
    mimeType === undefined ? "" : ` (${mimeType})`
  }${about === "" ? "" : `: ${about}`}`;
  return line.length <= MAX_LINE ? line : `${line.slice(0, MAX_LINE - 3)}...`;
}

function renderContents(result: ReadResourceResult, images: boolean): RenderedContent {
  const rendered = emptyContent();
  const many = result.contents.length > 1;
  for (const contents of result.contents) {
    if (many) {
      rendered.parts.push(
        `[${contents.uri}${contents.mimeType === undefined ? "" : ` (${contents.mimeType})`}]`,
      );
    }
    renderResourceContents(contents, rendered, images);
  }
  return rendered;
}

// The distinct URIs of this server that the newest user messages mention, in order of mention.
function mentionedUris(transcript: readonly Message[], server: string): string[] {
  let start = transcript.length;
  while (start > 0 && transcript[start - 1].role !== "assistant") start--;
  const name = server.toLowerCase();
  const uris = new Set<string>();
  for (const message of transcript.slice(start)) {
    if (message.role !== "user" || message.content.startsWith(ATTACHMENT_TAG)) continue;
    for (const match of message.content.matchAll(MCP_MENTION)) {
      const groups = match.groups ?? {};
      if (groups.server?.toLowerCase() === name && groups.uri !== undefined) uris.add(groups.uri);
    }
  }
  return [...uris];
}

async function attachment(
  server: string,
  client: Client,
  uri: string,
  timeoutMs: number,
): Promise<string> {
  const head = `${ATTACHMENT_TAG}server="${attribute(server)}" uri="${attribute(uri)}">`;
  let body: string;
  try {
    const result = await client.readResource({ uri }, { timeout: timeoutMs });
    body = capText(renderContents(result, false).parts.join("\n"), MCP_OUTPUT_CAP);
  } catch (error) {
    body = `[could not read it: ${requestError(error, timeoutMs)}]`;
  }
  return `${head}\n${body}\n</mcp_resource>`;
}

function attribute(value: string): string {
  return value.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");
}

function cursorOf(args: unknown): string | undefined {
  const cursor = typeof args === "object" && args !== null
    ? (args as { cursor?: unknown }).cursor
    : undefined;
  return typeof cursor === "string" && cursor !== "" ? cursor : undefined;
}

function uriOf(args: unknown): unknown {
  return typeof args === "object" && args !== null ? (args as { uri?: unknown }).uri : undefined;
}

function failure(error: string): ToolResult {
  return { ok: false, output: "", error };
}
