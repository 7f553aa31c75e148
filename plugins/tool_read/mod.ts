/**
 * The `read` tool: a text file's lines, numbered, a window at a time.
 *
 * @module
 */

import type {
  EditorService,
  FromJsonSchema,
  Plugin,
  PluginServices,
  Tool,
  ToolResult,
} from "@amber/core";
import { defineTool } from "@amber/core";
import {
  describeError,
  displayPath,
  outsideWorkspace,
  resolvePath,
  toolError,
} from "../_workspace.ts";
import { imageType, MAX_IMAGE_BYTES, toolImage } from "./image.ts";
import { utf16Bom, Utf8Validator } from "../_text_bytes.ts";
import { toolPlugin } from "../tool_plugin.ts";

/** How many lines `read` returns when the call does not say. */
export const DEFAULT_READ_LIMIT = 2000;
/** Lines longer than this are clipped in the output. */
export const MAX_LINE_CHARS = 2000;
/** One call returns at most this many characters; the trailer says where to go on. */
export const MAX_READ_CHARS = 200_000;
/**
 * A text file larger than this on disk is read from disk even when an editor could give it: an
 * editor sends the whole text in one message, and a log this size is rarely an open buffer.
 */
export const MAX_EDITOR_READ_BYTES = 4 * 1024 * 1024;
// Bytes inspected for a NUL before the file is judged binary.
const SNIFF_BYTES = 8192;
// Entries a directory error lists before it says how many more there are.
const LISTED_ENTRIES = 50;

const PARAMETERS = {
  type: "object",
  properties: {
    path: { type: "string", description: "The file to read, relative to the workspace root." },
    offset: {
      type: "integer",
      minimum: 1,
      description: "The first line to return, 1-based. Default 1.",
    },
    limit: {
      type: "integer",
      minimum: 1,
      description: `How many lines to return at most. Default ${DEFAULT_READ_LIMIT}.`,
    },
  },
  required: ["path"],
  additionalProperties: false,
} as const;

type ReadArgs = FromJsonSchema<typeof PARAMETERS>;

/**
 * Creates the `tool_read` plugin, which contributes the `read` tool.
 *
 * `read` returns lines as `   12\tcontent`, from `offset` (1-based, default 1) for `limit` lines
 * (default 2000), clips lines over 2000 characters, stops early once it has 200,000 characters,
 * and ends with a trailer saying how many lines remain when it stopped before the end. A file
 * that is not valid UTF-8 is shown with U+FFFD for its bad bytes and a note naming the first one
 * (offset and line), since edit refuses such a file. A PNG, JPEG, GIF or WebP file (known by its
 * first bytes) up to 5 MB is returned as an image (`ToolResult.images`): a model that takes images
 * sees it, another reads a line saying it was left out. A directory, another binary file (a NUL
 * byte in its first 8 KiB), a UTF-16 file or a missing file is an error result. It is read-only and asks
 * for approval only for a path outside the workspace (symlinks followed).
 *
 * When an editor drives amber and can read files (`services.host.editor.readTextFile`), a text
 * file's lines come from the editor, so an open buffer's unsaved changes are what the model
 * reads; the window, numbering and trailer are the same. Directories, images, binary and UTF-16
 * files are still told apart on disk, and a file that exists only in the editor is read from it.
 * An editor that fails to read gives an error result naming the path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolReadPlugin } from "@amber/plugins/tool_read";
 * const plugin = createToolReadPlugin();
 * assert.equal(plugin.id, "tool_read");
 * assert.deepEqual(plugin.capabilities().map((c) => c.name), ["read"]);
 * ```
 */
export function createToolReadPlugin(): Plugin {
  return toolPlugin({
    id: "tool_read",
    name: "Read",
    description: "The read tool: a file's numbered lines, a window at a time.",
    tools: ["read"],
    build: (services) => [readTool(services)],
  });
}

function readTool(services: PluginServices): Tool<ReadArgs> {
  const root = services.workspace.root;
  return defineTool({
    name: "read",
    description: "Read a text file from the workspace. Returns its lines numbered as " +
      "`<line>\\t<text>`, starting at `offset` (1-based, default 1) for at most `limit` lines " +
      `(default ${DEFAULT_READ_LIMIT}); lines over ${MAX_LINE_CHARS} characters are clipped. ` +
      `A call returns at most ${MAX_READ_CHARS} characters. ` +
      "When the file goes on past the window, a trailer says how many lines remain and which " +
      "offset to read next. Paths are relative to the workspace root unless absolute. The line " +
      "numbers are not part of the file: leave them out when you edit. A PNG, JPEG, GIF or WebP " +
      "image is returned as an image. Directories and other binary files cannot be read; use " +
      "search or bash `ls` for a directory.",
    parameters: PARAMETERS,
    verb: "reading",
    readOnly: true,
    requiresApproval: (args) => outsideWorkspace(root, args),
    summarize({ path, offset, limit }) {
      const from = typeof offset === "number" ? offset : 1;
      const range = offset === undefined && limit === undefined
        ? ""
        : ` (lines ${from}-${typeof limit === "number" ? from + limit - 1 : ""})`;
      return `read ${String(path)}${range}`;
    },
    execute: (args, context) => read(root, args, context.signal, services.host.editor),
  });
}

