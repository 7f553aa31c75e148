/**
 * Why a request to an MCP server failed, in words for the model or the user.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/types"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

/** An error as one line of text. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Why a request to a server failed, in words: cancelled (the server was told), timed out after
 * `timeoutMs`, or the server's own error. `signal` is the request's, when it had one.
 */
export function requestError(error: unknown, timeoutMs: number, signal?: AbortSignal): string {
  // The SDK rejects an aborted request with a timeout code too; the signal tells them apart.
  if (signal?.aborted === true) return "cancelled: the server was told to stop";
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return `timed out: the server did not answer (or report progress) within ${seconds(timeoutMs)}`;
  }
  return errorText(error);
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
