/**
 * The HTTP server of `amber serve`: sessions as resources, each with its own host on its own
 * workspace, every route behind a bearer token, errors as problem+json naming the field. A
 * session's events stream as Server-Sent Events numbered by their offset, replayable from one
 * (`?from=N` or `Last-Event-ID`), so that a client that went away mid-turn reattaches.
 *
 * @module
 */

import type { ApprovalPolicy, Diagnostic, Plugin } from "@amber/core";
import { PluginDependentsError, UnknownPluginError } from "@amber/core";
import type { ApprovalAnswer } from "@amber/core/kernel";
import type { EnvReader, ProviderOverrides } from "../provider_settings.ts";
import type { LoggedEvent } from "./event_log.ts";
import { ProblemError, problemResponse } from "./problem.ts";
import {
  choiceField,
  DEFAULT_BODY_LIMIT,
  readJsonObject,
  stringField,
  stringsField,
} from "./request_body.ts";
import { ServedSession } from "./served_session.ts";
// Imported, not read from disk, so that `deno compile` and `deno bundle` carry it.
import openapiDocument from "./openapi.json" with { type: "json" };

/** What {@linkcode startServer} takes. */
export interface ServerOptions {
  /** The address to listen on; 127.0.0.1 by default. */
  readonly hostname?: string;
  /** The port; 0 (any free one) by default. */
  readonly port?: number;
  /** The bearer token every request must carry. */
  readonly token: string;
  /** The plugins each session's host starts with. */
  readonly plugins: () => readonly Plugin[];
  /** The config directory; amber's default when absent. */
  readonly configDir?: string;
  /** Whether the third-party plugins of `plugins.lock.json` load too; true by default. */
  readonly thirdParty?: boolean;
  /** Reads an environment variable (a provider's key); `Deno.env.get` by default. */
  readonly env?: EnvReader;
  /**
   * What a session uses when its request leaves them out: `amber serve`'s `--provider`,
   * `--model`, `--base-url` and `--effort`; config.yaml's otherwise.
   */
  readonly defaults?: ProviderOverrides;
  /** The largest request body, in bytes; 1 MB by default. */
  readonly bodyLimit?: number;
  /** How many events each session keeps for replay. */
  readonly eventCapacity?: number;
  /** Receives each session host's diagnostics (a plugin's fault, a corrupt file). */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
}

/** A running server. */
export interface Server extends AsyncDisposable {
  /** Its base URL, `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Closes every session (cancelling running turns) and stops listening. */
  close(): Promise<void>;
}

const APPROVALS: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];
const ANSWERS: readonly ApprovalAnswer[] = ["once", "always", "deny"];
const encoder = new TextEncoder();

/**
 * Starts the server; resolves once it listens.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startServer } from "./server.ts";
 * await using server = await startServer({ token: "t0ken", plugins: () => [] });
 * const refused = await fetch(`${server.url}/sessions`);
 * assert.equal(refused.status, 401);
 * await refused.body?.cancel();
 * const listed = await fetch(`${server.url}/sessions`, {
 *   headers: { authorization: "Bearer t0ken" },
 * });
 * assert.deepEqual(await listed.json(), { sessions: [] });
 * ```
 */
export async function startServer(options: ServerOptions): Promise<Server> {
  const sessions = new Map<string, ServedSession>();
  const expected = encoder.encode(`Bearer ${options.token}`);
  let closing: Promise<void> | undefined;
  const handle = async (request: Request): Promise<Response> => {
    try {
      if (closing !== undefined) throw new ProblemError(503, "the server is closing");
      if (!sameBytes(encoder.encode(request.headers.get("authorization") ?? ""), expected)) {
        throw new ProblemError(401, "a bearer token is required (Authorization: Bearer TOKEN)");
      }
      return await route(request, sessions, { ...options, closing: () => closing !== undefined });
    } catch (error) {
      if (error instanceof ProblemError) {
        return problemResponse(
          error,
          error.status === 401 ? { "www-authenticate": 'Bearer realm="amber"' } : {},
        );
      }
      const detail = error instanceof Error ? error.message : String(error);
      return problemResponse(new ProblemError(500, detail, undefined, { cause: error }));
    }
  };
  const { promise: listening, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    onListen: (addr) => resolve(addr as Deno.NetAddr),
  }, handle);
  const addr = await listening;
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  const close = () =>
    closing ??= (async () => {
      await Promise.all([...sessions.values()].map((session) => session.close()));
      sessions.clear();
      await server.shutdown();
    })();
  return { url: `http://${host}:${addr.port}`, close, [Symbol.asyncDispose]: close };
}

