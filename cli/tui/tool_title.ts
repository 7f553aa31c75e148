/**
 * How a tool call is named on screen and in `amber run`'s lines: its label (the tool's verb and
 * summary), the title a row shows (`read notes.txt`, `bash $ ls`), the key that tells calls of
 * one turn apart, and a duration. Apart from the row itself, so that `amber run` names calls the
 * same way without loading what a row draws (the diff library among it).
 *
 * @module
 */

import type { ToolCall } from "@amber/core";

/** How a tool call is shown: its tool's verb and its one-line summary. */
export interface ToolLabel {
  /** The tool's verb ("reading", "running"): what the row says while the call runs. */
  readonly verb: string;
  /** `summarize(args)`: what the call is about. */
  readonly summary: string;
}

/**
 * A call's label from its tool: the tool's verb and its summary of the arguments (the tool's
 * name for both when it has none, or the arguments do not parse).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolLabel } from "./tool_title.ts";
 * const tool = { verb: "reading", summarize: (args: { path?: string }) => args.path ?? "" };
 * const call = { id: "c1", name: "read", arguments: '{"path":"a.ts"}' };
 * assert.deepEqual(toolLabel(tool, call), { verb: "reading", summary: "a.ts" });
 * assert.deepEqual(toolLabel(undefined, call), { verb: "read", summary: "read" });
 * ```
 */
export function toolLabel(
  tool: { readonly verb?: string; summarize?(args: unknown): string } | undefined,
  call: ToolCall,
): ToolLabel {
  let summary = call.name;
  try {
    const args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
    summary = tool?.summarize?.(args) ?? call.name;
  } catch {
    // A summary is cosmetic.
  }
  return { verb: tool?.verb ?? call.name, summary };
}

/**
 * What a tool call's line says: the tool's name, then its summary without the word that only
 * repeats the name. Summaries often start with the action (`read notes.txt` of `read`,
 * `start $ npm run dev` of `process_start`), and some do not (`$ ls` of `bash`); either way the
 * line names the tool once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolTitle } from "./tool_title.ts";
 * assert.equal(toolTitle("read", "read notes.txt"), "read notes.txt");
 * assert.equal(toolTitle("bash", "$ ls -la"), "bash $ ls -la");
 * assert.equal(toolTitle("process_start", "start $ npm run dev"), "process_start $ npm run dev");
 * assert.equal(toolTitle("task", "task: find the bug"), "task: find the bug");
 * assert.equal(toolTitle("mcp__github__list", ""), "mcp__github__list");
 * ```
 */
export function toolTitle(name: string, summary: string): string {
  const text = summary.trim();
  if (text === "" || text === name) return name;
  const space = text.search(/\s/);
  const word = (space < 0 ? text : text.slice(0, space)).replace(/:$/, "").toLowerCase();
  const rest = space < 0 ? "" : text.slice(space).trimStart();
  if (word === name.toLowerCase()) return text;
  const parts = name.toLowerCase().split(/[_\-.]+/);
  if (parts.length > 1 && parts.includes(word)) return rest === "" ? name : `${name} ${rest}`;
  return `${name} ${text}`;
}

/**
 * Which call of a turn `step` and `id` name, as one string: call ids are unique only within one
 * reply (a replayed exchange, a server that reuses ids, Gemini's `call_0` after a resume), so a
 * call is told apart by the step whose reply asked for it and its id together.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { callKey } from "./tool_title.ts";
 * assert.notEqual(callKey(0, "call_0"), callKey(2, "call_0"));
 * assert.equal(callKey(1, "a"), callKey(1, "a"));
 * ```
 */
export function callKey(step: number, id: string): string {
  return `${step}\u0000${id}`;
}

/**
 * A duration as a row shows it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatDuration } from "./tool_title.ts";
 * assert.equal(formatDuration(0.4), "<1 ms");
 * assert.equal(formatDuration(42.4), "42 ms");
 * assert.equal(formatDuration(1500), "1.5 s");
 * ```
 */
export function formatDuration(ms: number): string {
  if (ms < 1) return "<1 ms";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
