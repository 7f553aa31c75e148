// What every test server shares: reading its options from the command line, and serving an
// McpServer over stdio (the default) or over Streamable HTTP on 127.0.0.1 (`--http=PORT`, 0 for a
// free port; the URL is printed on stdout as the first line, so a test can read it).

import process from "node:process";
import { parseArgs } from "node:util";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

/** An SDK server, high level (`McpServer`) or low level (`Server`). */
export interface Connectable {
  /** Serves over `transport`. */
  connect(transport: Transport): Promise<void>;
}

/** The options every server reads, with the ones it adds, as `--name=value` strings. */
export type ServerOptions = Readonly<Record<string, string | undefined>>;

/** Reads `--name=value` options (unknown names are kept; values stay strings). */
export function serverOptions(args: readonly string[] = Deno.args): ServerOptions {
  const { values } = parseArgs({ args: [...args], strict: false, allowPositionals: true });
  const options: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(values)) {
    options[name] = value === true ? "" : typeof value === "string" ? value : undefined;
  }
  return options;
}

/** A numeric option, or `fallback` when it is absent; a value that is not a number throws. */
export function numberOption(options: ServerOptions, name: string, fallback: number): number {
  const raw = options[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new TypeError(`--${name}=${raw} is not a number`);
  return value;
}

/** Resolves after `ms` milliseconds, or rejects at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
  });
}

/** Writes one line to stderr (a stdio server's stdout is the protocol's). */
export function note(line: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(line + "\n"));
}

/**
 * Serves what `create` builds: over stdio by default, or over Streamable HTTP with `--http=PORT`,
 * where every session gets a server of its own (as the SDK requires). Resolves once serving
 * started; stdio ends the process when its input closes.
 */
export async function serve(create: () => Connectable, options: ServerOptions): Promise<void> {
  if (options.http === undefined) {
    // The client closing our stdin is the end of the session (the SDK's transport does not
    // watch for it, and a pending timer would keep the process alive).
    process.stdin.on("end", () => Deno.exit(0));
    await create().connect(new StdioServerTransport());
    return;
  }
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const { promise: listening, resolve } = Promise.withResolvers<void>();
  Deno.serve({
    hostname: "127.0.0.1",
    port: numberOption(options, "http", 0),
    onListen: ({ hostname, port }) => {
      console.log(`http://${hostname}:${port}/mcp`);
      resolve();
    },
  }, async (request) => {
    if (new URL(request.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
    const id = request.headers.get("mcp-session-id");
    if (id !== null) {
      const known = transports.get(id);
      return known
        ? known.handleRequest(request)
        : new Response("unknown session", { status: 404 });
    }
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (session) => void transports.set(session, transport),
        onsessionclosed: (session) => void transports.delete(session),
      });
    await create().connect(transport);
    return transport.handleRequest(request);
  });
  await listening;
}