// The server's options, and whether it is closing.
type RouteOptions = ServerOptions & { readonly closing: () => boolean };

async function route(
  request: Request,
  sessions: Map<string, ServedSession>,
  options: RouteOptions,
): Promise<Response> {
  const url = new URL(request.url);
  const parts = pathParts(url);
  const method = request.method;
  if (parts.length === 1 && parts[0] === "openapi.json" && method === "GET") {
    return json(200, openapiDocument);
  }
  if (parts[0] !== "sessions") throw new ProblemError(404, `no route ${url.pathname}`);
  if (parts.length === 1) {
    if (method === "GET") {
      return json(200, { sessions: [...sessions.values()].map((s) => s.summary()) });
    }
    if (method === "POST") return await create(request, sessions, options);
    throw notAllowed(method, url);
  }
  const session = sessions.get(parts[1]);
  if (session === undefined) throw new ProblemError(404, `no session '${parts[1]}'`, "id");
  const [, , what, item, verb] = parts;
  const is = (m: string, length: number) => method === m && parts.length === length;
  if (what === undefined) {
    if (is("GET", 2)) return json(200, { ...session.summary(), events: session.log.next });
    if (is("DELETE", 2)) {
      sessions.delete(session.id);
      await session.close();
      return empty();
    }
  } else if (what === "transcript" && is("GET", 3)) {
    return json(200, { messages: session.messages });
  } else if (what === "prompt" && is("POST", 3)) {
    const body = await readJsonObject(request, options.bodyLimit ?? DEFAULT_BODY_LIMIT);
    return json(202, session.prompt(stringField(body, "text")!));
  } else if (what === "events" && is("GET", 3)) {
    return events(session, eventsFrom(request, url));
  } else if (what === "approvals" && is("POST", 4)) {
    const body = await readJsonObject(request, options.bodyLimit ?? DEFAULT_BODY_LIMIT);
    session.answer(item, choiceField(body, "answer", ANSWERS)!);
    return empty();
  } else if (what === "cancel" && is("POST", 3)) {
    session.cancel();
    return empty();
  } else if (what === "plugins") {
    if (is("GET", 3)) return json(200, { plugins: session.plugins() });
    if (is("POST", 5) && (verb === "enable" || verb === "disable")) {
      return await switchPlugin(session, item, verb, url);
    }
  }
  throw new ProblemError(404, `no route ${method} ${url.pathname}`);
}

