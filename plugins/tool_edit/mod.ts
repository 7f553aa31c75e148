/**
 * The `edit` tool: exact string replacement in a file, with errors that say how to fix the call.
 *
 * @module
 */

import type {
  FileChange,
  FromJsonSchema,
  Plugin,
  PluginServices,
  Tool,
  ToolInput,
  ToolResult,
} from "@amber/core";
import { defineTool } from "@amber/core";
import { CHANGE_TOO_LARGE, fileChange } from "../_file_change.ts";
import {
  describeError,
  displayPath,
  isInside,
  looksBinary,
  outsideWorkspace,
  resolvePath,
  toolError,
  writeAtomic,
} from "../_workspace.ts";
import {
  hasUtf8Bom,
  invalidUtf8At,
  lineEndings,
  lineOfByte,
  toCrlf,
  toLf,
  utf16Bom,
  UTF8_BOM,
  withUtf8Bom,
} from "../_text_bytes.ts";
import { toolPlugin } from "../tool_plugin.ts";
import { type EditorFiles, editorFiles, splitBom } from "../_editor_files.ts";

const PARAMETERS = {
  type: "object",
  properties: {
    path: { type: "string", description: "The file to edit, relative to the workspace root." },
    old_string: {
      type: "string",
      description: "The exact text to replace; it must not be empty.",
    },
    new_string: {
      type: "string",
      description: "The text to put in its place; it must differ from old_string.",
    },
    replace_all: {
      type: "boolean",
      description: "Replace every occurrence instead of requiring exactly one. Default false.",
    },
  },
  required: ["path", "old_string", "new_string"],
  additionalProperties: false,
} as const;

type EditArgs = FromJsonSchema<typeof PARAMETERS>;

// Lines of context shown around a change, and how many changes get a snippet.
const CONTEXT_LINES = 3;
const SNIPPETS = 3;
// Line numbers listed for an ambiguous old_string before the list is cut.
const LISTED_LINES = 20;

/**
 * Creates the `tool_edit` plugin, which contributes the `edit` tool.
 *
 * `edit` replaces `old_string` with `new_string`: exactly one occurrence, or every one with
 * `replace_all`. It fails, saying why, when the file is missing, `old_string` is empty or equal to
 * `new_string`, `old_string` is not there (naming the line of a match that differs only in
 * whitespace, if there is one) or is there several times without `replace_all` (listing the
 * lines). The file is written atomically and the result shows the changed region with line
 * numbers. It asks for approval only for a path outside the workspace; its `preview` (for that
 * question) and its result's `change` hold the file's text before and after, for a diff.
 *
 * No byte outside the replaced text changes: a UTF-8 byte order mark stays; a CRLF file is matched
 * with the LF text models send, and the new text gets the file's CRLF line ends; a file that is
 * not valid UTF-8 (or is UTF-16) is refused, naming the first bad byte, rather than rewritten
 * with replacement characters.
 *
 * When an editor drives amber and offers reading and writing files (`services.host.editor`), the
 * text edited is the editor's (an open buffer's unsaved changes included) and the new text goes
 * back through the editor; a file on disk is still refused as above when it is not UTF-8 text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolEditPlugin } from "@amber/plugins/tool_edit";
 * const plugin = createToolEditPlugin();
 * assert.equal(plugin.id, "tool_edit");
 * assert.deepEqual(plugin.capabilities().map((c) => c.name), ["edit"]);
 * ```
 */
export function createToolEditPlugin(): Plugin {
  return toolPlugin({
    id: "tool_edit",
    name: "Edit",
    description: "The edit tool: exact string replacement in a file.",
    tools: ["edit"],
    build: (services) => [editTool(services)],
  });
}