// Where the text comes from: a file on disk, or bytes already in hand (the editor's text).
interface ByteSource {
  read(buffer: Uint8Array): Promise<number | null>;
}

async function read(
  root: string,
  args: ReadArgs,
  signal: AbortSignal,
  editor: EditorService | undefined,
): Promise<ToolResult> {
  const path = resolvePath(root, args.path);
  const shown = displayPath(root, path);
  const offset = args.offset ?? 1;
  const limit = args.limit ?? DEFAULT_READ_LIMIT;
  const fromEditor = editor?.readTextFile === undefined
    ? undefined
    : (missing: boolean) =>
      readFromEditor(editor, path, shown, missing, (source) =>
        readWindow(source, shown, offset, limit, signal), signal);
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      // An editor may hold a buffer that was never saved.
      return fromEditor?.(true) ?? toolError(`file not found: ${shown}`);
    }
    return toolError(`cannot read ${shown}: ${describeError(error)}`);
  }
  if (info.isDirectory) return toolError(await directoryError(path, shown));
  if (!info.isFile) return toolError(`cannot read ${shown}: not a regular file`);

  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    return toolError(`cannot read ${shown}: ${describeError(error)}`);
  }
  try {
    const head = new Uint8Array(fromEditor === undefined ? 12 : SNIFF_BYTES);
    const got = (await file.read(head)) ?? 0;
    const type = imageType(head.subarray(0, got));
    if (type !== undefined) return await readImage(path, shown, type, info.size);
    // What is not text the editor could show is judged, and refused, as without an editor.
    const text = utf16Bom(head.subarray(0, got)) === undefined &&
      !head.subarray(0, got).includes(0);
    // A file too large to hold whole is read from disk a window at a time: the editor's
    // protocol sends a file's text in one message.
    if (fromEditor !== undefined && text && info.size <= MAX_EDITOR_READ_BYTES) {
      return await fromEditor(false);
    }
    await file.seek(0, Deno.SeekMode.Start);
    return await readWindow(file, shown, offset, limit, signal);
  } catch (error) {
    return toolError(`cannot read ${shown}: ${describeError(error)}`);
  } finally {
    file.close();
  }
}

// An image goes to the model as an image; the text names it (and is all a model that takes no
// images gets, with a line saying the image was left out).
async function readImage(
  path: string,
  shown: string,
  type: string,
  size: number,
): Promise<ToolResult> {
  if (size > MAX_IMAGE_BYTES) {
    return toolError(
      `cannot read ${shown}: it is an image (${type}) of ${size} bytes, over the ` +
        `${MAX_IMAGE_BYTES} bytes (5 MB) an image may have`,
    );
  }
  const bytes = await Deno.readFile(path);
  return {
    ok: true,
    output: `${shown}: ${type} image, ${kib(bytes.length)}`,
    images: [toolImage(bytes, type)],
  };
}