async function create(
  request: Request,
  sessions: Map<string, ServedSession>,
  options: RouteOptions,
): Promise<Response> {
  const body = await readJsonObject(request, options.bodyLimit ?? DEFAULT_BODY_LIMIT);
  const workspace = stringField(body, "workspace")!;
  const provider = stringField(body, "provider", true);
  const model = stringField(body, "model", true);
  const baseUrl = stringField(body, "baseUrl", true);
  const approve = choiceField(body, "approve", APPROVALS, true);
  const plugins = body.plugins;
  if (
    plugins !== undefined &&
    (typeof plugins !== "object" || plugins === null || Array.isArray(plugins))
  ) {
    throw new ProblemError(400, "plugins must be an object", "plugins");
  }
  const selection = (plugins ?? {}) as Record<string, unknown>;
  const enable = stringsField(selection, "enable", "plugins.enable");
  const disable = stringsField(selection, "disable", "plugins.disable");
  const info = await Deno.stat(workspace).catch(() => undefined);
  if (info?.isDirectory !== true) {
    throw new ProblemError(400, `workspace '${workspace}' is not a directory`, "workspace");
  }
  const given = defined({ provider, model, baseUrl });
  const session = await ServedSession.open({
    workspace,
    plugins: options.plugins,
    pluginSwitches: { enable, disable },
    overrides: { ...options.defaults, ...given },
    ...defined({
      approve,
      configDir: options.configDir,
      thirdParty: options.thirdParty,
      env: options.env,
      eventCapacity: options.eventCapacity,
      onDiagnostic: options.onDiagnostic,
    }),
  });
  if (options.closing()) {
    // The server began to close while the host started: nobody will close this one later.
    await session.close();
    throw new ProblemError(503, "the server is closing");
  }
  sessions.set(session.id, session);
  const { id, provider: used, model: chosen } = session.summary();
  return json(201, { id, workspace, provider: used, model: chosen });
}

async function switchPlugin(
  session: ServedSession,
  pluginId: string,
  verb: "enable" | "disable",
  url: URL,
): Promise<Response> {
  const runtime = session.host.runtime;
  const cascade = url.searchParams.get("cascade") === "true";
  try {
    if (verb === "disable" && url.searchParams.get("dryRun") === "true") {
      return json(200, { plan: runtime.planDisable(pluginId, { cascade }) });
    }
    const plan = verb === "disable" ? runtime.planDisable(pluginId, { cascade }) : undefined;
    // The session's own selection: the user's plugin.conf and the other sessions stay as they are.
    const result = await runtime.setState(pluginId, verb === "enable", { cascade, persist: false });
    return json(200, { id: pluginId, state: result.state.status, ...(plan ? { plan } : {}) });
  } catch (error) {
    if (error instanceof UnknownPluginError) {
      throw new ProblemError(404, error.message, "pluginId", { cause: error });
    }
    if (error instanceof PluginDependentsError) {
      throw new ProblemError(409, error.message, "pluginId", { cause: error });
    }
    throw error;
  }
}

// `?from=N`, else `Last-Event-ID` (the last event seen, so the one after it), else 0.
function eventsFrom(request: Request, url: URL): number {
  const from = url.searchParams.get("from");
  if (from !== null) {
    if (!/^\d+$/.test(from)) throw new ProblemError(400, "from must be a whole number", "from");
    return Number(from);
  }
  const last = request.headers.get("last-event-id");
  if (last !== null && /^\d+$/.test(last)) return Number(last) + 1;
  return 0;
}

function events(session: ServedSession, from: number): Response {
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (event: LoggedEvent) => {
        try {
          controller.enqueue(
            encoder.encode(`id: ${event.offset}\nevent: ${event.type}\ndata: ${event.data}\n\n`),
          );
        } catch {
          // The stream closed under us (the client left): a session's turn must not see it.
          stop();
        }
      };
      stop = session.log.follow(from, send, () => {
        try {
          controller.close();
        } catch {
          // The reader went away first.
        }
      });
    },
    // The client went away: the turn goes on, its events stay in the log.
    cancel() {
      stop();
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-store" },
  });
}

// The path's segments, decoded; a segment that does not decode names no resource.
function pathParts(url: URL): string[] {
  try {
    return url.pathname.split("/").filter((part) => part !== "").map(decodeURIComponent);
  } catch (error) {
    throw new ProblemError(404, `no route ${url.pathname}`, undefined, { cause: error });
  }
}

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function empty(): Response {
  return new Response(null, { status: 204 });
}

function notAllowed(method: string, url: URL): ProblemError {
  return new ProblemError(405, `${method} is not allowed on ${url.pathname}`);
}

// Compared in time independent of where they differ, so the token cannot be guessed by timing.
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ b[i];
  return diff === 0;
}

function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
