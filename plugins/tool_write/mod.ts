/**
 * The `write` tool: creates or replaces a whole file, atomically.
 *
 * @module
 */

import type { FromJsonSchema, Plugin, PluginServices, Tool, ToolResult } from "@amber/core";
import { defineTool } from "@amber/core";
import {
  describeError,
  displayPath,
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
    execute: (args) => write(root, args),
  });
}

async function write(root: string, args: WriteArgs): Promise<ToolResult> {
  const path = resolvePath(root, args.path);
  const shown = displayPath(root, path);
  let existed = false;
  let before = 0;
  let kept: Conventions = { bom: false, crlf: false };
  try {
    const info = await Deno.stat(path);
    if (info.isDirectory) return toolError(`cannot write ${shown}: it is a directory`);
    existed = true;
    before = info.size;
    if (info.isFile && info.size <= CONVENTION_LIMIT) {
      kept = conventionsOf(await Deno.readFile(path), args.content);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      return toolError(`cannot write ${shown}: ${describeError(error)}`);
    }
  }
  const text = new TextEncoder().encode(kept.crlf ? toCrlf(args.content) : args.content);
  const bytes = kept.bom ? withUtf8Bom(text) : text;
  try {
    await writeAtomic(path, bytes);
  } catch (error) {
    return toolError(`cannot write ${shown}: ${describeError(error)}`);
  }
  const size = `${bytes.length} byte${bytes.length === 1 ? "" : "s"}`;
  const keptWords = [kept.crlf ? "CRLF line ends" : "", kept.bom ? "UTF-8 byte order mark" : ""]
    .filter((word) => word !== "").join(" and ");
  return {
    ok: true,
    output: existed
      ? `Overwrote ${shown} (${size}; it had ${before})${
        keptWords === "" ? "" : `; kept its ${keptWords}`
      }`
      : `Created ${shown} (${size})`,
    data: { path, bytes: bytes.length, created: !existed, ...kept },
  };
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
