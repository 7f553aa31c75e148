/**
 * `/mcp` in the interactive session: the MCP servers of the session, each with where its
 * connection stands (connecting, connected, reconnecting and when, failed and why, awaiting the
 * user's approval), its tool count and the file that declared it.
 *
 * `/mcp` opens the console, a panel redrawn whenever a server changes: ↑↓ select a server, its
 * tools are listed below the servers, `r` reconnects it, `a` approves a workspace server that
 * waits for approval. `/mcp list`, `/mcp tools NAME`, `/mcp reconnect NAME` and
 * `/mcp approve NAME` do the same as text in the transcript.
 *
 * A workspace server approved here starts the next time amber starts in the workspace: the
 * session's servers were fixed when it opened.
 *
 * @module
 */

import type { McpConnectionState, McpServers, McpServerSpec, McpServerView } from "@amber/mcp";
import type { AwaitingServer } from "../mcp_sources.ts";
import { type PanelSource, SELECTION_MARK } from "./panel_view.ts";

/** What the console reads of the host: its servers and the workspace servers left waiting. */
export interface McpConsoleHost {
  /** The servers of the session (`Host.mcp`); absent when none is registered. */
  readonly mcp?: Pick<McpServers, "list" | "reconnect">;
  /** The workspace servers waiting for the user's approval (`Host.mcpAwaiting`). */
  readonly mcpAwaiting: readonly AwaitingServer[];
}

/** What `/mcp` did: text for the transcript, or the console to open. */
export type McpCommandResult = { readonly text: string } | { readonly panel: PanelSource };

/** The id and title of the console. */
export const MCP_PANEL_ID = "mcp";

/** The manual of `/mcp`. */
export const MCP_MANUAL: string = [
  "/mcp                  the servers, live: ↑↓ select, r reconnect, a approve, Esc close",
  "/mcp list             the servers as text",
  "/mcp tools NAME       a server's tools",
  "/mcp reconnect NAME   close a server's connection and connect again",
  "/mcp approve NAME     approve a server of the workspace's .mcp.json (starts next time)",
].join("\n");

/** How long `/mcp reconnect` waits for the new connection before it answers. */
const RECONNECT_WAIT_MS = 10_000;

/**
 * A connection state in words, as of `now` (epoch ms).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stateText } from "./mcp_panel.ts";
 * assert.equal(stateText({ status: "connecting", attempt: 1 }, 0), "connecting…");
 * assert.equal(
 *   stateText({ status: "reconnecting", attempt: 2, retryAt: 4_000, reason: "exited" }, 1_000),
 *   "reconnecting in 3 s (attempt 2): exited",
 * );
 * assert.equal(stateText({ status: "failed", reason: "spawn ENOENT" }, 0), "failed: spawn ENOENT");
 * ```
 */
export function stateText(state: McpConnectionState, now: number): string {
  switch (state.status) {
    case "idle":
      return "off";
    case "connecting":
      return state.attempt > 1 ? `connecting… (attempt ${state.attempt})` : "connecting…";
    case "connected":
      return `connected (${state.transport}${state.server ? `, ${state.server}` : ""})`;
    case "reconnecting": {
      const seconds = Math.max(0, Math.ceil((state.retryAt - now) / 1000));
      return `reconnecting in ${seconds} s (attempt ${state.attempt}): ${state.reason}`;
    }
    case "failed":
      return `failed: ${state.reason}`;
  }
}

/**
 * The tool count of a server as shown: the offered tools, and the disabled ones if any.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolCount } from "./mcp_panel.ts";
 * const tool = (disabled: boolean) => ({ name: "t", mcpName: "mcp__s__t", description: "", disabled, readOnly: false });
 * assert.equal(toolCount([tool(false), tool(false), tool(true)]), "2 tools, 1 disabled");
 * assert.equal(toolCount([tool(false)]), "1 tool");
 * ```
 */
export function toolCount(tools: McpServerView["tools"]): string {
  const disabled = tools.filter((tool) => tool.disabled).length;
  const offered = tools.length - disabled;
  return `${offered} tool${offered === 1 ? "" : "s"}${disabled ? `, ${disabled} disabled` : ""}`;
}

