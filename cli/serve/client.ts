/**
 * A small typed client for `amber serve`: a method per route, the session's events as an async
 * iterable over the Server-Sent Events stream, and failures as {@linkcode AmberApiError}
 * carrying the server's problem+json. It needs nothing but `fetch` and `TextDecoder`, so it
 * runs in Deno, Node and browsers alike.
 *
 * A turn goes: {@linkcode AmberClient.createSession}, {@linkcode AmberClient.prompt} (which
 * answers the offset its events start at), then {@linkcode AmberClient.events} from that offset
 * until the `end` event, answering each `approval` event with
 * {@linkcode AmberClient.answerApproval}.
 *
 * @example Talk to a server
 * ```ts
 * import assert from "node:assert/strict";
 * import { AmberApiError, AmberClient } from "@amber/cli/serve-client";
 * import { startServer } from "./server.ts";
 * await using server = await startServer({ token: "s3cret", plugins: () => [] });
 * const client = new AmberClient({ baseUrl: server.url, token: "s3cret" });
 * assert.deepEqual(await client.sessions(), []);
 * await assert.rejects(client.createSession({ workspace: "/no/such/dir" }), (error) => {
 *   assert.ok(error instanceof AmberApiError);
 *   assert.equal(error.problem.field, "workspace");
 *   return true;
 * });
 * ```
 *
 * @module
 */

/** A JSON value, as the server sends it. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** How a session answers the tool calls that need approval. */
export type ApprovalPolicy = "ask" | "auto" | "deny";

/** The body of `POST /sessions`. */
export interface CreateSessionRequest {
  /** The directory the session works in. */
  readonly workspace: string;
  /** The provider to use, instead of the configured one. */
  readonly provider?: string;
  /** The model to use, instead of the configured one. */
  readonly model?: string;
  /** The provider's base URL, instead of the configured one. */
  readonly baseUrl?: string;
  /** How approvals are answered; `ask` sends them as `approval` events. */
  readonly approve?: ApprovalPolicy;
  /**
   * Plugins to enable or disable for this session only, before its first turn: nothing is saved,
   * so other sessions and later ones start from the user's plugin states.
   */
  readonly plugins?: {
    readonly enable?: readonly string[];
    readonly disable?: readonly string[];
  };
}

/** A session as `POST /sessions` answers it. */
export interface CreatedSession {
  /** The session's id, what every other route takes. */
  readonly id: string;
  /** The directory it works in. */
  readonly workspace: string;
  /** The provider it talks to. */
  readonly provider: string;
  /** The model it uses. */
  readonly model: string;
}

/** A session as `GET /sessions` lists it. */
export interface SessionSummary extends CreatedSession {
  /** Whether a turn is running. */
  readonly busy: boolean;
}

/** A session as `GET /sessions/{id}` answers it. */
export interface SessionDetail extends SessionSummary {
  /** How many events the session has had: the offset of the next one. */
  readonly events: number;
}

/** The answer of `POST /sessions/{id}/prompt`. */
export interface PromptAccepted {
  /** The turn's number in this session. */
  readonly turn: number;
  /** The event offset the turn's events start at: pass it to {@linkcode AmberClient.events}. */
  readonly from: number;
}

/** A message of a session's conversation, as amber stores it. */
export interface TranscriptMessage {
  /** Who said it. */
  readonly role: string;
  /** The rest of the message, as the server sent it. */
  readonly [key: string]: JsonValue;
}

/** How an approval is answered: this call only, this kind of call from now on, or no. */
export type ApprovalAnswer = "once" | "always" | "deny";

/** A plugin as `GET /sessions/{id}/plugins` lists it. */
export interface PluginInfo {
  /** The plugin's id, what enable and disable take. */
  readonly id: string;
  /** Its name. */
  readonly name: string;
  /** Its version. */
  readonly version: string;
  /** Its state in this session (enabled, disabled, failed, …). */
  readonly state: string;
}

/** The answer of enabling or disabling a plugin: its id and the state it is in now. */
export interface PluginSwitched {
  /** The plugin's id. */
  readonly id: string;
  /** Its state now (`active`, `disabled`, …). */
  readonly state: string;
}

/**
 * The answer of disabling a plugin: the plan of what disabling removes; with the new state
 * unless it was a dry run.
 */
export interface DisablePluginResult extends Partial<PluginSwitched> {
  /** What disabling switches off (or switched off). */
  readonly plan: DisablePlan;
}

