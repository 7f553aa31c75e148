/**
 * The `write` tool: creates or replaces a whole file, atomically.
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
import { dirname } from "node:path";
import { CHANGE_LIMIT, CHANGE_TOO_LARGE, fileChange } from "../_file_change.ts";
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
  toCrlf,
  UTF8_BOM,
  withUtf8Bom,
} from "../_text_bytes.ts";
import { toolPlugin } from "../tool_plugin.ts";
import { type EditorFiles, editorFiles } from "../_editor_files.ts";

// Files larger than this are replaced without looking at their conventions.
const CONVENTION_LIMIT = 8 * 1024 * 1024;

const PARAMETERS = {
  type: "object",
  properties: {
    path: {
      type: "string",
      description: "The file to write, relative to the workspace root.",
    },
    content: { type: "string", description: "The complete new content of the file." },
  },
  required: ["path", "content"],
  additionalProperties: false,
} as const;

type WriteArgs = FromJsonSchema<typeof PARAMETERS>;

/**
 * Creates the `tool_write` plugin, which contributes the `write` tool.
 *
 * `write` creates missing parent directories, writes through a temp file and a rename (a reader
 * never sees half a file, an existing file keeps its permissions), and reports the bytes written
 * and whether it created or overwrote the file. It asks for approval only for a path outside the
 * workspace (symlinks followed).
 *
 * Over an existing UTF-8 text file, `write` keeps the file's conventions, as an editor saving
 * over it would: a byte order mark stays, and when every line break was CRLF the new content's
 * line breaks are written as CRLF (unless the content has carriage returns of its own). The
 * result says which it kept. A symlink is written through, never replaced; a new file gets the
 * content exactly as given.
 *
 * Its result's `change` holds the file's text before and after, for a diff; its `preview` (for
 * the approval question) the text it would write, as all new: a file outside the workspace is
 * not read before the user allows the call.
 *
 * When an editor drives amber and offers reading and writing files (`services.host.editor`), the
 * text replaced is the editor's (an open buffer's unsaved changes included), its conventions are
 * kept as above, and the new text goes through the editor; missing parent directories are still
 * made on disk first. A file on disk that is not UTF-8 text is replaced without being read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolWritePlugin } from "@amber/plugins/tool_write";
 * const plugin = createToolWritePlugin();
 * assert.equal(plugin.id, "tool_write");
 * assert.deepEqual(plugin.capabilities().map((c) => c.name), ["write"]);
 * ```
 */
export function createToolWritePlugin(): Plugin {
  return toolPlugin({
    id: "tool_write",
    name: "Write",
    description: "The write tool: creates or replaces a whole file, atomically.",
    tools: ["write"],
    build: (services) => [writeTool(services)],
  });
}

function writeTool(services: PluginServices): Tool<WriteArgs> {
  const root = services.workspace.root;
  const files = editorFiles(services.host.editor);
  return defineTool({
    name: "write",
    description: "Write a whole file: creates it (and any missing parent directories) or " +
      "replaces its entire content. Paths are relative to the workspace root unless absolute. " +
      "To change part of an existing file, prefer edit, which cannot lose the rest of it; read a " +
      "file before overwriting it.",
    parameters: PARAMETERS,
    verb: "writing",
    requiresApproval: (args) => outsideWorkspace(root, args),
    summarize: (args) => `write ${String(args.path)}`,
    preview: (args, { signal }) => preview(root, args, signal, files),
    execute: (args, { signal }) => write(root, args, signal, files),
  });
}

// What the call would do, worked out as execute does, nothing written. A file outside the
// workspace (the call that asks approval by default) is not read before the user allows it:
// its content shows as all new.
async function preview(
  root: string,
  input: ToolInput<WriteArgs>,
  signal: AbortSignal,
  files: EditorFiles | undefined,
): Promise<FileChange | undefined> {
  const { path, content } = input;
  if (typeof path !== "string" || path === "" || typeof content !== "string") return undefined;
  const absolute = resolvePath(root, path);
  if (!isInside(root, absolute)) {
    return fileChange(displayPath(root, absolute), "", content, true);
  }
  const planned = await plan(root, { path, content }, signal, files);
  return "ok" in planned ? undefined : planned.change;
}

/** A write worked out, nothing written yet. */
interface Plan {
  readonly path: string;
  readonly shown: string;
  /** The size of the file it replaces; undefined for a new file. */
  readonly before: number | undefined;
  readonly kept: Conventions;
  readonly bytes: Uint8Array;
  /** The text to hand the editor, when the editor writes it. */
  readonly text: string;
  /** Undefined when the old file is not UTF-8 text, or the change is too large to carry. */
  readonly change: FileChange | undefined;
  /** Whether the change was left out for its size. */
  readonly tooLarge: boolean;
}

