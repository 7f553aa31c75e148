/**
 * JSON-RPC 2.0 over a byte stream, one message per line (the framing LSP's stdio transports and
 * MCP's stdio transport use without headers): the peer both ends of a sandboxed plugin speak.
 * Requests carry ids and settle with a result or an error; notifications do not; a request can
 * be cancelled (`$/cancelRequest`) and report progress (`$/progress`) while it runs.
 *
 * Anything on the input that is not a JSON-RPC 2.0 message (a plugin printing to its stdout) is
 * a {@linkcode ProtocolError} handed to `onProtocolError`; the peer reads on, so the owner
 * decides whether one bad line ends the conversation.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RpcPeer } from "@amber/core/sandbox";
 * const a = new TransformStream<Uint8Array, Uint8Array>();
 * const b = new TransformStream<Uint8Array, Uint8Array>();
 * const host = new RpcPeer({ input: a.readable, output: b.writable });
 * const child = new RpcPeer({ input: b.readable, output: a.writable });
 * child.handle("add", (params, call) => {
 *   call.progress("adding");
 *   const { x, y } = params as { x: number; y: number };
 *   return x + y;
 * });
 * const progress: unknown[] = [];
 * const sum = await host.request("add", { x: 2, y: 3 }, { onProgress: (v) => progress.push(v) });
 * assert.equal(sum, 5);
 * assert.deepEqual(progress, ["adding"]);
 * await host.close();
 * await child.closed;
 * ```
 *
 * @module
 */

import { AmberError } from "../errors.ts";

/** A request id. */
export type RpcId = number | string;

/** The error codes of JSON-RPC 2.0, LSP's cancellation code, and amber's own. */
export const RpcErrorCode: {
  readonly ParseError: -32700;
  readonly InvalidRequest: -32600;
  readonly MethodNotFound: -32601;
  readonly InvalidParams: -32602;
  readonly InternalError: -32603;
  readonly RequestCancelled: -32800;
  readonly PluginError: -32001;
} = Object.freeze({
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
  PluginError: -32001,
});

/**
 * The other end answered a request with an error object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RpcError, RpcErrorCode } from "@amber/core/sandbox";
 * const error = new RpcError(RpcErrorCode.MethodNotFound, "no method 'x'");
 * assert.equal(error.code, -32601);
 * assert.equal(error.name, "RpcError");
 * ```
 */
