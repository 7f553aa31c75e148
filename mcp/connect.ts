/**
 * Connecting to one MCP server: expanding its entry, picking the transport (stdio, Streamable
 * HTTP falling back to HTTP+SSE, or HTTP+SSE), adding headers, a bearer token or OAuth, and the
 * initialize handshake under a deadline, with the client capabilities amber can honour.
 *
 * @module
 */

import { resolve } from "node:path";
import { AmberError, type StartedProcess } from "@amber/core";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/client/sse"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
// @ts-types="@modelcontextprotocol/sdk/client/auth"
import {
  type OAuthClientProvider,
  UnauthorizedError,
} from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type ClientCapabilities,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  ElicitRequestSchema,
  type ElicitResult,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import manifest from "./deno.json" with { type: "json" };
import { createMcpOAuth, type McpOAuth, type OAuthInteraction } from "./oauth.ts";
import { expandEntry, McpConfigError } from "./server_config.ts";
import { stdioEnvironment, StdioTransport } from "./stdio_transport.ts";
import type {
  McpElicitationRequest,
  McpElicitationResult,
  McpSamplingRequest,
  McpSamplingResult,
  McpServerEntry,
  McpServerSpec,
  McpTransportKind,
} from "./types.ts";

/**
 * What amber answers when a server asks something of it. An absent handler means the
 * capability is not advertised, so the server does not ask.
 */
export interface McpClientHandlers {
  /** Answers `sampling/createMessage` (the front end approves each request first). */
  readonly sample?: (params: McpSamplingRequest, signal: AbortSignal) => Promise<McpSamplingResult>;
  /** Answers `elicitation/create`. */
  readonly elicit?: (
    params: McpElicitationRequest,
    signal: AbortSignal,
  ) => Promise<McpElicitationResult>;
  /** The roots the server may work in: the workspace. */
  readonly roots: () => readonly { readonly uri: string; readonly name?: string }[];
}

/** Options of {@linkcode connectServer}. */
export interface ConnectOptions {
  /** The server. */
  readonly spec: McpServerSpec;
  /** amber's environment, for `${VAR}` expansion, the bearer token and the stdio defaults. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The workspace: a stdio server's working directory (its `cwd` is relative to it). */
  readonly workspace: string;
  /** amber's configuration folder (OAuth tokens are kept under it). */
  readonly configDir: string;
  /** What amber answers to the server's requests. */
  readonly handlers: McpClientHandlers;
  /** Receives a stdio server's stderr, line by line. */
  readonly onStderr: (line: string) => void;
  /** Told of a stdio server's process group as soon as it runs. */
  readonly onSpawn?: (process: StartedProcess, argv: readonly string[]) => void;
  /**
   * The deadline of starting and connecting up to the end of `initialize` (ms). OAuth's wait
   * for the user's browser is not counted: `signal` ends that.
   */
  readonly timeoutMs: number;
  /** Gives up on connecting. */
  readonly signal?: AbortSignal;
  /** Shows an OAuth authorization URL to the user; without it OAuth cannot be done. */
  readonly oauth?: OAuthInteraction;
  /** A stdio server's group's time between SIGTERM and SIGKILL when stopped (ms). */
  readonly graceMs?: number;
}

/** A connected server. */
export interface McpConnection {
  /** The SDK client, initialized. */
  readonly client: Client;
  /** The transport in use (an `http` entry may have fallen back to `sse`). */
  readonly transport: McpTransportKind;
  /** `name version` as the server introduced itself. */
  readonly server: string;
  /** Resolves, never rejects, with why the connection ended (`closed` after `close()`). */
  readonly closed: Promise<string>;
  /** Ends the connection; a stdio server's process group is gone when it resolves. */
  close(): Promise<void>;
}

/** A server could not be connected to; the message is the reason, fit to show. */
export class McpConnectError extends AmberError {
  /** The server's name. */
  readonly server: string;
  /** Creates the error for the server `server`. */
  constructor(server: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpConnectError";
    this.server = server;
  }
}

const CLIENT_INFO = { name: "amber", version: manifest.version };