function editTool(services: PluginServices): Tool<EditArgs> {
  const root = services.workspace.root;
  const files = editorFiles(services.host.editor);
  return defineTool({
    name: "edit",
    description: "Replace an exact string in a file. `old_string` must match the file " +
      "character for character, indentation and line breaks included, and must occur exactly " +
      "once unless `replace_all` is true; include enough surrounding lines to make it unique. " +
      "Copy the text from read's output without the line-number prefix. Returns the changed " +
      "region with line numbers. To create a file, use write.",
    parameters: PARAMETERS,
    verb: "editing",
    requiresApproval: (args) => outsideWorkspace(root, args),
    summarize: ({ path, replace_all }) =>
      `edit ${String(path)}${replace_all ? " (all occurrences)" : ""}`,
    preview: (args, { signal }) => preview(root, args, signal, files),
    execute: (args, { signal }) => edit(root, args, signal, files),
  });
}

// What the call would do, planned as execute plans it, nothing written; none for a call that
// would fail.
async function preview(
  root: string,
  input: ToolInput<EditArgs>,
  signal: AbortSignal,
  files: EditorFiles | undefined,
): Promise<FileChange | undefined> {
  const { path, old_string, new_string, replace_all } = input;
  if (typeof path !== "string" || typeof old_string !== "string") return undefined;
  if (typeof new_string !== "string") return undefined;
  if (replace_all !== undefined && typeof replace_all !== "boolean") return undefined;
  if (signal.aborted) return undefined;
  const args: EditArgs = { path, old_string, new_string, ...(replace_all ? { replace_all } : {}) };
  const planned = await plan(root, args, signal, files);
  return "ok" in planned ? undefined : planned.change;
}

/** An edit worked out, nothing written yet. */
interface Plan {
  readonly path: string;
  readonly shown: string;
  readonly bom: boolean;
  readonly updated: string;
  readonly newString: string;
  readonly found: readonly number[];
  /** Where each replacement begins in the new content. */
  readonly starts: readonly number[];
  /** Undefined when the file is too large for one. */
  readonly change: FileChange | undefined;
}

async function edit(
  root: string,
  args: EditArgs,
  signal: AbortSignal,
  files: EditorFiles | undefined,
): Promise<ToolResult> {
  const planned = await plan(root, args, signal, files);
  if ("ok" in planned) return planned;
  const { path, shown, bom, updated, newString, found, starts, change } = planned;
  try {
    if (files !== undefined) {
      await files.write(path, bom ? `\uFEFF${updated}` : updated, signal);
    } else {
      const encoded = new TextEncoder().encode(updated);
      await writeAtomic(path, bom ? withUtf8Bom(encoded) : encoded);
    }
  } catch (error) {
    return toolError(`cannot write ${shown}: ${describeError(error)}`);
  }

  const snippets = starts.slice(0, SNIPPETS).map((start) =>
    snippet(updated, start, start + newString.length)
  );
  const count = found.length === 1 ? "1 occurrence" : `${found.length} occurrences`;
  const more = found.length > SNIPPETS ? `\n...\n(${found.length - SNIPPETS} more changes)` : "";
  const large = change === undefined ? ` (${CHANGE_TOO_LARGE})` : "";
  return {
    ok: true,
    output: `Edited ${shown}: replaced ${count}${large}.\n${snippets.join("\n...\n")}${more}`,
    data: { path, replacements: found.length },
    ...(change === undefined ? {} : { change }),
  };
}

