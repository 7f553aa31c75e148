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
  outsideWorkspace,
  resolvePath,
  toolError,
  writeAtomic,
} from "../_workspace.ts";
import { toolPlugin } from "../tool_plugin.ts";

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
  try {
    const info = await Deno.stat(path);
    if (info.isDirectory) return toolError(`cannot write ${shown}: it is a directory`);
    existed = true;
    before = info.size;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      return toolError(`cannot write ${shown}: ${describeError(error)}`);
    }
  }
  const bytes = new TextEncoder().encode(args.content);
  try {
    await writeAtomic(path, bytes);
  } catch (error) {
    return toolError(`cannot write ${shown}: ${describeError(error)}`);
  }
  const size = `${bytes.length} byte${bytes.length === 1 ? "" : "s"}`;
  return {
    ok: true,
    output: existed
      ? `Overwrote ${shown} (${size}; it had ${before})`
      : `Created ${shown} (${size})`,
    data: { path, bytes: bytes.length, created: !existed },
  };
}