/**
 * Connects to the server of `options.spec` and completes `initialize`. Throws
 * `McpConfigError` (from `server_config.ts`) when the entry needs a variable that is not set,
 * and {@linkcode McpConnectError} with the reason otherwise: a program that cannot start, a
 * server that exits, writes garbage or does not answer within `timeoutMs` (a stdio server is
 * killed then), an HTTP error. Nothing is left running when it throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectServer, McpConnectError } from "./connect.ts";
 * await assert.rejects(
 *   connectServer({
 *     spec: {
 *       name: "gone",
 *       pluginId: "mcp.gone",
 *       source: "config.yaml",
 *       fromWorkspace: false,
 *       entry: { transport: "stdio", command: "sh", args: ["-c", "echo no luck >&2; exit 3"] },
 *     },
 *     env: Deno.env.toObject(),
 *     workspace: Deno.cwd(),
 *     configDir: Deno.cwd(),
 *     handlers: { roots: () => [] },
 *     onStderr: () => {},
 *     timeoutMs: 5000,
 *   }),
 *   (error: unknown) =>
 *     error instanceof McpConnectError &&
 *     error.message === "its process exited with code 3: no luck",
 * );
 * ```
 */
export async function connectServer(options: ConnectOptions): Promise<McpConnection> {
  const entry = expandEntry(options.spec, options.env);
  if (options.signal?.aborted) {
    throw new McpConnectError(options.spec.name, "connecting was cancelled");
  }
  if (entry.transport === "stdio") return await connectStdio(options, entry);
  return await connectRemote(options, entry);
}

function newClient(handlers: McpClientHandlers): Client {
  const capabilities: ClientCapabilities = { roots: { listChanged: true } };
  if (handlers.sample !== undefined) capabilities.sampling = {};
  // Both kinds: the handler shows a URL and lets the user choose; amber opens nothing itself.
  if (handlers.elicit !== undefined) capabilities.elicitation = { form: {}, url: {} };
  const client = new Client(CLIENT_INFO, { capabilities });
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: handlers.roots().map((root) => ({ ...root })),
  }));
  const { sample, elicit } = handlers;
  if (sample !== undefined) {
    client.setRequestHandler(
      CreateMessageRequestSchema,
      // The SDK checks the answer against the specification's schema before it is sent.
      async (request, extra) =>
        (await sample(request.params, extra.signal)) as unknown as CreateMessageResult,
    );
  }
  if (elicit !== undefined) {
    client.setRequestHandler(
      ElicitRequestSchema,
      async (request, extra) =>
        (await elicit(request.params, extra.signal)) as unknown as ElicitResult,
    );
  }
  return client;
}

function serverName(client: Client): string {
  const info = client.getServerVersion();
  return info === undefined ? "unknown" : `${info.name} ${info.version}`;
}

async function connectStdio(
  options: ConnectOptions,
  entry: McpServerEntry,
): Promise<McpConnection> {
  const name = options.spec.name;
  const transport = new StdioTransport({
    command: entry.command!,
    args: entry.args,
    env: stdioEnvironment(options.env, entry.env),
    cwd: resolve(options.workspace, entry.cwd ?? "."),
    onStderr: options.onStderr,
    onSpawn: options.onSpawn,
    graceMs: options.graceMs,
  });
  const client = newClient(options.handlers);
  const outcome = await within(client.connect(transport, handshake(options)), options);
  if (outcome !== "connected") {
    // Whatever happened, the group goes; the reason is the transport's when it ended first.
    await transport.close();
    const ended = await transport.closed;
    const why = outcome === "aborted"
      ? "connecting was cancelled"
      : outcome === "timeout"
      ? `it did not answer initialize within ${seconds(options.timeoutMs)}; its process was killed`
      : ended !== "closed"
      ? ended
      : errorText(outcome.error);
    throw new McpConnectError(name, why, {
      cause: outcome === "aborted" || outcome === "timeout" ? undefined : outcome.error,
    });
  }
  return {
    client,
    transport: "stdio",
    server: serverName(client),
    closed: transport.closed,
    close: () => client.close(),
  };
}