/** What disabling a plugin switches off, and what each plugin's ledger unwinds. */
export interface DisablePlan {
  /** The plugin asked for. */
  readonly pluginId: string;
  /** Whether the plugins that require it go first. */
  readonly cascade: boolean;
  /** The plugins that go, furthest dependents first, the plugin itself last. */
  readonly plugins: readonly {
    readonly pluginId: string;
    readonly reason: "requested" | "dependent";
    /** What its ledger unwinds, newest first: each capability's kind, name and ids. */
    readonly removes: readonly {
      readonly kind: string;
      readonly name: string;
      readonly ids: readonly string[];
    }[];
  }[];
  /** Without `cascade`: the active plugins that require it, for which the disable is refused. */
  readonly stranded: readonly string[];
}

/** Options of {@linkcode AmberClient.disablePlugin}. */
export interface DisablePluginOptions extends RequestOptions {
  /** Only say what disabling would do. */
  readonly dryRun?: boolean;
  /** Disable the plugins depending on it too, instead of refusing (409) while there are any. */
  readonly cascade?: boolean;
}

/** One event of a session's stream, as `amber run --json` writes it. */
export interface ServeEvent {
  /** The event's offset in the session: reattach after it with `from: offset + 1`. */
  readonly offset: number;
  /** The event's type (`text`, `tool`, `approval`, `end`, …). */
  readonly type: string;
  /** The event itself, its `type` field included. */
  readonly data: JsonValue;
}

/** An application/problem+json body, as the server sends its errors. */
export interface Problem {
  /** A URI naming the kind of problem. */
  readonly type: string;
  /** The problem in a few words. */
  readonly title: string;
  /** The HTTP status. */
  readonly status: number;
  /** The problem in a sentence. */
  readonly detail?: string;
  /** The input field at fault, when there is one. */
  readonly field?: string;
}

/**
 * A request the server refused or failed: `status` and the problem+json it answered (or one
 * made from the status when the body was not problem+json).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AmberApiError } from "./client.ts";
 * const error = new AmberApiError({
 *   type: "about:blank",
 *   title: "Bad Request",
 *   status: 400,
 *   detail: "text must be a non-empty string",
 *   field: "text",
 * });
 * assert.equal(error.status, 400);
 * assert.equal(error.problem.field, "text");
 * assert.equal(error.message, "400 Bad Request: text must be a non-empty string");
 * ```
 */
export class AmberApiError extends Error {
  /** The problem the server answered. */
  readonly problem: Problem;

  /** Makes the error of a problem; `cause` is what underlies it, if anything. */
  constructor(problem: Problem, options?: ErrorOptions) {
    const detail = problem.detail === undefined ? "" : `: ${problem.detail}`;
    super(`${problem.status} ${problem.title}${detail}`, options);
    this.name = "AmberApiError";
    this.problem = problem;
  }

  /** The HTTP status of the answer. */
  get status(): number {
    return this.problem.status;
  }
}

/** What an {@linkcode AmberClient} connects with. */
export interface AmberClientOptions {
  /** The server's URL, as `amber serve` printed it (`http://127.0.0.1:8787`). */
  readonly baseUrl: string | URL;
  /** The bearer token `amber serve` printed, or its `AMBER_SERVE_TOKEN`. */
  readonly token: string;
  /** The fetch to use; the global one by default. */
  readonly fetch?: typeof fetch;
}

/** Options of a single request. */
export interface RequestOptions {
  /** Aborts the request. */
  readonly signal?: AbortSignal;
}

/** Options of {@linkcode AmberClient.events}. */
export interface EventsOptions extends RequestOptions {
  /** The offset to replay from; 0 (every event the server kept) by default. */
  readonly from?: number;
}

/**
 * A client of one `amber serve` server.
 *
 * @example A failed request throws the server's problem
 * ```ts
 * import assert from "node:assert/strict";
 * import { AmberApiError, AmberClient } from "./client.ts";
 * const client = new AmberClient({
 *   baseUrl: "http://127.0.0.1:8787",
 *   token: "secret",
 *   // A stand-in for the server: it knows the token, and no session.
 *   fetch: (_input, init) => {
 *     const known = new Headers(init?.headers).get("authorization") === "Bearer secret";
 *     const status = known ? 404 : 401;
 *     const title = known ? "Not Found" : "Unauthorized";
 *     return Promise.resolve(
 *       new Response(JSON.stringify({ type: "about:blank", title, status, field: "id" }), {
 *         status,
 *         headers: { "content-type": "application/problem+json" },
 *       }),
 *     );
 *   },
 * });
 * await assert.rejects(client.session("nope"), (error: unknown) => {
 *   assert.ok(error instanceof AmberApiError);
 *   assert.equal(error.status, 404);
 *   assert.equal(error.problem.field, "id");
 *   return true;
 * });
 * ```
 */
