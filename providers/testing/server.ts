/**
 * The fake provider: a real HTTP server on 127.0.0.1 that speaks each dialect's wire protocol,
 * answers from a script, injects faults, lists models, serves the balance endpoints, and records
 * every request. Tests, the demo and plugin authors run against it instead of the network.
 *
 * @module
 */

import type { ScriptedTurn } from "./script.ts";
import type { WireEncoder } from "./encoder.ts";

/** One request the server received. */
export interface RecordedRequest {
  /** The method. */
  readonly method: string;
  /** The path, with the query string. */
  readonly path: string;
  /** The headers, lower-cased names. */
  readonly headers: { readonly [name: string]: string };
  /** The body parsed as JSON, when it is JSON. */
  readonly body: unknown;
  /** Which protocol the route speaks. */
  readonly flavor?: string;
}

/** The balances the account endpoints answer with; absent ones answer 404. */
export interface FakeBalances {
  /** OpenRouter `GET /key`: the key's remaining limit. */
  readonly openrouter?: { readonly limitRemaining: number | null; readonly usage: number };
  /** DeepSeek `GET /user/balance`: amounts as strings, as DeepSeek sends them. */
  readonly deepseek?: { readonly currency: string; readonly total: string };
  /** Moonshot `GET /users/me/balance`. */
  readonly moonshot?: { readonly available: number };
  /** Kilo Code `GET /profile/balance`. */
  readonly kilocode?: { readonly balance: number };
}

/** Options of {@linkcode FakeProvider.start}. */
export interface FakeProviderOptions {
  /** The protocols, one encoder per flavor. */
  readonly encoders: readonly WireEncoder[];
  /** The models the listing endpoints report. */
  readonly models?: readonly string[];
  /** Headers added to every streamed response (e.g. rate-limit headers). */
  readonly responseHeaders?: { readonly [name: string]: string };
}

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
};

/**
 * A fake model service on loopback.
 *
 * @example
 * ```ts
 * import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
 * server.script({ text: "Hello!" });
 * const response = await fetch(`${server.url}/v1/chat/completions`, {
 *   method: "POST",
 *   body: JSON.stringify({ model: "m", messages: [], stream: true }),
 * });
 * assert.equal(response.status, 200);
 * assert.equal(server.requests.length, 1);
 * await response.body?.cancel();
 * ```
 */
export class FakeProvider implements AsyncDisposable {
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[] = [];
  /** The models the listing endpoints report. */
  models: readonly string[];
  /** The balances the account endpoints report. */
  balances: FakeBalances = {};
  /** Headers added to every streamed response. */
  responseHeaders: { readonly [name: string]: string };

  #server: Deno.HttpServer<Deno.NetAddr>;
  #encoders: Map<string, WireEncoder>;
  #turns: ScriptedTurn[] = [];
  #open = new Set<ReadableStreamDefaultController<Uint8Array>>();
  // Ends the waits of slow-first-byte faults when the server closes, so closing never waits
  // for a scripted delay.
  #closing = new AbortController();

