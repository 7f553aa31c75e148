/**
 * How the tools of one MCP server are offered and run, apart from the mapping itself so that the
 * plugin shell reads it without loading the SDK.
 *
 * @module
 */

/** How the tools of one server are offered and run. */
export interface McpToolPolicy {
  /**
   * Whether a tool the server marks `readOnlyHint` runs without asking. Every other tool asks,
   * whatever this says.
   */
  readonly trustReadOnly: boolean;
  /**
   * The deadline of one request, in ms. A progress notification from the server starts it over,
   * so a long call that keeps reporting is not cut off.
   */
  readonly timeoutMs: number;
  /** The most characters of text a result sends to the model; the rest is cut, and the cut said. */
  readonly outputCap: number;
}

/**
 * The characters of text one MCP result sends to the model at most, as many as the `bash` tool
 * keeps.
 */
export const MCP_OUTPUT_CAP = 30_000;
