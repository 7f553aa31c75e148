/**
 * What every request to an MCP server shares: a signal of its own, and why it failed, in words
 * for the model or the user.
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

/**
 * Runs `request` with a signal of its own that aborts when `signal` does. The SDK adds an abort
 * listener to the signal of each request and never removes it: given the run's signal, a session
 * would pile up one listener per call, and a cancel would send `notifications/cancelled` for
 * every request ever made with it. The request's own signal goes with the request.
 */
export async function withRequestSignal<T>(
  signal: AbortSignal,
  request: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const own = new AbortController();
  const forward = (): void => own.abort(signal.reason);
  signal.addEventListener("abort", forward, { once: true });
  try {
    return await request(own.signal);
  } finally {
    signal.removeEventListener("abort", forward);
  }
}