// The edit worked out, or the error result that says why it cannot be made. With the editor's
// files, the text is the editor's; the file on disk, if there is one, is checked as without.
async function plan(
  root: string,
  args: EditArgs,
  signal: AbortSignal,
  files: EditorFiles | undefined,
): Promise<Plan | ToolResult> {
  const path = resolvePath(root, args.path);
  const shown = displayPath(root, path);
  if (args.old_string === "") {
    return toolError(
      "old_string is empty: say which text to replace (to create a file, use write)",
    );
  }
  if (args.old_string === args.new_string) {
    return toolError("old_string and new_string are the same: there is nothing to change");
  }
  const notFound = toolError(`file not found: ${shown} (to create it, use write)`);
  let bytes: Uint8Array | undefined;
  try {
    const info = await Deno.stat(path);
    if (info.isDirectory) return toolError(`cannot edit ${shown}: it is a directory`);
    bytes = await Deno.readFile(path);
  } catch (error) {
    // A buffer the editor never saved is there to edit.
    if (!(error instanceof Deno.errors.NotFound)) {
      return toolError(`cannot edit ${shown}: ${describeError(error)}`);
    }
    if (files === undefined) return notFound;
  }
  let text: { readonly body: string; readonly bom: boolean } | undefined;
  if (bytes !== undefined) {
    const refused = refusal(bytes, shown);
    if (typeof refused !== "string") return refused;
    text = { body: refused, bom: hasUtf8Bom(bytes) };
  }
  if (files !== undefined) {
    try {
      text = splitBom(await files.read(path, signal));
    } catch (error) {
      if (bytes === undefined) return notFound;
      return toolError(
        `cannot edit ${shown}: the editor could not read it: ${describeError(error)}`,
      );
    }
  }
  if (text === undefined) return notFound;
  const { body: content, bom } = text;
  const endings = lineEndings(content);

  let oldString = args.old_string;
  // A CRLF file keeps CRLF in what is put in, whichever line ends the model wrote.
  let newString = endings === "crlf" ? toCrlf(args.new_string) : args.new_string;
  let found = occurrences(content, oldString);
  // Matches again with both texts' line ends changed by `convert`, if that finds old_string.
  const retryWith = (convert: (text: string) => string): void => {
    const converted = convert(oldString);
    const again = occurrences(content, converted);
    if (again.length === 0) return;
    oldString = converted;
    newString = convert(newString);
    found = again;
  };
  if (found.length === 0 && endings !== "lf" && !oldString.includes("\r")) {
    // Models send LF; a CRLF file (or CRLF region of a mixed one) matches with its own line ends.
    retryWith(toCrlf);
  }
  if (found.length === 0 && endings !== "crlf" && oldString.includes("\r\n")) {
    // CRLF text against an LF file (or LF region): match and insert with LF.
    retryWith(toLf);
  }
  if (found.length === 0) {
    const near = whitespaceMatch(content, oldString);
    return toolError(
      near === undefined
        ? `old_string was not found in ${shown}. Read the file again and copy the text exactly, ` +
          "indentation included."
        : `old_string was not found exactly in ${shown}, but text that differs from it only in ` +
          `whitespace starts on line ${lineAt(content, near)}. Read that region again and copy ` +
          "it exactly: spaces vs tabs, indentation and line breaks must all match.",
    );
  }
  if (found.length > 1 && !args.replace_all) {
    const lines = linesAt(content, found);
    const listed = lines.slice(0, LISTED_LINES).join(", ") +
      (lines.length > LISTED_LINES ? `, ... (${lines.length - LISTED_LINES} more)` : "");
    return toolError(
      `old_string occurs ${found.length} times in ${shown} (lines ${listed}). Include more ` +
        "surrounding text to make it unique, or set replace_all to replace every occurrence.",
    );
  }

  const parts: string[] = [];
  const starts: number[] = [];
  let from = 0;
  let length = 0;
  for (const index of found) {
    const kept = content.slice(from, index);
    parts.push(kept, newString);
    length += kept.length;
    starts.push(length);
    length += newString.length;
    from = index + oldString.length;
  }
  parts.push(content.slice(from));
  const updated = parts.join("");
  const change = fileChange(shown, content, updated, !isInside(root, path));
  return { path, shown, bom, updated, newString, found, starts, change };
}