async function connectRemote(
  options: ConnectOptions,
  entry: McpServerEntry,
): Promise<McpConnection> {
  const name = options.spec.name;
  const url = new URL(entry.url!);
  const headers: Record<string, string> = { ...entry.headers };
  if (entry.bearerTokenEnv !== undefined) {
    headers.Authorization = `Bearer ${options.env[entry.bearerTokenEnv]}`;
  }
  const hasAuthorization = Object.keys(headers).some((key) =>
    key.toLowerCase() === "authorization"
  );
  let oauth: McpOAuth | undefined;
  const startOAuth = async (): Promise<McpOAuth> => {
    if (options.oauth === undefined) {
      throw new McpConnectError(
        name,
        "the server requires OAuth, and nothing here can show its authorization page",
      );
    }
    return oauth ??= await createMcpOAuth({
      configDir: options.configDir,
      server: name,
      settings: entry.oauth ?? {},
      env: options.env,
      interaction: options.oauth,
    });
  };
  try {
    if (entry.oauth !== undefined) await startOAuth();
    let kind: McpTransportKind = entry.transport;
    for (let round = 0;; round++) {
      const attempt = await attemptRemote(options, url, headers, kind, oauth?.provider);
      if (attempt.connection !== undefined) {
        // The callback server is needed only while authorizing.
        await oauth?.close().catch(() => {});
        return attempt.connection;
      }
      const error = attempt.error;
      if (error instanceof UnauthorizedError && oauth !== undefined && round < 2) {
        // The provider has shown the authorization page: wait for its code, then connect again.
        await oauth.complete(attempt.transport, options.signal ?? new AbortController().signal);
        continue;
      }
      const status = httpStatus(error);
      if (status === 401 && oauth === undefined && !hasAuthorization && round < 2) {
        await startOAuth();
        continue;
      }
      if (
        kind === "http" && status !== undefined && status >= 400 && status < 500 && status !== 401
      ) {
        // An older server speaks HTTP+SSE only, and refuses the POST of Streamable HTTP.
        kind = "sse";
        continue;
      }
      if (error instanceof McpConnectError) throw error;
      const why = status === undefined
        ? errorText(error)
        : `the server answered HTTP ${status}: ${errorText(error)}`;
      throw new McpConnectError(name, why, { cause: error });
    }
  } catch (error) {
    await oauth?.close().catch(() => {});
    if (error instanceof McpConnectError || error instanceof McpConfigError) throw error;
    throw new McpConnectError(name, errorText(error), { cause: error });
  }
}

interface RemoteAttempt {
  readonly connection?: McpConnection;
  readonly transport: StreamableHTTPClientTransport | SSEClientTransport;
  readonly error?: unknown;
}

async function attemptRemote(
  options: ConnectOptions,
  url: URL,
  headers: Record<string, string>,
  kind: McpTransportKind,
  authProvider: OAuthClientProvider | undefined,
): Promise<RemoteAttempt> {
  const requestInit: RequestInit = { headers };
  const transport = kind === "sse"
    ? new SSEClientTransport(url, { requestInit, authProvider })
    : new StreamableHTTPClientTransport(url, { requestInit, authProvider });
  const client = newClient(options.handlers);
  let lastError: string | undefined;
  let resolveClosed!: (reason: string) => void;
  const closed = new Promise<string>((resolve) => (resolveClosed = resolve));
  client.onerror = (error) => (lastError = errorText(error));
  client.onclose = () => resolveClosed(lastError ?? "closed");
  const outcome = await within(client.connect(transport, handshake(options)), options);
  if (outcome === "connected") {
    // What went wrong on the way in (a server without a GET stream) is not why it ends later.
    lastError = undefined;
    let closing = false;
    client.onclose = () => resolveClosed(closing ? "closed" : lastError ?? "closed");
    return {
      transport,
      connection: {
        client,
        transport: kind,
        server: serverName(client),
        closed,
        close: async () => {
          closing = true;
          await client.close();
        },
      },
    };
  }
  await client.close().catch(() => {});
  if (outcome === "aborted") {
    return { transport, error: new McpConnectError(options.spec.name, "connecting was cancelled") };
  }
  if (outcome === "timeout") {
    const why = `it did not answer initialize within ${seconds(options.timeoutMs)}`;
    return { transport, error: new McpConnectError(options.spec.name, why) };
  }
  return { transport, error: outcome.error };
}

// The SDK's own deadline of initialize (60 s by default) is set past ours, so that ours, which
// says what happened, is the one that fires.
function handshake(options: ConnectOptions): { timeout: number } {
  return { timeout: options.timeoutMs + 1000 };
}

type Outcome = "connected" | "timeout" | "aborted" | { readonly error: unknown };

// Waits for `connecting` until the deadline or the signal, whichever is first.
async function within(connecting: Promise<void>, options: ConnectOptions): Promise<Outcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const signal = options.signal;
  const stops = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.timeoutMs);
    if (signal === undefined) return;
    if (signal.aborted) resolve("aborted");
    onAbort = () => resolve("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([
      connecting.then((): Outcome => "connected", (error): Outcome => ({ error })),
      stops,
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
  }
}

function httpStatus(error: unknown): number | undefined {
  if (error instanceof StreamableHTTPError) return error.code;
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "number" && code >= 100 && code < 600 ? code : undefined;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}
