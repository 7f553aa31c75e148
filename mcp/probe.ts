/**
 * One server connected by itself, outside any session, to see what it offers: what
 * `amber mcp tools` and `amber mcp test` print. The SDK is loaded only when a probe runs.
 *
 * @module
 */

import { readOffer } from "./_offer.ts";
import { workspaceRoots } from "./_roots.ts";
import type { OAuthInteraction } from "./oauth.ts";
import type { McpServerSpec, McpTransportKind } from "./types.ts";

/** Options of {@linkcode probeServer}. */
export interface McpProbeOptions {
  /** The server. */
  readonly spec: McpServerSpec;
  /** amber's environment, for `${VAR}` expansion. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The workspace: the server's root, and a stdio server's working directory. */
  readonly workspace: string;
  /** amber's configuration folder (OAuth tokens). */
  readonly configDir: string;
  /** The deadline of connecting and of each list read (ms). */
  readonly timeoutMs: number;
  /** Receives a stdio server's stderr, line by line. */
  readonly onStderr?: (line: string) => void;
  /** Shows an OAuth authorization URL, for a server that asks for one. */
  readonly oauth?: OAuthInteraction;
}

/** One tool as a server offers it. */
export interface McpProbedTool {
  /** The server's name for it. */
  readonly name: string;
  /** Its description. */
  readonly description: string;
  /** Whether the server marks it `readOnlyHint`. */
  readonly readOnly: boolean;
  /** Whether the server marks it `destructiveHint`. */
  readonly destructive: boolean;
}

/** What a server offers, and how the connection went. */
export interface McpProbe {
  /** The transport used (an `http` entry may have fallen back to `sse`). */
  readonly transport: McpTransportKind;
  /** The server's name and version, as it introduced itself. */
  readonly server: string;
  /** From the start to the end of the lists' reading (ms). */
  readonly ms: number;
  /** Its tools. */
  readonly tools: readonly McpProbedTool[];
  /** Its prompts' names. */
  readonly prompts: readonly string[];
  /** Its resources. */
  readonly resources: readonly { readonly uri: string; readonly name: string }[];
}

/**
 * Connects `spec`'s server, reads every tool, prompt and resource it offers, and closes it (a
 * stdio server's processes are gone when it resolves). Rejects with the reason it could not
 * connect or list; sampling and elicitation requests are refused, as no one is asked.
 *
 * @example
 * ```ts ignore
 * const probe = await probeServer({ spec, env: Deno.env.toObject(), workspace, configDir, timeoutMs: 30_000 });
 * console.log(`${probe.tools.length} tools over ${probe.transport}`);
 * ```
 */
export async function probeServer(options: McpProbeOptions): Promise<McpProbe> {
  const { connectServer } = await import("./connect.ts");
  const started = performance.now();
  const connection = await connectServer({
    spec: options.spec,
    env: options.env,
    workspace: options.workspace,
    configDir: options.configDir,
    handlers: {
      roots: () => workspaceRoots(options.workspace),
    },
    onStderr: options.onStderr ?? (() => {}),
    timeoutMs: options.timeoutMs,
    ...(options.oauth === undefined ? {} : { oauth: options.oauth }),
  });
  try {
    const offer = await readOffer(connection.client, options.timeoutMs);
    return {
      transport: connection.transport,
      server: connection.server,
      ms: Math.round(performance.now() - started),
      tools: offer.tools.map((tool) => ({
        name: tool.name,
        description: tool.description ?? "",
        readOnly: tool.annotations?.readOnlyHint === true,
        destructive: tool.annotations?.destructiveHint === true,
      })),
      prompts: offer.prompts.map((prompt) => prompt.name),
      resources: offer.resources.map((resource) => ({ uri: resource.uri, name: resource.name })),
    };
  } finally {
    await connection.close();
  }
}
