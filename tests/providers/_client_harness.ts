// Scaffolding for the ProviderClient tests: a tiny protocol of its own, loopback servers that
// answer, stall or cut the connection, and a client whose waits are recorded, not slept.

import type { Dialect, ProviderSettings, StreamEvent } from "@amber/core";
import { type ClientOptions, ProviderClient, type RetryInfo } from "@amber/providers/client";

// A tiny protocol of its own, so these tests depend on no real dialect: `data: {"t":"hi"}` is a
// text delta, `data: {"error":"..."}` an in-stream error, `data: [DONE]` ignored; the decoder
// always ends with `finish: stop`, even after an error, to show the client keeps one finish only.
export const KEY = "sk-test-SECRET-0123456789";

export function testDialect(overrides: Partial<Dialect> = {}): Dialect {
  return {
    flavor: "test",
    chatRequest: (settings, request) => ({
      url: `${settings.baseUrl}/v1/chat/completions`,
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${settings.apiKey ?? ""}`,
        "x-api-key": settings.apiKey ?? "",
      },
      body: JSON.stringify({ model: request.model, stream: true }),
    }),
    decoder: () => ({
      event(_name, data, sink) {
        if (data === "[DONE]") return;
        const json = JSON.parse(data) as { t?: string; error?: string };
        if (json.t !== undefined) sink({ type: "text", delta: json.t });
        if (json.error !== undefined) {
          sink({ type: "error", message: json.error, retryable: false });
        }
      },
      unframed(line, sink) {
        sink({ type: "error", message: `unframed: ${line}`, retryable: false });
      },
      end(sink) {
        sink({ type: "finish", reason: "stop" });
      },
    }),
    isRetryable: (status) => status === 429 || status >= 500,
    errorMessage: (status, body) => `test API error ${status}: ${body}`,
    isContextOverflow: () => false,
    retryDelayMs: (_status, body) => {
      const match = /"retryDelay":"(\d+)s"/.exec(body);
      return match === null ? undefined : Number(match[1]) * 1_000;
    },
    modelsRequest: (settings) => ({
      url: `${settings.baseUrl}/v1/models`,
      method: "GET",
      headers: { authorization: `Bearer ${settings.apiKey ?? ""}` },
    }),
    parseModels: (body) => (JSON.parse(body) as { data: { id: string }[] }).data.map((m) => m.id),
    ...overrides,
  };
}

export interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly headers: Headers;
  readonly body: string;
}

export interface TestServer extends AsyncDisposable {
  readonly url: string;
  readonly requests: Recorded[];
  readonly server: Deno.HttpServer<Deno.NetAddr>;
}

/** A real server on loopback; `handler` gets the request and its 0-based index. */
export function serve(
  handler: (request: Request, index: number) => Response | Promise<Response>,
): TestServer {
  const requests: Recorded[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const index = requests.length;
      requests.push({
        method: request.method,
        path: new URL(request.url).pathname,
        headers: request.headers,
        body: await request.text(),
      });
      return handler(request, index);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    server,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const encoder = new TextEncoder();

/** An SSE response whose body is `frames`, then, per `after`, an end or a stall. */
export function sse(frames: readonly string[], after: "end" | "stall" = "end"): Response {
  let next = 0;
  let stall: ReturnType<typeof setTimeout> | undefined;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < frames.length) controller.enqueue(encoder.encode(frames[next++]));
      else if (after === "end") controller.close();
      // A stall leaves the stream open (a pending timer keeps the test alive) until cancelled.
      else if (stall === undefined) stall = setTimeout(() => {}, 60_000);
    },
    cancel() {
      clearTimeout(stall);
    },
  }, { highWaterMark: 0 });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/**
 * A bare HTTP/1.1 server for cut connections: request `index` gets a 200 with a chunked SSE body
 * of `frames(index)`, then, when `drop(index)`, the socket closes without the closing chunk.
 */
export function rawServer(
  frames: (index: number) => readonly string[],
  drop: (index: number) => boolean,
): { readonly url: string; readonly served: () => number } & AsyncDisposable {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const connections: Promise<void>[] = [];
  let served = 0;
  const answer = async (conn: Deno.Conn, index: number): Promise<void> => {
    try {
      // Reads the whole request (headers, then content-length bytes) before answering.
      let received = new Uint8Array(0);
      const buffer = new Uint8Array(16_384);
      for (;;) {
        const text = new TextDecoder().decode(received);
        const headerEnd = text.indexOf("\r\n\r\n");
        if (headerEnd !== -1) {
          const length = Number(/content-length:\s*(\d+)/i.exec(text)?.[1] ?? 0);
          if (received.length >= headerEnd + 4 + length) break;
        }
        const n = await conn.read(buffer);
        if (n === null) return;
        received = new Uint8Array([...received, ...buffer.subarray(0, n)]);
      }
      let out = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" +
        "transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
      for (const frame of frames(index)) {
        out += `${encoder.encode(frame).length.toString(16)}\r\n${frame}\r\n`;
      }
      if (!drop(index)) out += "0\r\n\r\n";
      const bytes = encoder.encode(out);
      for (let written = 0; written < bytes.length;) {
        written += await conn.write(bytes.subarray(written));
      }
    } finally {
      conn.close();
    }
  };
  const accepting = (async () => {
    for await (const conn of listener) connections.push(answer(conn, served++));
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    served: () => served,
    async [Symbol.asyncDispose]() {
      listener.close();
      await accepting.catch(() => {});
      await Promise.allSettled(connections);
    },
  };
}

export const HI = ['data: {"t":"hi"}\n\n', 'data: {"t":" there"}\n\n', "data: [DONE]\n\n"];

export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export interface Harness {
  readonly client: ProviderClient;
  readonly events: StreamEvent[];
  readonly delays: number[];
  readonly retries: RetryInfo[];
}

/** A client whose sleeps return at once and are recorded. */
export function harness(
  url: string,
  options: ClientOptions = {},
  settings: Partial<ProviderSettings> = {},
  dialect: Dialect = testDialect(),
): Harness {
  const delays: number[] = [];
  const retries: RetryInfo[] = [];
  const client = new ProviderClient(dialect, { baseUrl: url, apiKey: KEY, ...settings }, {
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
    onRetry: (info) => retries.push(info),
    random: () => 0.999,
    ...options,
  });
  return { client, events: [], delays, retries };
}

export const REQUEST = { model: "m", messages: [], tools: [] };

export function finishes(events: readonly StreamEvent[]): number {
  return events.filter((e) => e.type === "finish").length;
}

/** A loopback port nothing listens on. */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
