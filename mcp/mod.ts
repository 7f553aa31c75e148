/**
 * `@amber/mcp`: MCP servers as amber plugins. Each configured server becomes the plugin
 * `mcp.<name>`, realized for the session through the official MCP SDK: its tools, prompts and
 * resources are contributions, a `list_changed` notification is a live refresh, and a server
 * that fails is that plugin's fault alone.
 *
 * A host builds {@linkcode McpServers} from the parsed configuration, registers its plugins
 * before the runtime starts, and closes it at the end. `@amber/cli` imports this package only
 * when at least one server is configured.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { McpServers, parseServers } from "@amber/mcp";
 *
 * const { servers: specs, problems } = parseServers(
 *   { docs: { command: "npx", args: ["-y", "docs-server"] } },
 *   "config.yaml",
 *   false,
 * );
 * assert.deepEqual(problems, []);
 * // `connect: false`: listed, never started (what `amber plugins list` does).
 * const servers = new McpServers({ specs, connect: false, env: {}, workspace: "/ws", configDir: "/cfg" });
 * const runtime = new PluginRuntime({ registries: createRegistries(), allOn: true });
 * for (const plugin of servers.plugins()) runtime.register(plugin);
 * await runtime.start();
 * assert.deepEqual(runtime.ids(), ["mcp.docs"]);
 * assert.equal(servers.get("docs")?.state.status, "idle");
 * await runtime.stop();
 * await servers.close();
 * ```
 *
 * @module
 */

export type {
  McpConnectionState,
  McpElicitationRequest,
  McpElicitationResult,
  McpOAuthSettings,
  McpSamplingRequest,
  McpSamplingResult,
  McpServerEntry,
  McpServerSpec,
  McpTransportKind,
} from "./types.ts";
export {
  entryFingerprint,
  type EntryProblem,
  expandEntry,
  MCP_SERVER_NAME,
  McpConfigError,
  mcpPluginId,
  mcpToolName,
  type ParsedMcpJson,
  type ParsedServers,
  parseMcpJson,
  parseServers,
} from "./server_config.ts";
export type { OAuthInteraction } from "./oauth.ts";
export { forgetMcpTokens } from "./tokens.ts";
export { type McpProbe, type McpProbedTool, type McpProbeOptions, probeServer } from "./probe.ts";
export { MCP_OUTPUT_CAP } from "./tool_policy.ts";
export { MCP_MENTION } from "./mention.ts";
export type { McpHostOptions } from "./server_plugin.ts";
export type { McpServerView, McpToolView } from "./server_view.ts";
export {
  type McpRequestHandlers,
  McpServers,
  type McpServersOptions,
  UnknownMcpServerError,
} from "./servers.ts";
