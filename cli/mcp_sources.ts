/**
 * Where the MCP servers of a session come from: `mcp.servers` of `config.yaml`, and the
 * workspace's `.mcp.json`, whose servers start only once the user approved them. An approval is
 * kept in `<config>/mcp/approvals.json` under the workspace's real path and the server's name,
 * with the fingerprint of the entry as approved: a changed entry is asked about again.
 *
 * The host loads this module (and `@amber/mcp` with it) only when a server is configured or the
 * workspace has a `.mcp.json`.
 *
 * @module
 */

import { type AmberConfig, AmberError, withFileLock } from "@amber/core";
import { entryFingerprint, type McpServerSpec, parseMcpJson, parseServers } from "@amber/mcp";
import { join } from "node:path";
import { writeTextAtomic } from "./atomic_file.ts";

/** The name of a workspace's file of MCP servers, at its root. */
export const MCP_JSON = ".mcp.json";

/** The file of approvals, in the config directory. */
export function approvalsPath(configDir: string): string {
  return join(configDir, "mcp", "approvals.json");
}

/** The approvals file cannot be read as one. */
export class McpApprovalsError extends AmberError {
  /** The file. */
  readonly path: string;
  /** Creates the error for `path`. */
  constructor(path: string, detail: string, options?: ErrorOptions) {
    super(`${path}: ${detail}`, options);
    this.name = "McpApprovalsError";
    this.path = path;
  }
}

/** A workspace's server that is not started: never approved, or changed since. */
export interface AwaitingServer {
  /** The server. */
  readonly spec: McpServerSpec;
  /** True when an approval exists for an entry that has changed since. */
  readonly changed: boolean;
}

/** The servers of a session, by where they stand. */
export interface McpSources {
  /** The servers to register: those of `config.yaml`, then the approved ones of `.mcp.json`. */
  readonly specs: readonly McpServerSpec[];
  /** The workspace's servers that wait for an approval. */
  readonly awaiting: readonly AwaitingServer[];
  /**
   * What was wrong: `.mcp.json` problems (`path: mcpServers.NAME.key: message`), a workspace
   * server whose plugin id a `config.yaml` one has, an approvals file that cannot be read.
   */
  readonly problems: readonly string[];
}

/** Options of {@linkcode mcpSources}. */
export interface McpSourcesOptions {
  /** The config directory (the approvals file is in it). */
  readonly configDir: string;
  /** The workspace root (its `.mcp.json`). */
  readonly workspace: string;
  /** The configuration; its `mcp.servers` were checked when `config.yaml` was read. */
  readonly config: AmberConfig;
  /**
   * Asked about each workspace server that waits for approval; a yes is remembered. Without
   * it, such a server is not started.
   */
  readonly approve?: (spec: McpServerSpec) => Promise<boolean>;
}

/**
 * Reads the servers of `config.yaml` and of the workspace's `.mcp.json`, and sorts the
 * workspace's into approved and awaiting (asking `approve` about the latter when given).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { approveServer, mcpSources } from "./mcp_sources.ts";
 * const configDir = await Deno.makeTempDir();
 * const workspace = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${workspace}/.mcp.json`,
 *   JSON.stringify({ mcpServers: { files: { command: "files-server" } } }),
 * );
 * const config = { plugins: {}, mcp: { servers: { docs: { url: "https://example.com/mcp" } } } };
 * const before = await mcpSources({ configDir, workspace, config });
 * assert.deepEqual(before.specs.map((spec) => spec.name), ["docs"]);
 * assert.deepEqual(before.awaiting.map((a) => [a.spec.name, a.changed]), [["files", false]]);
 * await approveServer(configDir, workspace, before.awaiting[0].spec);
 * const after = await mcpSources({ configDir, workspace, config });
 * assert.deepEqual(after.specs.map((spec) => spec.name), ["docs", "files"]);
 * assert.equal(after.awaiting.length, 0);
 * await Deno.remove(configDir, { recursive: true });
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export async function mcpSources(options: McpSourcesOptions): Promise<McpSources> {
  const problems: string[] = [];
  const servers = options.config.mcp?.servers;
  // config.yaml's problems were reported when it was read; what is left here parses.
  const specs: McpServerSpec[] = servers === undefined
    ? []
    : [...parseServers(servers, "config.yaml", false).servers];
  const workspace = await readWorkspaceServers(options.workspace);
  if (workspace === undefined) return { specs, awaiting: [], problems };
  problems.push(...workspace.problems);
  let approvals: Approvals = {};
  try {
    approvals = await readApprovals(options.configDir);
  } catch (error) {
    problems.push(`${(error as Error).message}; the workspace's servers count as not approved`);
  }
  const key = await workspaceKey(options.workspace);
  const approved = approvals[key] ?? {};
  const awaiting: AwaitingServer[] = [];
  for (const spec of workspace.servers) {
    const twin = specs.find((other) => other.pluginId === spec.pluginId);
    if (twin !== undefined) {
      problems.push(
        `${spec.source}: mcpServers.${spec.name}: left out: the server '${twin.name}' of ` +
          `config.yaml has the same plugin id (${spec.pluginId})`,
      );
      continue;
    }
    const fingerprint = await entryFingerprint(spec.entry);
    const recorded = approved[spec.name];
    if (recorded === fingerprint) {
      specs.push(spec);
      continue;
    }
    if (options.approve !== undefined && await options.approve(spec)) {
      await approveServer(options.configDir, options.workspace, spec);
      specs.push(spec);
      continue;
    }
    awaiting.push({ spec, changed: recorded !== undefined });
  }
  return { specs, awaiting, problems };
}

/** The servers of a workspace's `.mcp.json` and its problems. */
export interface WorkspaceServers {
  /** The file. */
  readonly path: string;
  /** Its servers, in the order written. */
  readonly servers: readonly McpServerSpec[];
  /** Its problems, each naming the file and the key. */
  readonly problems: readonly string[];
}