export class RpcError extends AmberError {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The error's `data`, if any. */
  readonly data?: unknown;
  /** Creates the error. */
  constructor(code: number, message: string, data?: unknown, options?: ErrorOptions) {
    super(message, options);
    this.name = "RpcError";
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

/**
 * The input carried something that is not a JSON-RPC 2.0 message; `line` is the start of it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProtocolError } from "@amber/core/sandbox";
 * const error = new ProtocolError("not JSON", "hello");
 * assert.equal(error.line, "hello");
 * ```
 */
export class ProtocolError extends AmberError {
  /** The first 200 characters of the offending line. */
  readonly line: string;
  /** Creates the error. */
  constructor(message: string, line: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ProtocolError";
    this.line = line.slice(0, 200);
  }
}

/**
 * A request could not be answered because the connection ended first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PeerClosedError } from "@amber/core/sandbox";
 * assert.equal(new PeerClosedError("add").name, "PeerClosedError");
 * ```
 */
export class PeerClosedError extends AmberError {
  /** Creates the error for a request of `method`. */
  constructor(method: string, options?: ErrorOptions) {
    super(`the connection closed before '${method}' was answered`, options);
    this.name = "PeerClosedError";
  }
}

/** What a request handler gets besides the params. */
export interface RpcCall {
  /** Aborted when the requester sends `$/cancelRequest` for this request or the peer closes. */
  readonly signal: AbortSignal;
  /** Sends a `$/progress` notification for this request. */
  progress(value: unknown): void;
}

/** Answers one method; a throw or rejection becomes an error response. */
export type RpcHandler = (params: unknown, call: RpcCall) => unknown;

/** Options of {@linkcode RpcPeer.request}. */
export interface RpcRequestOptions {
  /** Sends `$/cancelRequest` when aborted; the promise still waits for the answer. */
  readonly signal?: AbortSignal;
  /** Receives each `$/progress` value of this request. */
  readonly onProgress?: (value: unknown) => void;
}

/** Options of {@linkcode RpcPeer}. */
export interface RpcPeerOptions {
  /** The bytes from the other end. */
  readonly input: ReadableStream<Uint8Array>;
  /** The bytes to the other end. */
  readonly output: WritableStream<Uint8Array>;
  /** A line longer than this (bytes) is a protocol error; 64 MiB by default. */
  readonly maxLineBytes?: number;
  /** Told of every line that is not a JSON-RPC 2.0 message. */
  readonly onProtocolError?: (error: ProtocolError) => void;
}

interface Pending {
  readonly method: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  readonly onProgress?: (value: unknown) => void;
}

const encoder = new TextEncoder();
const NEWLINE = 10;

/** One end of a newline-delimited JSON-RPC 2.0 connection. */
export class RpcPeer {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #handlers = new Map<string, RpcHandler>();
  readonly #notifications = new Map<string, (params: unknown) => void>();
  readonly #pending = new Map<RpcId, Pending>();
  readonly #running = new Map<RpcId, AbortController>();
  readonly #maxLine: number;
  readonly #onProtocolError?: (error: ProtocolError) => void;
  readonly #closed: Promise<void>;
  #nextId = 1;
  #open = true;

  /** Starts reading `options.input` at once. */
  constructor(options: RpcPeerOptions) {
    this.#writer = options.output.getWriter();
    // A write to a pipe whose reader is gone rejects; the read side reports the end.
    this.#writer.closed.catch(() => {});
    this.#maxLine = options.maxLineBytes ?? 64 * 1024 * 1024;
    this.#onProtocolError = options.onProtocolError;
    this.#closed = this.#read(options.input);
  }

  /** Settles when the input ended (the other end closed or died) and every request failed. */
  get closed(): Promise<void> {
    return this.#closed;
  }

  /** Whether the input is still open. */
  get open(): boolean {
    return this.#open;
  }

  /** Answers requests of `method` with `handler`. */
  handle(method: string, handler: RpcHandler): void {
    this.#handlers.set(method, handler);
  }

  /** Receives notifications of `method`; a throw in `handler` is swallowed. */
  onNotification(method: string, handler: (params: unknown) => void): void {
    this.#notifications.set(method, handler);
  }

  /**
   * Sends a request and resolves with its result; rejects with {@linkcode RpcError} for an
   * error response and {@linkcode PeerClosedError} when the connection ends first.
   */
  request<T = unknown>(
    method: string,
    params?: unknown,
    options: RpcRequestOptions = {},
  ): Promise<T> {
    if (!this.#open) return Promise.reject(new PeerClosedError(method));
    const id = this.#nextId++;
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    this.#pending.set(id, { method, resolve, reject, onProgress: options.onProgress });
    const signal = options.signal;
    if (signal !== undefined) {
      const cancel = () => this.notify("$/cancelRequest", { id });
      if (signal.aborted) queueMicrotask(cancel);
      else signal.addEventListener("abort", cancel, { once: true });
      promise.finally(() => signal.removeEventListener("abort", cancel)).catch(() => {});
    }
    this.#send({ jsonrpc: "2.0", id, method, ...(params !== undefined ? { params } : {}) });
    return promise as Promise<T>;
  }

  /** Sends a notification. */
  notify(method: string, params?: unknown): void {
    if (!this.#open) return;
    this.#send({ jsonrpc: "2.0", method, ...(params !== undefined ? { params } : {}) });
  }

  /** Closes the output; the other end sees its input end. */
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
  }

  #send(message: unknown): void {
    let line: string;
    try {
      line = JSON.stringify(message) + "\n";
    } catch (error) {
      // A value JSON cannot carry (a cycle, a BigInt) answers its request with an error.
      const id = (message as { id?: RpcId }).id;
      if (id === undefined || "method" in (message as object)) throw error;
      line = JSON.stringify({
        jsonrpc: "2.0",
        id,
        error: { code: RpcErrorCode.InternalError, message: `unserializable result: ${error}` },
      }) + "\n";
    }
    this.#writer.write(encoder.encode(line)).catch(() => {});
  }

  async #read(input: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let parts: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const chunk of input) {
        let start = 0;
        let at = chunk.indexOf(NEWLINE);
        while (at >= 0) {
          const piece = chunk.subarray(start, at);
          let bytes = piece;
          if (parts.length > 0) {
            bytes = concat([...parts, piece], size + piece.length);
            parts = [];
            size = 0;
          }
          this.#line(decoder.decode(bytes));
          start = at + 1;
          at = chunk.indexOf(NEWLINE, start);
        }
        if (start < chunk.length) {
          parts.push(chunk.slice(start));
          size += chunk.length - start;
          if (size > this.#maxLine) {
            this.#protocolError(new ProtocolError(`a line longer than ${this.#maxLine} bytes`, ""));
            parts = [];
            size = 0;
          }
        }
      }
      if (size > 0) this.#line(decoder.decode(concat(parts, size)));
    } catch {
      // A broken pipe ends the connection like a clean end does.
    } finally {
      this.#open = false;
      for (const [id, pending] of this.#pending) {
        this.#pending.delete(id);
        pending.reject(new PeerClosedError(pending.method));
      }
      for (const controller of this.#running.values()) controller.abort();
      this.#running.clear();
      await this.#writer.close().catch(() => {});
    }
  }