  private constructor(options: FakeProviderOptions) {
    this.#encoders = new Map(options.encoders.map((encoder) => [encoder.flavor, encoder]));
    this.models = options.models ?? ["fake-small", "fake-large"];
    this.responseHeaders = options.responseHeaders ?? {};
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (request) => this.#handle(request),
    );
  }

  /** Starts a server on 127.0.0.1 with a free port. */
  static start(options: FakeProviderOptions): Promise<FakeProvider> {
    return Promise.resolve(new FakeProvider(options));
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** Queues turns; each chat request takes the next one. */
  script(...turns: ScriptedTurn[]): this {
    this.#turns.push(...turns);
    return this;
  }

  /** How many scripted turns are still queued. */
  get pending(): number {
    return this.#turns.length;
  }

  /** The chat requests received (model calls only), oldest first. */
  get chats(): RecordedRequest[] {
    return this.requests.filter((request) => request.method === "POST");
  }

  /** Stops the server, cutting any stream still open. */
  async close(): Promise<void> {
    this.#closing.abort();
    for (const controller of this.#open) {
      try {
        controller.error(new Error("server closed"));
      } catch {
        // Already closed.
      }
    }
    this.#open.clear();
    await this.#server.shutdown();
  }

  /** Same as {@linkcode FakeProvider.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    const text = request.method === "POST" ? await request.text() : "";
    let body: unknown = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const route = this.#route(request.method, path, request.headers);
    this.requests.push({
      method: request.method,
      path: path + url.search,
      headers: Object.fromEntries(request.headers),
      body,
      flavor: route?.encoder.flavor,
    });
    if (request.method === "GET") return this.#get(path, route?.encoder);
    if (route === undefined) {
      return Response.json({ error: { message: `no route for POST ${path}` } }, { status: 404 });
    }
    const model = typeof (body as { model?: unknown })?.model === "string"
      ? (body as { model: string }).model
      : route.model ?? "fake";
    // A client that did not ask for a stream (generateText-style) gets the whole answer at once.
    const streamed = (body as { stream?: unknown })?.stream;
    const whole = route.encoder.completionBody !== undefined && streamed !== true;
    return await this.#chat(route.encoder, model, whole);
  }

  #route(
    method: string,
    path: string,
    headers: Headers,
  ): { encoder: WireEncoder; model?: string } | undefined {
    const pick = (flavor: string) => {
      const encoder = this.#encoders.get(flavor);
      return encoder ? { encoder } : undefined;
    };
    if (method === "GET") {
      if (!path.endsWith("/models")) return undefined;
      if (headers.has("anthropic-version")) return pick("anthropic");
      if (path.includes("/v1beta/")) return pick("gemini");
      return pick("openai") ?? pick("openai_responses");
    }
    if (path.endsWith("/chat/completions")) return pick("openai");
    if (path.endsWith("/responses")) return pick("openai_responses");
    if (path.endsWith("/v1/messages")) return pick("anthropic");
    const gemini = /\/models\/([^/:]+):streamGenerateContent$/.exec(path);
    if (gemini) {
      const route = pick("gemini");
      return route ? { ...route, model: decodeURIComponent(gemini[1]) } : undefined;
    }
    return undefined;
  }

  #get(path: string, encoder: WireEncoder | undefined): Response {
    if (encoder !== undefined) {
      return new Response(encoder.modelsBody(this.models), {
        headers: { "content-type": "application/json" },
      });
    }
    const b = this.balances;
    if (path.endsWith("/key") && b.openrouter) {
      return Response.json({
        data: {
          label: "fake",
          limit: b.openrouter.limitRemaining === null ? null : b.openrouter.limitRemaining + 1,
          limit_remaining: b.openrouter.limitRemaining,
          usage: b.openrouter.usage,
        },
      });
    }
    if (path.endsWith("/user/balance") && b.deepseek) {
      return Response.json({
        is_available: true,
        balance_infos: [{
          currency: b.deepseek.currency,
          total_balance: b.deepseek.total,
          granted_balance: "0.00",
          topped_up_balance: b.deepseek.total,
        }],
      });
    }
    if (path.endsWith("/users/me/balance") && b.moonshot) {
      return Response.json({
        code: 0,
        data: {
          available_balance: b.moonshot.available,
          voucher_balance: 0,
          cash_balance: b.moonshot.available,
        },
        status: true,
      });
    }
    if (path.endsWith("/profile/balance") && b.kilocode) {
      return Response.json({ balance: b.kilocode.balance });
    }
    return Response.json({ error: { message: `no route for GET ${path}` } }, { status: 404 });
  }

  async #chat(encoder: WireEncoder, model: string, whole = false): Promise<Response> {
    const turn = this.#turns.shift();
    if (turn === undefined) {
      return new Response(encoder.errorBody(500, "the fake provider has no scripted turn left"), {
        status: 500,
        headers: { "content-type": "application/json" },
      });
    }
    const fault = turn.fault;
    if (fault?.kind === "slowFirstByte") await delay(fault.delayMs, this.#closing.signal);
    if (fault?.kind === "status") {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (fault.retryAfter !== undefined) headers["retry-after"] = fault.retryAfter;
      if (fault.retryAfterMs !== undefined) headers["retry-after-ms"] = String(fault.retryAfterMs);
      return new Response(
        fault.body ??
          encoder.errorBody(fault.status, fault.message ?? `fake error ${fault.status}`),
        { status: fault.status, headers },
      );
    }
    if (whole && fault === undefined) {
      return new Response(encoder.completionBody!(turn, model), {
        headers: { "content-type": "application/json", ...this.responseHeaders },
      });
    }
    const frames = encoder.frames(turn, model);
    if (fault?.kind === "malformed") {
      frames.splice(Math.min(fault.afterEvents, frames.length), 0, 'data: {"choices": [{\n\n');
    }
    if (fault?.kind === "streamError") {
      frames.splice(Math.min(fault.afterEvents, frames.length));
      frames.push(encoder.streamErrorFrame(fault.message));
    }
    const cut = fault?.kind === "drop" ? Math.min(fault.afterEvents, frames.length) : -1;
    const bytes = new TextEncoder();
    const open = this.#open;
    let sent = 0;
    let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controllerRef = controller;
        open.add(controller);
      },
      async pull(controller) {
        // One frame per pull, so a client sees events arrive one by one, as from a real model.
        const index = sent++;
        if (index === cut) {
          open.delete(controller);
          // Deno.serve prints whatever a response body errors with: a line that says this was
          // asked for reads better in a test run than an Error's stack.
          controller.error("FakeProvider: connection dropped mid-stream, as the script asked");
          return;
        }
        if (index >= frames.length) {
          open.delete(controller);
          controller.close();
          return;
        }
        if (index > 0) await Promise.resolve();
        controller.enqueue(bytes.encode(frames[index]));
      },
      cancel() {
        if (controllerRef) open.delete(controllerRef);
      },
    });
    return new Response(stream, { headers: { ...SSE_HEADERS, ...this.responseHeaders } });
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}
