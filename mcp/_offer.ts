// What a connected MCP server offers: its tools, prompts and resources, each list read whole
// (every page), and an empty list for what the server has no capability for.

// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type {
  Prompt as SdkPrompt,
  Resource as SdkResource,
  Tool as SdkTool,
} from "@modelcontextprotocol/sdk/types.js";

/** The three lists, replaced whole when one is read again. */
export interface Offer {
  readonly tools: readonly SdkTool[];
  readonly prompts: readonly SdkPrompt[];
  readonly resources: readonly SdkResource[];
}

/** One of the lists. */
export type OfferKind = keyof Offer;

/** What a server offers before it is connected, or once it is gone. */
export const NOTHING_OFFERED: Offer = Object.freeze({
  tools: Object.freeze([]),
  prompts: Object.freeze([]),
  resources: Object.freeze([]),
});

/** Reads the three lists at once; rejects when any read fails. */
export async function readOffer(
  client: Client,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Offer> {
  const [tools, prompts, resources] = await Promise.all([
    readList(client, "tools", timeoutMs, signal),
    readList(client, "prompts", timeoutMs, signal),
    readList(client, "resources", timeoutMs, signal),
  ]);
  return { tools, prompts, resources };
}

/** Reads one list, every page of it; each request has `timeoutMs`. */
export async function readList<K extends OfferKind>(
  client: Client,
  kind: K,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Offer[K]> {
  if (client.getServerCapabilities()?.[kind] === undefined) return [];
  const options = { timeout: timeoutMs, ...(signal === undefined ? {} : { signal }) };
  const items: Offer[OfferKind][number][] = [];
  let cursor: string | undefined;
  do {
    const params = cursor === undefined ? {} : { cursor };
    const page = kind === "tools"
      ? await client.listTools(params, options).then((r) => ({ ...r, items: r.tools }))
      : kind === "prompts"
      ? await client.listPrompts(params, options).then((r) => ({ ...r, items: r.prompts }))
      : await client.listResources(params, options).then((r) => ({ ...r, items: r.resources }));
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return items as unknown as Offer[K];
}