  #line(text: string): void {
    if (text.trim() === "") return;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text);
    } catch (error) {
      this.#protocolError(new ProtocolError("a line that is not JSON", text, { cause: error }));
      return;
    }
    if (typeof message !== "object" || message === null || message.jsonrpc !== "2.0") {
      this.#protocolError(new ProtocolError("a line that is not a JSON-RPC 2.0 message", text));
      return;
    }
    const { id, method } = message;
    if (typeof method === "string") {
      if (id === undefined) this.#notification(method, message.params);
      else if (typeof id === "number" || typeof id === "string") {
        this.#request(id, method, message.params);
      } else this.#protocolError(new ProtocolError("a request whose id is not valid", text));
      return;
    }
    if (typeof id !== "number" && typeof id !== "string") {
      this.#protocolError(new ProtocolError("a response without a valid id", text));
      return;
    }
    const pending = this.#pending.get(id);
    if (pending === undefined) {
      this.#protocolError(new ProtocolError(`a response to no request (id ${id})`, text));
      return;
    }
    this.#pending.delete(id);
    const error = message.error as
      | { code?: unknown; message?: unknown; data?: unknown }
      | undefined;
    if (error !== undefined && error !== null) {
      const code = typeof error.code === "number" ? error.code : RpcErrorCode.InternalError;
      const why = typeof error.message === "string" ? error.message : "error";
      pending.reject(new RpcError(code, why, error.data));
    } else pending.resolve(message.result);
  }

  #notification(method: string, params: unknown): void {
    if (method === "$/cancelRequest") {
      const id = (params as { id?: RpcId } | undefined)?.id;
      if (id !== undefined) this.#running.get(id)?.abort();
      return;
    }
    if (method === "$/progress") {
      const { id, value } = (params ?? {}) as { id?: RpcId; value?: unknown };
      const pending = id === undefined ? undefined : this.#pending.get(id);
      try {
        pending?.onProgress?.(value);
      } catch {
        // A progress listener's failure is not the request's.
      }
      return;
    }
    const handler = this.#notifications.get(method);
    try {
      handler?.(params);
    } catch {
      // A notification has no one to answer.
    }
  }

  async #request(id: RpcId, method: string, params: unknown): Promise<void> {
    const handler = this.#handlers.get(method);
    if (handler === undefined) {
      this.#send({
        jsonrpc: "2.0",
        id,
        error: { code: RpcErrorCode.MethodNotFound, message: `no method '${method}'` },
      });
      return;
    }
    const controller = new AbortController();
    this.#running.set(id, controller);
    const call: RpcCall = {
      signal: controller.signal,
      progress: (value) => this.notify("$/progress", { id, value }),
    };
    try {
      const result = await handler(params, call);
      this.#send({ jsonrpc: "2.0", id, result: result === undefined ? null : result });
    } catch (error) {
      const code = error instanceof RpcError
        ? error.code
        : controller.signal.aborted
        ? RpcErrorCode.RequestCancelled
        : RpcErrorCode.PluginError;
      const text = error instanceof Error ? error.message : String(error);
      const data = error instanceof RpcError ? error.data : undefined;
      this.#send({
        jsonrpc: "2.0",
        id,
        error: { code, message: text, ...(data !== undefined ? { data } : {}) },
      });
    } finally {
      this.#running.delete(id);
    }
  }

  #protocolError(error: ProtocolError): void {
    try {
      this.#onProtocolError?.(error);
    } catch {
      // The owner's reaction to garbage must not stop the reading.
    }
  }
}

function concat(parts: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
