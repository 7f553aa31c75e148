/**
 * Adding and removing MCP servers in `config.yaml` (`amber mcp add|remove`). The file is edited
 * as a YAML document, not rewritten from its values, so the rest of it (other settings, comments,
 * blank lines) stays as the user wrote it. Writers take the file's lock, and the new text
 * replaces the old atomically.
 *
 * @module
 */

import { AmberError, withFileLock } from "@amber/core";
import { join } from "node:path";
import { writeTextAtomic } from "./atomic_file.ts";

/** `config.yaml` cannot take the change: it does not parse, or the server is (not) there. */
export class McpConfigEditError extends AmberError {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpConfigEditError";
  }
}

/**
 * Adds the server `name` with `entry` (as the file will hold it) under `mcp.servers` of
 * `<configDir>/config.yaml`, creating the file or the sections when missing. A server whose name
 * equals `name` but for case is there already: refused, since both would be one plugin.
 * Resolves to the file's path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { addServerToConfig, McpConfigEditError } from "./mcp_config_edit.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/config.yaml`, "# my settings\nmodel: gpt-5 # the best\n");
 * await addServerToConfig(dir, "files", { command: "files-server", args: ["--root", "."] });
 * const text = await Deno.readTextFile(`${dir}/config.yaml`);
 * assert.match(text, /^# my settings\nmodel: gpt-5 # the best\n/);
 * assert.match(text, /mcp:\n  servers:\n    files:\n      command: files-server\n/);
 * await assert.rejects(addServerToConfig(dir, "Files", { command: "x" }), McpConfigEditError);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function addServerToConfig(
  configDir: string,
  name: string,
  entry: Readonly<Record<string, unknown>>,
): Promise<string> {
  const path = join(configDir, "config.yaml");
  await Deno.mkdir(configDir, { recursive: true });
  await withFileLock(path, async () => {
    const { document, servers, style } = await open(path);
    const taken = servers.find((key) => key.toLowerCase() === name.toLowerCase());
    if (taken !== undefined) {
      throw new McpConfigEditError(
        `${path}: mcp.servers has '${taken}' already${
          taken === name ? "" : ` (the same plugin, mcp.${name.toLowerCase()})`
        }; \`amber mcp remove ${taken}\` first to replace it`,
      );
    }
    document.setIn(["mcp", "servers", name], document.createNode(entry));
    await writeTextAtomic(path, document.toString(style));
  });
  return path;
}

/**
 * Removes the server `name` (or the one whose name equals it but for case) from `mcp.servers` of
 * `<configDir>/config.yaml`, and the sections it leaves empty. Resolves to the name as the file
 * had it, or `undefined` when it has no such server (nothing is written then).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { removeServerFromConfig } from "./mcp_config_edit.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/config.yaml`,
 *   "model: gpt-5 # mine\nmcp:\n  servers:\n    # the docs\n    docs:\n      url: https://example.com/mcp\n",
 * );
 * assert.equal(await removeServerFromConfig(dir, "DOCS"), "docs");
 * assert.equal(await Deno.readTextFile(`${dir}/config.yaml`), "model: gpt-5 # mine\n");
 * assert.equal(await removeServerFromConfig(dir, "docs"), undefined);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function removeServerFromConfig(
  configDir: string,
  name: string,
): Promise<string | undefined> {
  const path = join(configDir, "config.yaml");
  return await withFileLock(path, async () => {
    const { document, servers, style } = await open(path);
    const key = servers.find((k) => k === name) ??
      servers.find((k) => k.toLowerCase() === name.toLowerCase());
    if (key === undefined) return undefined;
    document.deleteIn(["mcp", "servers", key]);
    if (size(document.getIn(["mcp", "servers"])) === 0) document.deleteIn(["mcp", "servers"]);
    if (size(document.getIn(["mcp"])) === 0) document.deleteIn(["mcp"]);
    await writeTextAtomic(path, size(document.contents) === 0 ? "" : document.toString(style));
    return key;
  });
}

/**
 * The names of the servers in `mcp.servers` of `<configDir>/config.yaml`, as written; empty
 * when there is no file or no such section.
 */
export async function configServerNames(configDir: string): Promise<readonly string[]> {
  return (await open(join(configDir, "config.yaml"))).servers;
}

type YamlDocument = import("yaml").Document.Parsed;
type YamlStyle = import("yaml").ToStringOptions;

// The document, the names under `mcp.servers`, and how to write it back in the file's style; a
// file that does not parse, or whose `mcp` or `mcp.servers` is not a mapping, is not edited.
async function open(
  path: string,
): Promise<{ document: YamlDocument; servers: string[]; style: YamlStyle }> {
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new McpConfigEditError(`${path}: cannot read: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  const { isMap, LineCounter, parseDocument, visit } = await import("yaml");
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines });
  const [error] = document.errors;
  if (error !== undefined) {
    const pos = error.linePos?.[0];
    throw new McpConfigEditError(
      `${path}${pos ? `:${pos.line}:${pos.col}` : ""}: ${error.message.split("\n")[0]}; ` +
        "`amber config check` lists every problem",
    );
  }
  const where = (keys: string[]): string => {
    const node = document.getIn(keys, true) as { range?: [number] } | undefined;
    if (node?.range === undefined) return path;
    const { line, col } = lines.linePos(node.range[0]);
    return `${path}:${line}:${col}`;
  };
  for (const keys of [[], ["mcp"], ["mcp", "servers"]]) {
    const node = keys.length === 0 ? document.contents : document.getIn(keys, true);
    if (node === null || node === undefined || isMap(node)) continue;
    const isNull = (node as { value?: unknown }).value === null;
    if (isNull && keys.length > 0) continue;
    throw new McpConfigEditError(
      `${where(keys)}: ${keys.join(".") || "the top level"}: expected a mapping`,
    );
  }
  // `mcp:` or `servers:` left empty reads as null: made a mapping to be added to.
  for (const keys of [["mcp"], ["mcp", "servers"]]) {
    const node = document.getIn(keys, true);
    if (node !== undefined && !isMap(node)) document.setIn(keys, document.createNode({}));
  }
  const servers = document.getIn(["mcp", "servers"], true);
  const names = isMap(servers)
    ? servers.items.map((pair) => String((pair.key as { value?: unknown })?.value ?? pair.key))
    : [];
  // Long strings stay on their line; `{a: 1}` stays unpadded when the file writes it so.
  let padded: boolean | undefined;
  const flow = (_: unknown, node: { flow?: boolean; range?: [number, number, number] | null }) => {
    if (padded !== undefined || node.flow !== true || !node.range) return;
    const next = text[node.range[0] + 1];
    if (next !== "}" && next !== "]") padded = next === " ";
  };
  visit(document, { Map: flow, Seq: flow });
  return {
    document,
    servers: names,
    style: { lineWidth: 0, flowCollectionPadding: padded ?? true },
  };
}

function size(node: unknown): number {
  if (node === null || node === undefined) return 0;
  const items = (node as { items?: unknown[] }).items;
  return items === undefined ? 1 : items.length;
}
