// The plugin process's side of a provider whose dialect runs there: it answers the `dialect.*`
// methods with the plugin's own dialect objects. The host owns the network; what crosses is the
// request the dialect builds, the frames the host's SSE decoder cut from each network chunk, the
// events decoded from them (batched per chunk), and the readings of error bodies.

import type { Dialect, StreamDecoder, StreamEvent, StreamSink } from "../dialect.ts";
import type { DialectFactory } from "../provider.ts";
import { RpcError, RpcErrorCode, type RpcPeer } from "./json_rpc.ts";
import {
  type DialectAllowanceParams,
  type DialectChatRequestParams,
  type DialectCreated,
  type DialectCreateParams,
  type DialectEndParams,
  type DialectErrorParams,
  type DialectErrorReading,
  type DialectEvents,
  type DialectFrame,
  type DialectFramesParams,
  type DialectModelsRequestParams,
  type DialectOpenParams,
  type DialectParseModelsParams,
  Method,
  UNKNOWN_DIALECT,
} from "./protocol.ts";

/** One open response stream: its decoder, the events it emitted not yet sent, its queue. */
interface Stream {
  readonly decoder: Promise<StreamDecoder>;
  readonly pending: StreamEvent[];
  readonly sink: StreamSink;
  // Frames and the end of one stream are decoded in the order they came, even when the dialect
  // or its decoder is still being made when the next batch arrives.
  queue: Promise<unknown>;
}

/**
 * Answers the `dialect.*` methods on `peer`. `dialects(flavor)` is the factory of the plugin's
 * provider of that flavor (undefined when it has none); it is called once per `dialect.create`,
 * which the host sends once per client, as the factory runs in-process.
 *
 * The settings of `dialect.chatRequest` and `dialect.modelsRequest` carry the key the user
 * configured for the provider, since the dialect must put it in a header.
 *
 * A throw in the dialect answers the request with the dialect's words; a throw in a decoder
 * answers the events emitted before it with `error` and drops that stream.
 */
export function serveDialects(
  peer: RpcPeer,
  dialects: (flavor: string) => DialectFactory | undefined,
): void {
  const made = new Map<number, Dialect>();
  const streams = new Map<number, Stream>();
  let nextHandle = 1;

  const dialect = (handle: number): Dialect => {
    const found = made.get(handle);
    if (found === undefined) {
      throw new RpcError(RpcErrorCode.InvalidParams, `no dialect ${handle}`, UNKNOWN_DIALECT);
    }
    return found;
  };
  const stream = (id: number): Stream => {
    const found = streams.get(id);
    if (found === undefined) {
      throw new RpcError(RpcErrorCode.InvalidParams, `no open stream ${id}`);
    }
    return found;
  };
  // Runs `work` after everything queued on `open`, and answers with the events emitted so far.
  const decode = (
    id: number,
    work: (decoder: StreamDecoder, sink: StreamSink) => unknown,
  ): Promise<DialectEvents> => {
    const open = stream(id);
    const answer = open.queue.then(async (): Promise<DialectEvents> => {
      try {
        await work(await open.decoder, open.sink);
      } catch (error) {
        streams.delete(id);
        return { events: open.pending.splice(0), error: errorText(error) };
      }
      return { events: open.pending.splice(0) };
    });
    open.queue = answer;
    return answer;
  };

  peer.handle(Method.dialectCreate, async (params) => {
    const { flavor } = params as DialectCreateParams;
    const factory = dialects(flavor);
    if (factory === undefined) {
      throw new RpcError(RpcErrorCode.InvalidParams, `the plugin has no dialect '${flavor}'`);
    }
    const created = await factory();
    const handle = nextHandle++;
    made.set(handle, created);
    const answer: DialectCreated = {
      dialect: handle,
      models: typeof created.modelsRequest === "function" &&
        typeof created.parseModels === "function",
      allowance: typeof created.allowanceFromHeaders === "function",
      retryDelay: typeof created.retryDelayMs === "function",
    };
    return answer;
  });

  peer.handle(Method.dialectChatRequest, (params) => {
    const { dialect: handle, settings, request } = params as DialectChatRequestParams;
    return dialect(handle).chatRequest(settings, request);
  });

  peer.onNotification(Method.dialectOpen, (params) => {
    const { dialect: handle, stream: id } = params as DialectOpenParams;
    // A handle this process does not hold fails the stream's first batch, not the notification.
    const decoder = Promise.try(() => dialect(handle).decoder());
    decoder.catch(() => {});
    const pending: StreamEvent[] = [];
    const sink: StreamSink = (event) => {
      pending.push(event);
    };
    streams.set(id, { decoder, pending, sink, queue: Promise.resolve() });
  });

  peer.handle(Method.dialectFrames, (params) => {
    const { stream: id, frames } = params as DialectFramesParams;
    return decode(id, (decoder, sink) => feed(decoder, frames, sink));
  });

  peer.handle(Method.dialectEnd, async (params) => {
    const { stream: id } = params as DialectEndParams;
    const answer = await decode(id, (decoder, sink) => decoder.end(sink));
    streams.delete(id);
    return answer;
  });

  peer.handle(Method.dialectError, async (params) => {
    const { dialect: handle, status, body } = params as DialectErrorParams;
    const speaker = dialect(handle);
    const delay = await speaker.retryDelayMs?.(status, body);
    const reading: DialectErrorReading = {
      retryable: await speaker.isRetryable(status, body),
      message: await speaker.errorMessage(status, body),
      contextOverflow: await speaker.isContextOverflow(status, body),
      retryDelayMs: typeof delay === "number" ? delay : null,
    };
    return reading;
  });

  peer.handle(Method.dialectModelsRequest, (params) => {
    const { dialect: handle, settings } = params as DialectModelsRequestParams;
    const speaker = dialect(handle);
    if (speaker.modelsRequest === undefined) throw new TypeError("the dialect cannot list models");
    return speaker.modelsRequest(settings);
  });

  peer.handle(Method.dialectParseModels, (params) => {
    const { dialect: handle, body } = params as DialectParseModelsParams;
    const speaker = dialect(handle);
    if (speaker.parseModels === undefined) throw new TypeError("the dialect cannot list models");
    return speaker.parseModels(body);
  });

  peer.handle(Method.dialectAllowance, async (params) => {
    const { dialect: handle, headers } = params as DialectAllowanceParams;
    const snapshot = await dialect(handle).allowanceFromHeaders?.(
      new Headers(headers.map(([name, text]) => [name, text])),
    );
    return snapshot ?? null;
  });
}

function feed(decoder: StreamDecoder, frames: readonly DialectFrame[], sink: StreamSink): void {
  for (const frame of frames) {
    if ("line" in frame) decoder.unframed?.(frame.line, sink);
    else decoder.event(frame.event, frame.data, sink);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
