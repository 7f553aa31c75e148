/**
 * What MCP servers log (their `notifications/message` and a stdio server's stderr), kept per server
 * in the config directory, `mcp/logs/<name>.log`, for `amber doctor` and the user, and never
 * printed on the screen of a session.
 *
 * @module
 */

import type { Diagnostic } from "@amber/core";
import { join } from "node:path";

/** The folder of the logs, in the config directory. */
export const MCP_LOGS_DIR: string = join("mcp", "logs");

/** A log grows to this many bytes, then keeps its newer half. */
export const MCP_LOG_MAX_BYTES = 256 * 1024;

// One line of a log at most (characters): a server that prints a megabyte on one line does not
// push everything else out.
const MAX_LINE = 2000;

/**
 * Whether `diagnostic` is what an MCP server logged (`where: "log"` of an `mcp.` plugin): kept
 * in its log for `amber doctor`, never printed by a session.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isMcpLog } from "./mcp_logs.ts";
 * assert.equal(isMcpLog({ pluginId: "mcp.docs", where: "log", message: "started" }), true);
 * assert.equal(isMcpLog({ pluginId: "mcp.docs", where: "tool", message: "failed" }), false);
 * ```
 */
export function isMcpLog(diagnostic: Diagnostic): boolean {
  return diagnostic.where === "log" && diagnostic.pluginId.startsWith("mcp.");
}

/** The log file of the server whose plugin is `pluginId` (`mcp.<name>`). */
export function mcpLogPath(configDir: string, pluginId: string): string {
  return join(configDir, MCP_LOGS_DIR, `${pluginId.replace(/^mcp\./, "")}.log`);
}

/**
 * Appends servers' log lines to their files, in order, without holding up the caller; a log that
 * cannot be written is given up on quietly (logging must never break a session).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { McpLogBook, mcpLogPath, readMcpLogs } from "./mcp_logs.ts";
 * const dir = await Deno.makeTempDir();
 * const book = new McpLogBook(dir, () => new Date("2026-12-01T10:00:00Z"));
 * book.append("mcp.docs", "info: ready");
 * book.append("mcp.docs", "stderr: listening\nsecond line");
 * await book.flush();
 * assert.equal(
 *   await Deno.readTextFile(mcpLogPath(dir, "mcp.docs")),
 *   "2026-12-01T10:00:00.000Z info: ready\n" +
 *     "2026-12-01T10:00:00.000Z stderr: listening second line\n",
 * );
 * const [log] = await readMcpLogs(dir, 1);
 * assert.deepEqual(log.last, ["2026-12-01T10:00:00.000Z stderr: listening second line"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class McpLogBook {
  readonly #configDir: string;
  readonly #now: () => Date;
  #queue: Promise<void> = Promise.resolve();
  #folder: Promise<boolean> | undefined;

  /** Logs under `configDir`; `now` stamps the lines. */
  constructor(configDir: string, now: () => Date = () => new Date()) {
    this.#configDir = configDir;
    this.#now = now;
  }

  /** Queues one line of the server whose plugin is `pluginId`. */
  append(pluginId: string, message: string): void {
    const text = message.replace(/[\r\n]+/g, " ").slice(0, MAX_LINE);
    const line = `${this.#now().toISOString()} ${text}\n`;
    const path = mcpLogPath(this.#configDir, pluginId);
    this.#queue = this.#queue.then(() => this.#write(path, line)).catch(() => {});
  }

  /** Resolves once every line queued so far is written (or given up on). */
  flush(): Promise<void> {
    return this.#queue;
  }

  async #write(path: string, line: string): Promise<void> {
    this.#folder ??= Deno.mkdir(join(this.#configDir, MCP_LOGS_DIR), {
      recursive: true,
      mode: 0o700,
    })
      .then(() => true, () => false);
    if (!(await this.#folder)) return;
    await Deno.writeTextFile(path, line, { append: true, mode: 0o600 });
    const { size } = await Deno.stat(path);
    if (size <= MCP_LOG_MAX_BYTES) return;
    const text = await Deno.readTextFile(path);
    const half = text.slice(text.length - Math.floor(MCP_LOG_MAX_BYTES / 2));
    await Deno.writeTextFile(path, half.slice(half.indexOf("\n") + 1), { mode: 0o600 });
  }
}

/** One server's log as {@linkcode readMcpLogs} found it. */
export interface McpLog {
  /** The server's name. */
  readonly server: string;
  /** The file. */
  readonly path: string;
  /** Its lines in all. */
  readonly lines: number;
  /** Its last lines, oldest first. */
  readonly last: readonly string[];
}

/** Every server's log in `configDir`, by name, with its last `count` lines; none when there is none. */
export async function readMcpLogs(configDir: string, count: number): Promise<McpLog[]> {
  const folder = join(configDir, MCP_LOGS_DIR);
  const logs: McpLog[] = [];
  try {
    for await (const entry of Deno.readDir(folder)) {
      if (!entry.isFile || !entry.name.endsWith(".log")) continue;
      const path = join(folder, entry.name);
      const lines = (await Deno.readTextFile(path)).split("\n").filter((line) => line !== "");
      logs.push({
        server: entry.name.slice(0, -".log".length),
        path,
        lines: lines.length,
        last: lines.slice(-count),
      });
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return logs.sort((a, b) => a.server.localeCompare(b.server));
}
