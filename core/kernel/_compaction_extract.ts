/**
 * What a compaction carries over mechanically, whatever the summary says: the file paths the
 * conversation touched (found in tool-call arguments, and in the summaries earlier compactions
 * wrote) and the last `todowrite` list.
 *
 * @module
 */

import type { Message } from "../message.ts";

/** The first line of every summary a compaction writes; marks it as no turn of the user's. */
export const SUMMARY_HEADER = "[Compacted: a summary of the earlier conversation]";

const FILES_HEADING = "Files touched:";
const TODO_HEADING = "Todo list (the last todowrite):";
const PATH_KEYS = ["path", "file_path", "filePath", "pattern", "paths", "files"];
const MAX_FILES = 300;
const MARK: Record<string, string> = { completed: "[x]", in_progress: "[~]", pending: "[ ]" };

/**
 * The file paths `messages` touched, in order of first mention: the path arguments of every
 * tool call, the words of a command that look like paths, and the files listed by a summary an
 * earlier compaction wrote.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { extractFiles } from "./_compaction_extract.ts";
 * const files = extractFiles([{
 *   role: "assistant",
 *   content: "",
 *   toolCalls: [
 *     { id: "1", name: "read", arguments: '{"path":"src/a.ts"}' },
 *     { id: "2", name: "bash", arguments: '{"command":"deno test -A tests/a_test.ts --quiet"}' },
 *   ],
 * }]);
 * assert.deepEqual(files, ["src/a.ts", "tests/a_test.ts"]);
 * ```
 */
export function extractFiles(messages: readonly Message[]): string[] {
  const files = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === "string" && value !== "" && value.length <= 300) files.add(value);
  };
  for (const message of messages) {
    if (message.role === "user" && message.content.startsWith(SUMMARY_HEADER)) {
      for (const line of section(message.content, FILES_HEADING)) {
        if (line.startsWith("- ")) add(line.slice(2));
      }
      continue;
    }
    if (message.role !== "assistant") continue;
    for (const call of message.toolCalls ?? []) {
      const args = parsed(call.arguments);
      if (args === undefined) continue;
      for (const key of PATH_KEYS) {
        const value = args[key];
        if (Array.isArray(value)) value.forEach(add);
        else add(value);
      }
      if (typeof args.command === "string") {
        for (const word of args.command.split(/\s+/)) {
          const bare = word.replace(/^['"]+|['";,)]+$/g, "");
          if (looksLikePath(bare)) add(bare);
        }
      }
    }
  }
  return [...files].slice(0, MAX_FILES);
}

/**
 * The last todo list of the conversation as checklist lines: from the last `todowrite` call in
 * `all`, else carried over from the last summary in `range` that listed one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { extractTodos } from "./_compaction_extract.ts";
 * const todos = '{"todos":[{"content":"Read","status":"completed"},{"content":"Fix","status":"pending"}]}';
 * const messages = [{
 *   role: "assistant" as const,
 *   content: "",
 *   toolCalls: [{ id: "1", name: "todowrite", arguments: todos }],
 * }];
 * assert.equal(extractTodos(messages, messages), "- [x] Read\n- [ ] Fix");
 * ```
 */
export function extractTodos(
  all: readonly Message[],
  range: readonly Message[],
): string | undefined {
  for (let i = all.length - 1; i >= 0; i--) {
    const message = all[i];
    if (message.role !== "assistant") continue;
    const call = message.toolCalls?.findLast((c) => c.name === "todowrite");
    const items = call === undefined ? undefined : parsed(call.arguments)?.todos;
    if (!Array.isArray(items)) continue;
    return items.map((item) => {
      const { content, status } = (item ?? {}) as { content?: unknown; status?: unknown };
      return `- ${MARK[String(status)] ?? "[ ]"} ${String(content ?? "")}`;
    }).join("\n");
  }
  for (let i = range.length - 1; i >= 0; i--) {
    const message = range[i];
    if (message.role !== "user" || !message.content.startsWith(SUMMARY_HEADER)) continue;
    const lines = section(message.content, TODO_HEADING);
    if (lines.length > 0) return lines.join("\n");
  }
  return undefined;
}

// The lines under `heading` in a summary, up to the next blank line.
function section(text: string, heading: string): string[] {
  const at = text.lastIndexOf(`\n${heading}\n`);
  if (at < 0) return [];
  const rest = text.slice(at + heading.length + 2);
  const end = rest.indexOf("\n\n");
  return (end < 0 ? rest : rest.slice(0, end)).split("\n").filter((line) => line !== "");
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

// A word with a slash or a file extension, made of path characters, and no option or URL.
function looksLikePath(word: string): boolean {
  if (word.length < 3 || word.length > 200 || word.startsWith("-")) return false;
  if (word.includes("://") || !/^[\w.~/@+-]+$/.test(word)) return false;
  if (/^\.+$/.test(word) || /^\d+(\.\d+)*$/.test(word)) return false;
  return word.includes("/") || /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(word);
}