/**
 * A server's tools, one per line: the name the model sees, the server's own name, marks, and the
 * description's first line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolLines } from "./mcp_panel.ts";
 * assert.deepEqual(toolLines({
 *   name: "basic", pluginId: "mcp.basic", source: "config.yaml",
 *   state: { status: "connected", transport: "stdio", server: "basic 1.0.0" },
 *   tools: [{ name: "mcp__basic__echo", mcpName: "echo", description: "Echoes.\nMore.", disabled: false, readOnly: true }],
 *   prompts: [], resources: [],
 * }), ["mcp__basic__echo  (echo, read-only)  Echoes."]);
 * ```
 */
export function toolLines(server: McpServerView): string[] {
  return server.tools.map((tool) => {
    const marks = [tool.mcpName, ...(tool.readOnly ? ["read-only"] : [])];
    if (tool.disabled) marks.push("disabled");
    const description = tool.description.split("\n")[0].trim();
    return `${tool.name}  (${marks.join(", ")})${description ? `  ${description}` : ""}`;
  });
}

/** One row of the console: a registered server or one awaiting approval. */
interface Row {
  readonly name: string;
  readonly state: string;
  readonly tools: string;
  readonly source: string;
  readonly server?: McpServerView;
  readonly awaiting?: AwaitingServer;
}

/**
 * The console over a host's servers: the panel `/mcp` opens, and the text of its subcommands.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { McpConsole } from "./mcp_panel.ts";
 * const server = {
 *   name: "basic", pluginId: "mcp.basic", source: "config.yaml",
 *   state: { status: "connected", transport: "stdio", server: "basic 1.0.0" } as const,
 *   tools: [{ name: "mcp__basic__echo", mcpName: "echo", description: "Echoes", disabled: false, readOnly: false }],
 *   prompts: [], resources: [],
 * };
 * const mcp = { list: () => [server], reconnect: () => Promise.resolve(server.state) };
 * const mcpConsole = new McpConsole({ mcp, mcpAwaiting: [] }, () => Promise.resolve());
 * const listed = await mcpConsole.command("list");
 * assert.ok("text" in listed);
 * assert.equal(listed.text, "basic  connected (stdio, basic 1.0.0)  1 tool  config.yaml");
 * const opened = await mcpConsole.command("");
 * assert.ok("panel" in opened);
 * assert.deepEqual(opened.panel.render("mcp", 80)?.slice(2), [
 *   "› basic  connected (stdio, basic 1.0.0)  1 tool  config.yaml",
 *   "",
 *   "Tools of basic:",
 *   "  mcp__basic__echo  (echo)  Echoes",
 * ]);
 * ```
 */
export class McpConsole {
  readonly #host: McpConsoleHost;
  readonly #approve: (spec: McpServerSpec) => Promise<void>;
  readonly #now: () => number;
  #selected = 0;
  #note = "";
  // Approved in this session: they start next time, and are no longer shown as waiting.
  readonly #approved = new Set<string>();

  /**
   * A console over `host`; `approve` records a workspace server's approval (the approvals file
   * of `cli/mcp_sources.ts` in the session).
   */
  constructor(
    host: McpConsoleHost,
    approve: (spec: McpServerSpec) => Promise<void>,
    now: () => number = Date.now,
  ) {
    this.#host = host;
    this.#approve = approve;
    this.#now = now;
  }

