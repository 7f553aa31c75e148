/**
 * Reading a streamed 2xx body: bytes through the SSE decoder into the dialect's stream decoder,
 * with an idle watchdog, cancellation, and the rules for a body that breaks before or after its
 * first byte. Private to the package; {@linkcode ProviderClient} calls it once per response.
 *
 * @module
 */

import type { StreamDecoder, StreamSink } from "@amber/core";
import { errorText, networkReason } from "./_failure_text.ts";
import type { Failure } from "./_retry.ts";
import { durationText } from "./_timed_fetch.ts";
import { SseDecoder } from "./sse.ts";

/** Carries an exception the consumer's sink threw through the decoders, to be rethrown. */
export class SinkThrew {
  /** Wraps what the sink threw. */
  constructor(readonly error: unknown) {}
}

/** What {@linkcode pipeBody} needs from the client besides the response. */
export interface BodyContext {
  /** The URL requested, already redacted, for messages. */
  readonly url: string;
  /** The longest gap between two body chunks. */
  readonly idleTimeoutMs: number;
  /** Scrubs the API key from a message. */
  readonly redact: (text: string) => string;
  /** Aborts the request (the watchdog's way to end a quiet connection). */
  readonly abort: () => void;
}

/**
 * Reads a 2xx body through the SSE and stream decoders. "done" at the end of the body (the
 * decoder's `end` has run), "cancelled" when `signal` aborted, or a retryable failure when the
 * body broke before its first byte; a break after it is reported to `out` here.
 */
export async function pipeBody(
  response: Response,
  decoder: StreamDecoder,
  out: StreamSink,
  signal: AbortSignal | undefined,
  context: BodyContext,
): Promise<"done" | "cancelled" | Failure> {
  const { url, redact } = context;
  const unframed = decoder.unframed;
  const sse = new SseDecoder(
    (name, data) => decoder.event(name, data, out),
    unframed === undefined ? undefined : (line) => unframed.call(decoder, line, out),
  );
  const body = response.body;
  if (body === null) {
    const ended = decoder.end(out);
    if (ended instanceof Promise) await ended;
    return "done";
  }
  const reader = body.getReader();
  const idleMs = context.idleTimeoutMs;
  // One timer for the whole body, re-armed only when it fires: a chunk costs a clock read,
  // not a clearTimeout/setTimeout pair.
  let lastChunkAt = Date.now();
  let idle = false;
  const watch = (): void => {
    const quiet = Date.now() - lastChunkAt;
    if (quiet >= idleMs) {
      idle = true;
      context.abort();
      reader.cancel().catch(() => {});
    } else {
      idleTimer = setTimeout(watch, idleMs - quiet);
    }
  };
  let idleTimer = setTimeout(watch, idleMs);
  let received = false;
  let inDecoder = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      lastChunkAt = Date.now();
      received = true;
      inDecoder = true;
      sse.pushBytes(value);
      inDecoder = false;
      if (signal?.aborted) break;
    }
    if (signal?.aborted) {
      await reader.cancel().catch(() => {});
      release(decoder);
      return "cancelled";
    }
    if (!idle) {
      // The body is over: a decoder that answers later gets as long as it needs (its own calls
      // have deadlines), not the idle allowance of the network.
      clearTimeout(idleTimer);
      inDecoder = true;
      sse.end();
      const ended = decoder.end(out);
      if (ended instanceof Promise) await ended;
      inDecoder = false;
      if (signal?.aborted) return "cancelled";
      return "done";
    }
  } catch (error) {
    if (error instanceof SinkThrew) {
      reader.cancel().catch(() => {});
      throw error;
    }
    if (signal?.aborted) {
      release(decoder);
      return "cancelled";
    }
    if (inDecoder) {
      // The dialect threw on what the server sent: report it, read no further.
      reader.cancel().catch(() => {});
      out({
        type: "error",
        message: redact(`the response from ${url} could not be decoded: ${errorText(error)}`),
        retryable: false,
        status: response.status,
      });
      out({ type: "finish", reason: "error" });
      return "done";
    }
    if (!idle && !received) {
      return {
        message: redact(`the connection to ${url} dropped: ${networkReason(error)}`),
        retryable: true,
      };
    }
    if (!idle) {
      await broken(
        out,
        decoder,
        redact(`the connection to ${url} dropped mid-stream: ${networkReason(error)}`),
      );
      return "done";
    }
  } finally {
    clearTimeout(idleTimer);
  }
  // The idle watchdog fired.
  const message = `no data from ${url} for ${durationText(idleMs)}`;
  if (!received) return { message: redact(message), retryable: true };
  await broken(out, decoder, redact(`${message}; the connection dropped mid-stream`));
  return "done";
}

const ignore: StreamSink = () => {};

/**
 * Reports a stream that broke after it started; the decoder's own end can add nothing, so what
 * it emits goes nowhere. Its end still runs first: a decoder that answers later delivers the
 * events of the frames before the break then, as one in this process already has.
 */
async function broken(out: StreamSink, decoder: StreamDecoder, message: string): Promise<void> {
  try {
    const ended = decoder.end(ignore);
    if (ended instanceof Promise) await ended;
  } catch (error) {
    if (error instanceof SinkThrew) throw error;
    // A decoder failing on a truncated stream changes nothing: the error is reported below.
  }
  out({ type: "error", message, retryable: true });
  out({ type: "finish", reason: "error" });
}

/**
 * Ends the decoder of an abandoned stream, emitting nowhere, so that one holding state outside
 * this process (a dialect in a plugin process) lets it go.
 */
function release(decoder: StreamDecoder): void {
  try {
    const ended = decoder.end(ignore);
    if (ended instanceof Promise) ended.catch(() => {});
  } catch {
    // Nothing waits for an abandoned stream's end.
  }
}