function kib(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${Math.round(bytes / 1024)} KB`;
}

// The text of `path` as the editor has it, through `window`. For a file missing on disk, the
// editor's failure is that it is not found.
async function readFromEditor(
  editor: EditorService,
  path: string,
  shown: string,
  missing: boolean,
  window: (source: ByteSource) => Promise<ToolResult>,
  signal: AbortSignal,
): Promise<ToolResult> {
  let text: unknown;
  try {
    text = await editor.readTextFile!(path, { signal });
  } catch (error) {
    if (missing) return toolError(`file not found: ${shown}`);
    return toolError(`cannot read ${shown}: the editor could not read it: ${describeError(error)}`);
  }
  if (typeof text !== "string") {
    return toolError(`cannot read ${shown}: the editor answered with something other than text`);
  }
  return await window(bytesSource(new TextEncoder().encode(text)));
}

function bytesSource(bytes: Uint8Array): ByteSource {
  let at = 0;
  return {
    read(buffer) {
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(buffer.length, bytes.length - at);
      buffer.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
  };
}

// Streams the file once: decodes only the lines in the window and merely counts the rest, so a
// huge log costs its size in reads, not in memory.
async function readWindow(
  file: ByteSource,
  shown: string,
  offset: number,
  limit: number,
  signal: AbortSignal,
): Promise<ToolResult> {
  let last = offset + limit - 1;
  let size = 0;
  const decoder = new TextDecoder();
  const out: string[] = [];
  const buffer = new Uint8Array(64 * 1024);
  let line = 1; // The line the next byte belongs to.
  let partial = ""; // The start of the current line's text, while it is in the window.
  let partialLength = 0; // Its whole length: a minified line may run to megabytes.
  let sniffed = false;
  let total = 0;
  let endsWithNewline = true;
  const validator = new Utf8Validator();
  let badAt = -1; // Where the first invalid UTF-8 sequence starts, in bytes.
  let badLine = 0;

  const take = (text: string): void => {
    partialLength += text.length;
    if (partial.length <= MAX_LINE_CHARS) partial += text.slice(0, MAX_LINE_CHARS + 1);
  };
  const emit = (): void => {
    let text = partial;
    let length = partialLength;
    if (length <= MAX_LINE_CHARS + 1 && text.endsWith("\r")) {
      text = text.slice(0, -1);
      length--;
    }
    const clipped = length > MAX_LINE_CHARS
      ? `${text.slice(0, MAX_LINE_CHARS)}... [line cut: ${length} chars]`
      : text;
    const numbered = `${String(line).padStart(5)}\t${clipped}`;
    out.push(numbered);
    partial = "";
    partialLength = 0;
    size += numbered.length + 1;
    // Many long lines add up: end the window early rather than flood the context.
    if (size >= MAX_READ_CHARS) last = line;
  };

  for (;;) {
    if (signal.aborted) return toolError("cancelled");
    const n = await file.read(buffer);
    if (n === null) break;
    const chunk = buffer.subarray(0, n);
    if (!sniffed) {
      const utf16 = total === 0 ? utf16Bom(chunk) : undefined;
      if (utf16 !== undefined) {
        return toolError(
          `cannot read ${shown}: it is ${utf16} text, which read does not decode; convert it ` +
            "with bash (e.g. iconv -f UTF-16 -t UTF-8) to read it",
        );
      }
      sniffed = total + n >= SNIFF_BYTES;
      if (chunk.subarray(0, SNIFF_BYTES - total).includes(0)) {
        return toolError(`cannot read ${shown}: it is a binary file`);
      }
    }
    if (badAt === -1) {
      badAt = validator.feed(chunk);
      // A sequence begun in the previous chunk holds no newline, so it is on the current line.
      if (badAt !== -1) badLine = line + newlinesBefore(chunk, badAt - total);
    }
    total += n;
    endsWithNewline = chunk[n - 1] === 10;
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? n : newline;
      if (line >= offset && line <= last) {
        take(decoder.decode(chunk.subarray(start, end), { stream: newline === -1 }));
      }
      if (newline === -1) break;
      if (line >= offset && line <= last) emit();
      line++;
      start = newline + 1;
    }
  }
  if (badAt === -1) {
    badAt = validator.finish();
    badLine = line;
  }
  // The last line has no newline after it, or the file is empty.
  const lines = total === 0 ? 0 : endsWithNewline ? line - 1 : line;
  if (!endsWithNewline && line >= offset && line <= last) {
    take(decoder.decode());
    emit();
  }

  if (lines === 0) return { ok: true, output: `(${shown} is empty)`, data: { lines: 0 } };
  if (offset > lines) {
    return toolError(
      `offset ${offset} is past the end of ${shown}, which has ${lines} line${
        lines === 1 ? "" : "s"
      }`,
    );
  }
  const remaining = lines - Math.min(last, lines);
  if (remaining > 0) {
    out.push(
      "",
      `[${remaining} more line${remaining === 1 ? "" : "s"} of ${lines}; ` +
        `read with offset=${last + 1} to continue]`,
    );
  }
  if (badAt !== -1) {
    out.push(
      "",
      `[${shown} is not valid UTF-8: the first bad byte is at offset ${badAt}, on line ` +
        `${badLine}; bad bytes are shown as \uFFFD. edit will not change this file; convert it ` +
        "to UTF-8 (e.g. with iconv) or replace it whole with write]",
    );
    return { ok: true, output: out.join("\n"), data: { lines, utf8: false } };
  }
  return { ok: true, output: out.join("\n"), data: { lines } };
}

function newlinesBefore(chunk: Uint8Array, end: number): number {
  let count = 0;
  for (let at = chunk.indexOf(10); at !== -1 && at < end; at = chunk.indexOf(10, at + 1)) count++;
  return count;
}

async function directoryError(path: string, shown: string): Promise<string> {
  const names: string[] = [];
  let more = 0;
  try {
    for await (const entry of Deno.readDir(path)) {
      if (names.length < LISTED_ENTRIES) {
        names.push(entry.isDirectory ? `${entry.name}/` : entry.name);
      } else more++;
    }
  } catch {
    // The listing is a courtesy; the error stands without it.
  }
  names.sort();
  const listing = names.length === 0
    ? "It is empty."
    : `It contains: ${names.join(", ")}${more > 0 ? ` and ${more} more` : ""}.`;
  return `${shown} is a directory, not a file. ${listing} To read a file in it, call read with ` +
    `its path (e.g. "${shown === "." ? "" : `${shown}/`}${
      names.find((n) => !n.endsWith("/")) ?? "<file>"
    }"); ` +
    `to find files, use search with a glob or bash \`ls\`.`;
}