  /** Runs `/mcp ARG`: `""` opens the console; `list`, `tools`, `reconnect`, `approve` answer. */
  async command(arg: string): Promise<McpCommandResult> {
    const [word = "", name = ""] = arg.trim().split(/\s+/);
    const rows = this.#rows();
    if (word === "" || word === "list") {
      if (rows.length === 0) {
        return {
          text: "no MCP servers: add one with `amber mcp add NAME -- COMMAND ARGS...`, " +
            "under mcp.servers in config.yaml, or in the workspace's .mcp.json",
        };
      }
      if (word === "") return { panel: this.panel() };
      const width = nameWidth(rows);
      return { text: rows.map((row) => rowText(row, width)).join("\n") };
    }
    if (word !== "tools" && word !== "reconnect" && word !== "approve") {
      throw new Error(`unknown subcommand '${word}'; /mcp takes list, tools, reconnect, approve`);
    }
    if (name === "") throw new Error(`usage: /mcp ${word} NAME`);
    const row = rows.find((r) => r.name === name);
    if (row === undefined) {
      throw new Error(
        `no MCP server '${name}'; servers: ${rows.map((r) => r.name).join(", ") || "(none)"}`,
      );
    }
    if (word === "tools") return { text: this.#toolsText(row) };
    if (word === "reconnect") return { text: await this.#reconnect(row) };
    return { text: await this.#approveRow(row) };
  }

  /** The console as a panel: its lines are read from the servers at every frame. */
  panel(): PanelSource {
    return {
      list: () => [{ id: MCP_PANEL_ID, title: "MCP servers", owner: "core" }],
      render: (id, _width) => id === MCP_PANEL_ID ? this.lines() : undefined,
      key: (id, key) => id === MCP_PANEL_ID && this.key(key),
    };
  }

  /** The console's lines: the heading, a row per server (the selected one marked), its tools. */
  lines(): string[] {
    const rows = this.#rows();
    this.#selected = Math.max(0, Math.min(this.#selected, rows.length - 1));
    const lines = [
      "↑↓ select · r reconnect · a approve (a workspace server) · Esc close" +
      (this.#note ? `  —  ${this.#note}` : ""),
      "",
    ];
    const width = nameWidth(rows);
    rows.forEach((row, i) => {
      lines.push(`${i === this.#selected ? `${SELECTION_MARK} ` : "  "}${rowText(row, width)}`);
    });
    const row = rows[this.#selected];
    if (row !== undefined) lines.push("", ...this.#toolsText(row).split("\n"));
    return lines;
  }

  /** A key while the console is open: ↑↓, `r`, `a`. True when it was used. */
  key(key: string): boolean {
    const rows = this.#rows();
    const row = rows[this.#selected];
    if (key === "up" || key === "down") {
      if (rows.length === 0) return false;
      this.#selected = (this.#selected + (key === "up" ? rows.length - 1 : 1)) % rows.length;
      return true;
    }
    if (row === undefined || (key !== "r" && key !== "a")) return false;
    const action = key === "r" ? this.#reconnect(row) : this.#approveRow(row);
    this.#note = key === "r" ? `reconnecting ${row.name}…` : `approving ${row.name}…`;
    action.then(
      (note) => this.#note = note,
      (error: Error) => this.#note = error.message,
    );
    return true;
  }

  #rows(): Row[] {
    const now = this.#now();
    const rows: Row[] = (this.#host.mcp?.list() ?? []).map((server) => ({
      name: server.name,
      state: stateText(server.state, now),
      tools: server.state.status === "connected" ? toolCount(server.tools) : "",
      source: server.source,
      server,
    }));
    for (const awaiting of this.#host.mcpAwaiting) {
      const approved = this.#approved.has(awaiting.spec.name);
      rows.push({
        name: awaiting.spec.name,
        state: approved
          ? "approved: starts the next time amber starts here"
          : `awaiting approval${awaiting.changed ? " (its entry changed)" : ""}`,
        tools: "",
        source: awaiting.spec.source,
        awaiting,
      });
    }
    return rows;
  }

  #toolsText(row: Row): string {
    if (row.server === undefined) return `${row.name} is not started: ${row.state}`;
    if (row.server.state.status !== "connected") {
      return `${row.name} has no tools while it is not connected (${row.state})`;
    }
    const lines = toolLines(row.server);
    if (lines.length === 0) return `${row.name} offers no tools`;
    return [`Tools of ${row.name}:`, ...lines.map((line) => `  ${line}`)].join("\n");
  }

  async #reconnect(row: Row): Promise<string> {
    const mcp = this.#host.mcp;
    if (row.server === undefined || mcp === undefined) {
      return `${row.name} is not started (${row.state}); /mcp approve ${row.name} approves it`;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), RECONNECT_WAIT_MS);
    });
    try {
      const state = await Promise.race([mcp.reconnect(row.name), waited]);
      if (state === undefined) return `${row.name}: still connecting; /mcp shows how it goes`;
      return `${row.name}: ${stateText(state, this.#now())}`;
    } finally {
      clearTimeout(timer);
    }
  }

  async #approveRow(row: Row): Promise<string> {
    if (row.awaiting === undefined) return `${row.name} needs no approval (${row.source})`;
    await this.#approve(row.awaiting.spec);
    this.#approved.add(row.name);
    return `approved ${row.name} of ${row.source}: it starts the next time amber starts here`;
  }
}

// The names padded to the longest, so the states line up.
function nameWidth(rows: readonly Row[]): number {
  return Math.max(0, ...rows.map((row) => row.name.length));
}

function rowText(row: Row, width: number): string {
  return [row.name.padEnd(width), row.state, row.tools, row.source].filter((part) => part !== "")
    .join("  ");
}