export class AmberClient {
  readonly #base: URL;
  readonly #token: string;
  readonly #fetch: typeof fetch;

  /** Makes a client of the server at `baseUrl`, authenticating with `token`. */
  constructor(options: AmberClientOptions) {
    const base = new URL(options.baseUrl);
    // A base without a trailing slash would lose its last path segment when routes resolve.
    if (!base.pathname.endsWith("/")) base.pathname += "/";
    this.#base = base;
    this.#token = options.token;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Opens a session on a workspace: `POST /sessions`. */
  createSession(request: CreateSessionRequest, options?: RequestOptions): Promise<CreatedSession> {
    return this.#json<CreatedSession>("POST", "sessions", request, options);
  }

  /** Lists the open sessions: `GET /sessions`. */
  async sessions(options?: RequestOptions): Promise<SessionSummary[]> {
    const body = await this.#json<{
      sessions: SessionSummary[];
    }>("GET", "sessions", undefined, options);
    return body.sessions;
  }

  /** Reads one session: `GET /sessions/{id}`. */
  session(id: string, options?: RequestOptions): Promise<SessionDetail> {
    return this.#json<SessionDetail>("GET", path(id), undefined, options);
  }

  /** Reads a session's conversation so far: `GET /sessions/{id}/transcript`. */
  async transcript(id: string, options?: RequestOptions): Promise<TranscriptMessage[]> {
    const body = await this.#json<{
      messages: TranscriptMessage[];
    }>("GET", path(id, "transcript"), undefined, options);
    return body.messages;
  }

  /**
   * Starts a turn: `POST /sessions/{id}/prompt`. Its events follow on {@linkcode events} from
   * the answer's `from`; a session already in a turn answers 409.
   */
  prompt(
    id: string,
    request: { readonly text: string },
    options?: RequestOptions,
  ): Promise<PromptAccepted> {
    return this.#json<PromptAccepted>("POST", path(id, "prompt"), request, options);
  }

  /** Answers an `approval` event: `POST /sessions/{id}/approvals/{requestId}`. */
  async answerApproval(
    id: string,
    requestId: string,
    answer: ApprovalAnswer,
    options?: RequestOptions,
  ): Promise<void> {
    await this.#send("POST", path(id, "approvals", requestId), { answer }, options);
  }

  /** Cancels the running turn: `POST /sessions/{id}/cancel`. */
  async cancel(id: string, options?: RequestOptions): Promise<void> {
    await this.#send("POST", path(id, "cancel"), undefined, options);
  }

  /** Closes a session, cancelling a running turn: `DELETE /sessions/{id}`. */
  async deleteSession(id: string, options?: RequestOptions): Promise<void> {
    await this.#send("DELETE", path(id), undefined, options);
  }

  /** Lists a session's plugins: `GET /sessions/{id}/plugins`. */
  async plugins(id: string, options?: RequestOptions): Promise<PluginInfo[]> {
    const body = await this.#json<{
      plugins: PluginInfo[];
    }>("GET", path(id, "plugins"), undefined, options);
    return body.plugins;
  }

  /**
   * Enables a plugin in this session only (nothing is saved):
   * `POST /sessions/{id}/plugins/{pluginId}/enable`.
   */
  enablePlugin(id: string, pluginId: string, options?: RequestOptions): Promise<PluginSwitched> {
    return this.#json<PluginSwitched>(
      "POST",
      path(id, "plugins", pluginId, "enable"),
      undefined,
      options,
    );
  }

  /**
   * Disables a plugin in this session only (nothing is saved), or with `dryRun` only says what
   * that would do: `POST /sessions/{id}/plugins/{pluginId}/disable`.
   */
  disablePlugin(
    id: string,
    pluginId: string,
    options?: DisablePluginOptions,
  ): Promise<DisablePluginResult> {
    const query = new URLSearchParams();
    if (options?.dryRun) query.set("dryRun", "true");
    if (options?.cascade) query.set("cascade", "true");
    const search = query.size === 0 ? "" : `?${query}`;
    const route = path(id, "plugins", pluginId, "disable") + search;
    return this.#json<DisablePluginResult>("POST", route, undefined, options);
  }

  /** Reads the server's OpenAPI document: `GET /openapi.json`. */
  openApi(options?: RequestOptions): Promise<JsonValue> {
    return this.#json<JsonValue>("GET", "openapi.json", undefined, options);
  }

  /**
   * A session's events from offset `from` (0 by default): those the server kept, then the live
   * ones, until the server ends the stream or `signal` aborts (then the iteration just ends).
   * Breaking out of the loop closes the connection; the session's turn goes on regardless.
   */
  async *events(id: string, options?: EventsOptions): AsyncGenerator<ServeEvent, void, void> {
    const from = options?.from ?? 0;
    try {
      const response = await this.#send(
        "GET",
        `${path(id, "events")}?from=${from}`,
        undefined,
        options,
        "text/event-stream",
      );
      if (response.body === null) return;
      yield* parseEvents(response.body);
    } catch (error) {
      if (options?.signal?.aborted) return;
      throw error;
    }
  }

  // The server is trusted to answer per its OpenAPI document; the types are that promise.
  async #json<T>(
    method: string,
    route: string,
    body: unknown,
    options: RequestOptions | undefined,
  ): Promise<T> {
    const response = await this.#send(method, route, body, options, "application/json");
    return await response.json() as T;
  }

  async #send(
    method: string,
    route: string,
    body: unknown,
    options: RequestOptions | undefined,
    accept = "application/json",
  ): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#token}`,
      accept,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = JSON.stringify(body);
    if (options?.signal !== undefined) init.signal = options.signal;
    const response = await this.#fetch(new URL(route, this.#base), init);
    if (!response.ok) throw await problemOf(response);
    if (response.status === 204) await response.body?.cancel();
    return response;
  }
}

