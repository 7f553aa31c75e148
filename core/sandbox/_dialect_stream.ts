// The host's decoder of one response stream whose dialect runs in a plugin process. The SSE
// decoder hands it frames one at a time, synchronously; it gathers those of one network chunk
// (everything handed over before the client next waits for the network) and sends them as one
// `dialect.frames` request, then gives the events of the answer to the sink, in order. `end`
// settles once every event has reached its sink. A failure (the plugin's decoder threw, the
// answer was not events, the process ended, the sink threw) is thrown from the next `event` or
// from `end`, where the client reports it as an undecodable response.

import type { StreamDecoder, StreamSink } from "../dialect.ts";
import { checkEvents, type Refuse } from "./_dialect_answers.ts";
import { type DialectFrame, Method } from "./protocol.ts";

/** How a stream reaches the plugin process. */
export interface StreamChannel {
  /** A request under the dialect's deadline; rejects when it fails or the process is gone. */
  request(method: string, params: unknown): Promise<unknown>;
  /** A notification. */
  notify(method: string, params: unknown): void;
  /** Throws the error for an answer the host cannot use. */
  readonly refuse: Refuse;
  /** The error for the plugin's decoder having thrown `message`. */
  failed(message: string): Error;
}

// Unique across every connection of this host: a restarted process never sees an id twice.
let nextStream = 1;

/** One response stream decoded in the plugin process. */
export class ProxyStreamDecoder implements StreamDecoder {
  readonly #channel: StreamChannel;
  readonly #stream: number;
  #frames: DialectFrame[] = [];
  #sink: StreamSink | undefined;
  #queued = false;
  #delivered: Promise<void> = Promise.resolve();
  #failure: { readonly error: unknown } | undefined;
  #ended = false;
  // The plugin process no longer holds the stream: it was ended, or dropped after a failure.
  #released = false;
  readonly #flush = (): void => this.#send();

  /** Opens the stream in the plugin process, on the dialect `handle` made there. */
  constructor(channel: StreamChannel, handle: number) {
    this.#channel = channel;
    this.#stream = nextStream++;
    channel.notify(Method.dialectOpen, { dialect: handle, stream: this.#stream });
  }

  /** Queues a server-sent event for this chunk's batch. */
  event(name: string | undefined, data: string, sink: StreamSink): void {
    this.#take(name === undefined ? { data } : { event: name, data }, sink);
  }

  /** Queues a line that is no SSE field for this chunk's batch. */
  unframed(line: string, sink: StreamSink): void {
    this.#take({ line }, sink);
  }

  /**
   * Sends what is queued, waits for every event of the stream to reach its sink, then ends the
   * stream in the plugin process and emits what its end decodes. A second call does nothing.
   */
  async end(sink: StreamSink): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#send();
    await this.#delivered;
    this.#throwFailure();
    this.#released = true;
    const answer = await this.#channel.request(Method.dialectEnd, { stream: this.#stream });
    this.#deliver(answer, sink);
    this.#throwFailure();
  }

  #throwFailure(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  #take(frame: DialectFrame, sink: StreamSink): void {
    this.#throwFailure();
    this.#frames.push(frame);
    this.#sink = sink;
    // The SSE decoder hands over a chunk's frames in one synchronous run; the batch goes once
    // that run is over, before the client's next read of the network resumes.
    if (!this.#queued) {
      this.#queued = true;
      queueMicrotask(this.#flush);
    }
  }

  #send(): void {
    this.#queued = false;
    const frames = this.#frames;
    if (frames.length === 0 || this.#failure !== undefined) return;
    this.#frames = [];
    const sink = this.#sink!;
    // Settled into a value at once (a rejection waiting its turn is no unhandled one), then
    // delivered in the order the requests went, each after the one before.
    const answer = this.#channel.request(Method.dialectFrames, { stream: this.#stream, frames })
      .then((value) => ({ value }), (error: unknown) => ({ error }));
    this.#delivered = this.#delivered.then(() =>
      answer.then((settled) =>
        "error" in settled ? this.#fail(settled.error, false) : this.#deliver(settled.value, sink)
      )
    );
  }

  #deliver(value: unknown, sink: StreamSink): void {
    if (this.#failure !== undefined) return;
    let answer;
    try {
      answer = checkEvents(value, this.#channel.refuse);
    } catch (error) {
      this.#fail(error, true);
      return;
    }
    for (const event of answer.events) {
      try {
        sink(event);
      } catch (error) {
        this.#fail(error, true);
        return;
      }
    }
    if (answer.error !== undefined) this.#fail(this.#channel.failed(answer.error), false);
  }

  // `held`: the plugin process may still hold the stream, so it is told to drop it.
  #fail(error: unknown, held: boolean): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    if (!held) this.#released = true;
    if (this.#released) return;
    this.#released = true;
    this.#channel.request(Method.dialectEnd, { stream: this.#stream }).catch(() => {});
  }
}