// The write worked out, or the error result that says why it cannot be made. With the editor's
// files, the text replaced is the editor's, once the disk says the file is UTF-8 text.
async function plan(
  root: string,
  args: WriteArgs,
  signal: AbortSignal,
  files: EditorFiles | undefined,
): Promise<Plan | ToolResult> {
  const path = resolvePath(root, args.path);
  const shown = displayPath(root, path);
  let before: number | undefined;
  let kept: Conventions = { bom: false, crlf: false };
  let oldText: string | undefined = "";
  let tooLarge = false;
  try {
    const info = await Deno.stat(path);
    if (info.isDirectory) return toolError(`cannot write ${shown}: it is a directory`);
    before = info.size;
    oldText = undefined;
    tooLarge = info.size > CHANGE_LIMIT;
    if (info.isFile && info.size <= CONVENTION_LIMIT) {
      let old: Uint8Array = await Deno.readFile(path);
      if (files !== undefined && textOf(old) !== undefined) {
        try {
          // A leading U+FEFF encodes as the UTF-8 byte order mark, which conventionsOf keeps.
          old = new TextEncoder().encode(await files.read(path, signal));
        } catch (error) {
          return toolError(
            `cannot write ${shown}: the editor could not read it: ${describeError(error)}`,
          );
        }
        before = old.length;
        tooLarge = old.length > CHANGE_LIMIT;
      }
      kept = conventionsOf(old, args.content);
      if (!tooLarge) oldText = textOf(old);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      return toolError(`cannot write ${shown}: ${describeError(error)}`);
    }
  }
  const newText = kept.crlf ? toCrlf(args.content) : args.content;
  const encoded = new TextEncoder().encode(newText);
  const bytes = kept.bom ? withUtf8Bom(encoded) : encoded;
  const text = kept.bom ? `\uFEFF${newText}` : newText;
  const change = oldText === undefined
    ? undefined
    : fileChange(shown, oldText, newText, !isInside(root, path));
  tooLarge ||= oldText !== undefined && change === undefined;
  return { path, shown, before, kept, bytes, text, change, tooLarge };
}

async function write(
  root: string,
  args: WriteArgs,
  signal: AbortSignal,
  files: EditorFiles | undefined,
): Promise<ToolResult> {
  const planned = await plan(root, args, signal, files);
  if ("ok" in planned) return planned;
  const { path, shown, before, kept, bytes, text, change, tooLarge } = planned;
  try {
    if (files === undefined) await writeAtomic(path, bytes);
    else {
      await Deno.mkdir(dirname(path), { recursive: true });
      await files.write(path, text, signal);
    }
  } catch (error) {
    return toolError(`cannot write ${shown}: ${describeError(error)}`);
  }
  const size = `${bytes.length} byte${bytes.length === 1 ? "" : "s"}`;
  const keptWords = [kept.crlf ? "CRLF line ends" : "", kept.bom ? "UTF-8 byte order mark" : ""]
    .filter((word) => word !== "").join(" and ");
  const said = before !== undefined
    ? `Overwrote ${shown} (${size}; it had ${before})${
      keptWords === "" ? "" : `; kept its ${keptWords}`
    }`
    : `Created ${shown} (${size})`;
  return {
    ok: true,
    output: tooLarge ? `${said}; ${CHANGE_TOO_LARGE}` : said,
    data: { path, bytes: bytes.length, created: before === undefined, ...kept },
    ...(change === undefined ? {} : { change }),
  };
}

// A file's text as a diff shows it (a byte order mark is no line of it); undefined for a binary
// file or one that is not UTF-8.
function textOf(bytes: Uint8Array): string | undefined {
  const body = hasUtf8Bom(bytes) ? bytes.subarray(UTF8_BOM.length) : bytes;
  if (looksBinary(body) || invalidUtf8At(body) !== -1) return undefined;
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(body);
}

interface Conventions {
  readonly bom: boolean;
  readonly crlf: boolean;
}

// What of the old file's form the new content takes on; nothing unless the old file is UTF-8
// text and the content does not already say otherwise.
function conventionsOf(old: Uint8Array, content: string): Conventions {
  const bom = hasUtf8Bom(old);
  const body = bom ? old.subarray(UTF8_BOM.length) : old;
  if (looksBinary(body) || invalidUtf8At(body) !== -1) {
    return { bom: false, crlf: false };
  }
  const crlf = lineEndings(new TextDecoder().decode(body)) === "crlf" &&
    content.includes("\n") && !content.includes("\r");
  return { bom: bom && !content.startsWith("\uFEFF"), crlf };
}
