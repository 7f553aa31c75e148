// Shared scaffolding for the dialect tests: decoding recorded chunks, reading the events that
// come out, and running a ProviderClient end to end against the fake provider.

import assert from "node:assert/strict";
import type { ChatRequest, Dialect, StreamEvent } from "@amber/core";
import { ProviderClient } from "../../providers/client.ts";
import { SseDecoder } from "../../providers/sse.ts";
import type { WireEncoder } from "../../providers/testing/encoder.ts";
import { FakeProvider } from "../../providers/testing/server.ts";

// ---------------------------------------------------------------------------------------------
// Decoding

/** Runs `chunks` through the SSE decoder into a fresh decoder of `dialect`. */
export function decodeWith(dialect: Dialect, chunks: readonly string[]): StreamEvent[] {
  const events: StreamEvent[] = [];
  const sink = (event: StreamEvent): void => {
    events.push(event);
  };
  const decoder = dialect.decoder();
  const sse = new SseDecoder(
    (name, data) => decoder.event(name, data, sink),
    (line) => decoder.unframed?.(line, sink),
  );
  for (const chunk of chunks) sse.push(chunk);
  sse.end();
  decoder.end(sink);
  return events;
}

// ---------------------------------------------------------------------------------------------
// Reading events

/** The events' types, in order. */
export function types(events: readonly StreamEvent[]): string[] {
  return events.map((event) => event.type);
}

/** The text (or reasoning) deltas joined. */
export function text(events: readonly StreamEvent[], type: "text" | "reasoning" = "text"): string {
  let out = "";
  for (const event of events) if (event.type === type) out += event.delta;
  return out;
}

/** The `toolCallEnd` events. */
export function ends(
  events: readonly StreamEvent[],
): Extract<StreamEvent, { type: "toolCallEnd" }>[] {
  return events.filter((event) => event.type === "toolCallEnd");
}

/** The one `error` event; asserts there is exactly one. */
export function errorOf(events: readonly StreamEvent[]): Extract<StreamEvent, { type: "error" }> {
  const errors = events.filter((event) => event.type === "error");
  assert.equal(errors.length, 1, `one error event in ${JSON.stringify(events)}`);
  return errors[0];
}

/** Asserts exactly one finish, last, with `reason`. */
export function assertFinish(events: readonly StreamEvent[], reason: string): void {
  const finishes = events.filter((event) => event.type === "finish");
  assert.equal(finishes.length, 1, `one finish in ${JSON.stringify(events)}`);
  const last = events.at(-1)!;
  assert.equal(last.type, "finish");
  assert.equal((last as { reason: string }).reason, reason);
}

// ---------------------------------------------------------------------------------------------
// End to end: ProviderClient against the fake provider

/** One dialect's side of an end-to-end run. */
export interface Wire {
  /** Makes the dialect the client speaks. */
  readonly dialect: () => Dialect;
  /** The fake provider's encoder for the same protocol. */
  readonly encoder: WireEncoder;
  /** What the client's base URL adds to the server's (`/v1` for the OpenAI dialects). */
  readonly basePath?: string;
  /** Makes the request `run` sends when given none. */
  readonly request: () => ChatRequest;
}

/** What one `run` saw: every event the sink got, and the client's outcome. */
export interface Run {
  readonly events: StreamEvent[];
  readonly attempts: number;
  readonly status: number;
  readonly headers: Headers;
}

/** A fake provider and a client pointed at it, whose retry waits are recorded, not slept. */
export interface Harness {
  readonly server: FakeProvider;
  readonly client: ProviderClient;
  /** The waits the client asked for between attempts, in milliseconds. */
  readonly sleeps: number[];
  /** Streams `req` (the wire's request by default) through the client. */
  run(req?: ChatRequest): Promise<Run>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts a fake provider speaking `wire` and a client for it with `key`. */
export async function startHarness(wire: Wire, key: { apiKey?: string }): Promise<Harness> {
  const server = await FakeProvider.start({ encoders: [wire.encoder] });
  const sleeps: number[] = [];
  const client = new ProviderClient(
    wire.dialect(),
    { baseUrl: `${server.url}${wire.basePath ?? ""}`, ...key },
    {
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
    },
  );
  return {
    server,
    client,
    sleeps,
    async run(req = wire.request()) {
      const events: StreamEvent[] = [];
      const outcome = await client.stream(req, (event) => events.push(event));
      return {
        events,
        attempts: outcome.attempts,
        status: outcome.status,
        headers: outcome.headers,
      };
    },
    [Symbol.asyncDispose]: () => server.close(),
  };
}
