/**
 * How amber's tool calls look to an ACP editor: the kind of each tool (so the editor picks an
 * icon and a way to show it), the files a call touches (so it can follow along), and the
 * `tool_call` / `tool_call_update` notifications for a call's start, streamed output and end.
 * An edit's result carries the file's text before and after; the editor gets it as a diff.
 *
 * @module
 */

import type {
  SessionUpdate,
  ToolCallContent,
  ToolCallLocation,
  ToolKind,
} from "@agentclientprotocol/sdk";
import type { ToolCall, ToolResult } from "@amber/core";

// Tools not named here (a plugin's, an MCP server's) are `other`.
const KINDS: Readonly<Record<string, ToolKind>> = {
  read: "read",
  edit: "edit",
  write: "edit",
  bash: "execute",
  process: "execute",
  search: "search",
  grep: "search",
  glob: "search",
  fetch: "fetch",
  webfetch: "fetch",
  todowrite: "think",
  task: "think",
};

// Argument names that hold a file the call touches.
const PATH_KEYS = ["path", "file", "file_path", "filePath"] as const;

/**
 * The ACP kind of the tool named `name`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolKind } from "./tool_calls.ts";
 * assert.equal(toolKind("edit"), "edit");
 * assert.equal(toolKind("bash"), "execute");
 * assert.equal(toolKind("mcp__docs__lookup"), "other");
 * ```
 */
export function toolKind(name: string): ToolKind {
  return Object.hasOwn(KINDS, name) ? KINDS[name] : "other";
}

/**
 * The files a call names in its arguments (the JSON text the model produced), resolved against
 * the workspace `cwd` since ACP locations are absolute paths; none when the text is not an
 * object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolLocations } from "./tool_calls.ts";
 * assert.deepEqual(toolLocations('{"path":"src/a.ts"}', "/work"), [{ path: "/work/src/a.ts" }]);
 * assert.deepEqual(toolLocations("not json", "/work"), []);
 * ```
 */
export function toolLocations(argumentsText: string, cwd: string): ToolCallLocation[] {
  let args: unknown;
  try {
    args = JSON.parse(argumentsText);
  } catch {
    return [];
  }
  if (typeof args !== "object" || args === null) return [];
  const record = args as Record<string, unknown>;
  return PATH_KEYS.flatMap((key) => {
    const value = record[key];
    return typeof value === "string" && value !== "" ? [{ path: absolute(value, cwd) }] : [];
  });
}

/**
 * The `tool_call` notification for a call about to run: in progress, with its kind, its
 * one-line summary as the title and the files it names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolCallStarted } from "./tool_calls.ts";
 * const call = { id: "c1", name: "read", arguments: '{"path":"a.txt"}' };
 * const update = toolCallStarted(call, "read a.txt", "/w");
 * assert.equal(update.sessionUpdate, "tool_call");
 * assert.deepEqual(update.sessionUpdate === "tool_call" && update.locations, [{ path: "/w/a.txt" }]);
 * ```
 */
export function toolCallStarted(call: ToolCall, summary: string, cwd: string): SessionUpdate {
  return {
    sessionUpdate: "tool_call",
    toolCallId: call.id,
    title: summary === "" ? call.name : summary,
    kind: toolKind(call.name),
    status: "in_progress",
    locations: toolLocations(call.arguments, cwd),
    rawInput: parseArguments(call.arguments),
  };
}

/**
 * The `tool_call_update` for a chunk of a running call's output (a command's stdout).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolCallOutput } from "./tool_calls.ts";
 * const update = toolCallOutput({ id: "c1", name: "bash", arguments: "{}" }, "hi\n");
 * assert.deepEqual(update, {
 *   sessionUpdate: "tool_call_update",
 *   toolCallId: "c1",
 *   content: [{ type: "content", content: { type: "text", text: "hi\n" } }],
 * });
 * ```
 */
export function toolCallOutput(call: ToolCall, chunk: string): SessionUpdate {
  return { sessionUpdate: "tool_call_update", toolCallId: call.id, content: [text(chunk)] };
}

/**
 * The `tool_call_update` for a call that ended: completed or failed, the editor terminals it ran
 * commands in (`terminalIds`: the update replaces the row's content, and a terminal must not
 * vanish from it when the call ends), its output (or error) as text, and, when it changed a
 * file, the change as a diff.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolCallEnded } from "./tool_calls.ts";
 * const call = { id: "c1", name: "edit", arguments: '{"path":"a.txt"}' };
 * const change = { path: "a.txt", before: "one\n", after: "two\n" };
 * const update = toolCallEnded(call, { ok: true, output: "edited a.txt", change }, "/w");
 * assert.equal(update.sessionUpdate === "tool_call_update" && update.status, "completed");
 * assert.deepEqual(update.sessionUpdate === "tool_call_update" && update.content?.[1], {
 *   type: "diff",
 *   path: "/w/a.txt",
 *   oldText: "one\n",
 *   newText: "two\n",
 * });
 * const bash = { id: "c2", name: "bash", arguments: '{"command":"make"}' };
 * const ran = toolCallEnded(bash, { ok: true, output: "built" }, "/w", ["term-1"]);
 * assert.deepEqual(ran.sessionUpdate === "tool_call_update" && ran.content, [
 *   { type: "terminal", terminalId: "term-1" },
 *   { type: "content", content: { type: "text", text: "built" } },
 * ]);
 * ```
 */
export function toolCallEnded(
  call: ToolCall,
  result: ToolResult,
  cwd: string,
  terminalIds: readonly string[] = [],
): SessionUpdate {
  const content: ToolCallContent[] = terminalIds.map((terminalId) => ({
    type: "terminal",
    terminalId,
  }));
  const said = result.ok ? result.output : result.error ?? result.output;
  if (said !== "") content.push(text(said));
  if (result.change !== undefined) content.push(diff(result.change, cwd));
  return {
    sessionUpdate: "tool_call_update",
    toolCallId: call.id,
    status: result.ok ? "completed" : "failed",
    content,
  };
}

/**
 * A file change as ACP diff content; a file the call creates has no old text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diff } from "./tool_calls.ts";
 * assert.deepEqual(diff({ path: "/a/new.txt", before: "", after: "x" }, "/w"), {
 *   type: "diff",
 *   path: "/a/new.txt",
 *   oldText: null,
 *   newText: "x",
 * });
 * ```
 */
export function diff(
  change: { readonly path: string; readonly before: string; readonly after: string },
  cwd: string,
): ToolCallContent {
  return {
    type: "diff",
    path: absolute(change.path, cwd),
    oldText: change.before === "" ? null : change.before,
    newText: change.after,
  };
}

function text(value: string): ToolCallContent {
  return { type: "content", content: { type: "text", text: value } };
}

function parseArguments(argumentsText: string): unknown {
  try {
    return JSON.parse(argumentsText);
  } catch {
    return argumentsText;
  }
}

function absolute(path: string, cwd: string): string {
  if (path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path)) return path;
  return `${cwd.replace(/[\\/]+$/, "")}/${path.replace(/^\.\//, "")}`;
}
