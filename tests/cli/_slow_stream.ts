// An OpenAI-compatible server on loopback that streams one scripted answer slowly: its frames
// (the fake provider's OpenAI encoding) one every `frameMs`, so a test can act while a response
// is still streaming (interrupt it, read the bar) and tell "exited at once" from "waited for the
// stream to end" by a wide margin instead of a tight time bound.

import { openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";

/** A running slow server. */
export interface SlowStream extends AsyncDisposable {
  /** The base URL to give `--base-url` (ends in `/v1`). */
  readonly url: string;
  /** How many chat requests arrived. */
  readonly chats: () => number;
  /** How many frames of the current answer were sent. */
  readonly sent: () => number;
  /** How many frames the answer is. */
  readonly frames: number;
  /** How long the whole answer takes to stream, ms. */
  readonly durationMs: number;
}

/**
 * Serves `turn` to every chat request, one frame every `frameMs`; a client that goes away stops
 * the stream. Other paths answer 404 (no model listing, no balance).
 */
export function slowStream(turn: ScriptedTurn, frameMs: number): SlowStream {
  const closing = new AbortController();
  let chats = 0;
  let sent = 0;
  const frames = openaiEncoder.frames(turn, "fake-model");
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
    signal: closing.signal,
  }, (request) => {
    if (!new URL(request.url).pathname.endsWith("/chat/completions")) {
      return Response.json({ error: { message: "no such route" } }, { status: 404 });
    }
    chats++;
    sent = 0;
    const bytes = new TextEncoder();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= frames.length) return controller.close();
        const wait = sent === 0 ? 0 : frameMs;
        return new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            timer = undefined;
            if (closing.signal.aborted) {
              controller.close();
            } else {
              controller.enqueue(bytes.encode(frames[sent++]));
            }
            resolve();
          }, wait);
        });
      },
      cancel() {
        clearTimeout(timer);
      },
    });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  });
  const address = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    chats: () => chats,
    sent: () => sent,
    frames: frames.length,
    durationMs: frames.length * frameMs,
    async [Symbol.asyncDispose]() {
      closing.abort();
      await server.finished;
    },
  };
}