// The file's text, or the error result when edit must not change it: it is UTF-16, binary or not
// valid UTF-8 (decoding would turn each bad byte into U+FFFD and writing back would change it).
function refusal(bytes: Uint8Array, shown: string): string | ToolResult {
  const utf16 = utf16Bom(bytes);
  if (utf16 !== undefined) {
    return toolError(
      `cannot edit ${shown}: it is ${utf16} text, and edit changes only UTF-8 files; ` +
        "convert it with bash (iconv) first, or replace it whole with write",
    );
  }
  if (looksBinary(bytes)) return toolError(`cannot edit ${shown}: it is a binary file`);
  const bom = hasUtf8Bom(bytes);
  const body = bom ? bytes.subarray(UTF8_BOM.length) : bytes;
  const bad = invalidUtf8At(body);
  if (bad !== -1) {
    const offset = bad + (bom ? UTF8_BOM.length : 0);
    return toolError(
      `cannot edit ${shown}: it is not valid UTF-8 (the first bad byte is at offset ${offset}, ` +
        `on line ${lineOfByte(bytes, offset)}), and editing it as text would change bytes ` +
        "outside old_string. Convert it to UTF-8 with bash (e.g. iconv), or replace it whole " +
        "with write.",
    );
  }
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(body);
}

function occurrences(content: string, needle: string): number[] {
  const found: number[] = [];
  for (
    let at = content.indexOf(needle);
    at !== -1;
    at = content.indexOf(needle, at + needle.length)
  ) {
    found.push(at);
  }
  return found;
}

function lineAt(content: string, index: number): number {
  let line = 1;
  for (
    let at = content.indexOf("\n");
    at !== -1 && at < index;
    at = content.indexOf("\n", at + 1)
  ) {
    line++;
  }
  return line;
}

// The line of each index, in one pass: `indices` ascend.
function linesAt(content: string, indices: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let at = content.indexOf("\n");
  for (const index of indices) {
    while (at !== -1 && at < index) {
      line++;
      at = content.indexOf("\n", at + 1);
    }
    lines.push(line);
  }
  return lines;
}

// Where a match ignoring whitespace differences starts in `content`: both sides have each run of
// whitespace collapsed to one space (and the needle is trimmed), with a map back to offsets.
function whitespaceMatch(content: string, needle: string): number | undefined {
  const target = collapse(needle.trim()).text;
  if (target === "") return undefined;
  const { text, offsets } = collapse(content);
  const at = text.indexOf(target);
  if (at !== -1) return offsets[at];
  // Whitespace missing on one side only ("a(b)" vs "a( b )"): compare with none at all.
  const bare = needle.replace(/\s+/g, "");
  const stripped = strip(content);
  const bareAt = stripped.text.indexOf(bare);
  return bareAt === -1 ? undefined : stripped.offsets[bareAt];
}

function collapse(text: string): { text: string; offsets: number[] } {
  let out = "";
  const offsets: number[] = [];
  let space = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (/\s/.test(char)) {
      if (!space) {
        out += " ";
        offsets.push(i);
      }
      space = true;
    } else {
      out += char;
      offsets.push(i);
      space = false;
    }
  }
  return { text: out, offsets };
}

function strip(text: string): { text: string; offsets: number[] } {
  let out = "";
  const offsets: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (/\s/.test(text[i])) continue;
    out += text[i];
    offsets.push(i);
  }
  return { text: out, offsets };
}

// The lines from a few before `start` to a few after `end`, numbered as read shows them.
function snippet(content: string, start: number, end: number): string {
  const lines = content.split("\n");
  const first = lineAt(content, start);
  const last = lineAt(content, Math.max(start, end - 1));
  const from = Math.max(1, first - CONTEXT_LINES);
  const to = Math.min(lines.length, last + CONTEXT_LINES);
  const out: string[] = [];
  for (let n = from; n <= to; n++) {
    const text = lines[n - 1].replace(/\r$/, "");
    out.push(
      `${String(n).padStart(5)}\t${text.length > 2000 ? `${text.slice(0, 2000)}...` : text}`,
    );
  }
  return out.join("\n");
}
