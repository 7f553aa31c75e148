/**
 * MCP servers as amber plugins.
 *
 * @module
 */

export type {
  McpConnectionState,
  McpOAuthSettings,
  McpServerEntry,
  McpServerSpec,
  McpTransportKind,
} from "./types.ts";