/**
 * Reads `<workspace>/.mcp.json`; `undefined` when there is none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readWorkspaceServers } from "./mcp_sources.ts";
 * const workspace = await Deno.makeTempDir();
 * assert.equal(await readWorkspaceServers(workspace), undefined);
 * await Deno.writeTextFile(`${workspace}/.mcp.json`, '{"mcpServers": {"a": {"command": "x"}}}');
 * const read = await readWorkspaceServers(workspace);
 * assert.deepEqual(read?.servers.map((spec) => [spec.pluginId, spec.fromWorkspace]), [
 *   ["mcp.a", true],
 * ]);
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export async function readWorkspaceServers(
  workspace: string,
): Promise<WorkspaceServers | undefined> {
  const path = join(workspace, MCP_JSON);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    return { path, servers: [], problems: [`${path}: cannot read: ${(error as Error).message}`] };
  }
  return { path, ...parseMcpJson(text, path) };
}

/**
 * Records that the user approved `spec`, a server of the workspace's `.mcp.json`, as it stands
 * now. Writers of the file take its lock, and the file is replaced atomically.
 */
export async function approveServer(
  configDir: string,
  workspace: string,
  spec: McpServerSpec,
): Promise<void> {
  const path = approvalsPath(configDir);
  const key = await workspaceKey(workspace);
  const fingerprint = await entryFingerprint(spec.entry);
  await Deno.mkdir(join(configDir, "mcp"), { recursive: true });
  await withFileLock(path, async () => {
    const approvals = await readApprovals(configDir);
    const next: Approvals = {
      ...approvals,
      [key]: { ...approvals[key], [spec.name]: fingerprint },
    };
    await writeTextAtomic(path, `${JSON.stringify({ version: 1, workspaces: next }, null, 2)}\n`);
  });
}

/**
 * Whether `spec`, a server of the workspace's `.mcp.json`, is approved as it stands now.
 * A file that cannot be read throws a {@linkcode McpApprovalsError}.
 */
export async function isApproved(
  configDir: string,
  workspace: string,
  spec: McpServerSpec,
): Promise<boolean> {
  const approvals = await readApprovals(configDir);
  const recorded = approvals[await workspaceKey(workspace)]?.[spec.name];
  return recorded !== undefined && recorded === await entryFingerprint(spec.entry);
}

// Workspace real path -> server name -> fingerprint.
type Approvals = { readonly [workspace: string]: { readonly [name: string]: string } };

async function readApprovals(configDir: string): Promise<Approvals> {
  const path = approvalsPath(configDir);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return {};
    throw new McpApprovalsError(path, `cannot read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new McpApprovalsError(path, `not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const workspaces = (data as { workspaces?: unknown } | null)?.workspaces;
  if (!isRecord(workspaces) || !Object.values(workspaces).every(isStringRecord)) {
    throw new McpApprovalsError(
      path,
      'expected {"version": 1, "workspaces": {PATH: {NAME: FINGERPRINT}}}',
    );
  }
  return workspaces as Approvals;
}

// A workspace reached through a link is the same workspace.
async function workspaceKey(workspace: string): Promise<string> {
  try {
    return await Deno.realPath(workspace);
  } catch {
    return workspace;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringRecord(value: unknown): boolean {
  return isRecord(value) && Object.values(value).every((item) => typeof item === "string");
}
