/**
 * What a front end (`amber mcp list`, `/mcp`) shows of one server: its state and what it offers.
 *
 * @module
 */

import type { Offer } from "./_offer.ts";
import { mcpToolName } from "./server_config.ts";
import type { McpConnectionState, McpServerSpec } from "./types.ts";

/** A server's tool as {@linkcode McpServerView} lists it. */
export interface McpToolView {
  /** The name the model sees: `mcp__<server>__<tool>`. */
  readonly name: string;
  /** The server's own name for it. */
  readonly mcpName: string;
  /** Its description, as the server gives it. */
  readonly description: string;
  /** Left out of the model's tools by the entry's `disabledTools`. */
  readonly disabled: boolean;
  /** The server marks it `readOnlyHint`. */
  readonly readOnly: boolean;
}

/** What a front end shows of one server (`amber mcp list`, `/mcp`). */
export interface McpServerView {
  /** The name as configured. */
  readonly name: string;
  /** Its plugin, `mcp.<name in lower case>`. */
  readonly pluginId: string;
  /** Where it was declared: `config.yaml` or a workspace's `.mcp.json`. */
  readonly source: string;
  /** Where its connection stands. */
  readonly state: McpConnectionState;
  /** Its tools, the disabled ones too, while it is connected. */
  readonly tools: readonly McpToolView[];
  /** The names of its prompts, while it is connected. */
  readonly prompts: readonly string[];
  /** Its resources, while it is connected (none when it has no resources capability). */
  readonly resources: readonly { readonly uri: string; readonly name: string }[];
}

/**
 * The view of server `spec` in `state`, offering `offer` (nothing unless it is connected).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { serverView } from "./server_view.ts";
 * const spec = {
 *   name: "docs",
 *   pluginId: "mcp.docs",
 *   entry: { transport: "stdio" as const, command: "docs", disabledTools: ["wipe"] },
 *   source: "config.yaml",
 *   fromWorkspace: false,
 * };
 * const view = serverView(spec, { status: "connected", transport: "stdio", server: "docs 1" }, {
 *   tools: [
 *     { name: "search", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
 *     { name: "wipe", inputSchema: { type: "object" } },
 *   ],
 *   prompts: [],
 *   resources: [],
 * });
 * assert.deepEqual(view.tools.map((tool) => [tool.name, tool.readOnly, tool.disabled]), [
 *   ["mcp__docs__search", true, false],
 *   ["mcp__docs__wipe", false, true],
 * ]);
 * ```
 */
export function serverView(
  spec: McpServerSpec,
  state: McpConnectionState,
  offer: Offer,
): McpServerView {
  const disabled = new Set(spec.entry.disabledTools ?? []);
  return {
    name: spec.name,
    pluginId: spec.pluginId,
    source: spec.source,
    state,
    tools: offer.tools.map((tool) => ({
      name: mcpToolName(spec.name, tool.name),
      mcpName: tool.name,
      description: tool.description ?? "",
      disabled: disabled.has(tool.name),
      readOnly: tool.annotations?.readOnlyHint === true,
    })),
    prompts: offer.prompts.map((prompt) => prompt.name),
    resources: offer.resources.map(({ uri, name }) => ({ uri, name })),
  };
}