function path(...segments: string[]): string {
  return ["sessions", ...segments].map(encodeURIComponent).join("/");
}

async function problemOf(response: Response): Promise<AmberApiError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as Partial<Problem>;
    if (typeof body === "object" && body !== null && typeof body.title === "string") {
      return new AmberApiError({
        type: "about:blank",
        ...body,
        status: response.status,
        title: body.title,
      });
    }
  } catch (cause) {
    return new AmberApiError(fallbackProblem(response, text), { cause });
  }
  return new AmberApiError(fallbackProblem(response, text));
}

function fallbackProblem(response: Response, text: string): Problem {
  const title = response.statusText || `HTTP ${response.status}`;
  const detail = text.trim();
  return detail === ""
    ? { type: "about:blank", title, status: response.status }
    : { type: "about:blank", title, status: response.status, detail };
}

/**
 * Parses a Server-Sent Events stream into events: `id:` is the offset, `event:` the type
 * (`message` when absent), `data:` lines the JSON. Comments (`:` lines, the server's
 * keep-alives) and events without data are skipped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseEvents } from "./client.ts";
 * const stream = new Response(
 *   ': hi\n\nid: 4\nevent: text\ndata: {"type":"text","text":"ok"}\n\n',
 * ).body!;
 * const events = await Array.fromAsync(parseEvents(stream));
 * assert.deepEqual(events, [{ offset: 4, type: "text", data: { type: "text", text: "ok" } }]);
 * ```
 */
export async function* parseEvents(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<ServeEvent, void, void> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  let buffer = "";
  let offset = -1;
  let type = "";
  let data: string[] = [];
  try {
    while (true) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A \r at a chunk's end may be half of a \r\n: wait for the next chunk to tell.
      const held = !done && buffer.endsWith("\r") ? 1 : 0;
      const lines = buffer.slice(0, buffer.length - held).split(/\r\n|\r|\n/);
      // The last piece is a line still arriving; at the end of the stream, whatever came last.
      buffer = done ? "" : (lines.pop() ?? "") + buffer.slice(buffer.length - held);
      for (const line of lines) {
        if (line === "") {
          if (data.length > 0) {
            yield { offset, type: type || "message", data: JSON.parse(data.join("\n")) };
          }
          type = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") data.push(value);
        else if (field === "event") type = value;
        else if (field === "id" && /^\d+$/.test(value)) offset = Number(value);
      }
      if (done) return;
    }
  } finally {
    // Leaving early (a break, an abort) must close the connection, not leave it open.
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
