/**
 * The sandbox protocol's messages for a provider plugin's dialect (part of its version 1,
 * re-exported by `protocol.ts`): the host makes a client for a
 * provider the plugin contributes, and the plugin's dialect builds each request and reads each
 * response through these calls, as it would in-process.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Method, UNKNOWN_DIALECT } from "@amber/core/sandbox";
 * assert.equal(Method.dialectCreate, "dialect.create");
 * assert.equal(UNKNOWN_DIALECT, "unknown dialect");
 * ```
 *
 * @module
 */

import type { ChatRequest, ProviderSettings, StreamEvent } from "../dialect.ts";

/**
 * `dialect.create` params: the host makes a client for a provider of the plugin, so the plugin
 * calls that provider's dialect factory once, as it would in-process.
 */
export interface DialectCreateParams {
  /** The flavor, as the plugin's provider capability named it. */
  readonly flavor: string;
}

/** `dialect.create` result: the dialect's handle and which optional members it has. */
export interface DialectCreated {
  /** The handle every later `dialect.*` call names it by. */
  readonly dialect: number;
  /** Whether it has both `modelsRequest` and `parseModels`. */
  readonly models: boolean;
  /** Whether it has `allowanceFromHeaders`. */
  readonly allowance: boolean;
  /** Whether it has `retryDelayMs`. */
  readonly retryDelay: boolean;
}

/**
 * The `data` of the error answering a `dialect.*` call whose handle the process does not hold
 * (it was started again since): the host makes the dialect again with `dialect.create`.
 */
export const UNKNOWN_DIALECT = "unknown dialect";

/**
 * `dialect.chatRequest` params; the result is an `HttpRequestSpec` the host sends itself (the
 * plugin process has no network). `settings.apiKey` is the key the user configured for this
 * provider: the dialect needs it to build the credential header.
 */
export interface DialectChatRequestParams {
  /** The dialect's handle. */
  readonly dialect: number;
  /** `ProviderSettings`. */
  readonly settings: ProviderSettings;
  /** `ChatRequest`. */
  readonly request: ChatRequest;
}

/** `dialect.open` params: a response stream starts; the plugin makes a decoder for it. */
export interface DialectOpenParams {
  /** The dialect's handle. */
  readonly dialect: number;
  /** The stream's id, chosen by the host, unique within the connection. */
  readonly stream: number;
}

/**
 * One unit of a response stream as the host's SSE decoder cut it: a server-sent event (`event`
 * absent for the default type) or a line that is no SSE field.
 */
export type DialectFrame =
  | { readonly event?: string; readonly data: string }
  | { readonly line: string };

/** `dialect.frames` params: what one network chunk of the stream held. */
export interface DialectFramesParams {
  /** The stream's id. */
  readonly stream: number;
  /** The frames, in order. */
  readonly frames: readonly DialectFrame[];
}

/** `dialect.end` params: the stream ended; the plugin drops its decoder after answering. */
export interface DialectEndParams {
  /** The stream's id. */
  readonly stream: number;
}

/**
 * `dialect.frames` and `dialect.end` result: the events decoded, in order. `error` is what the
 * decoder threw after emitting `events`; the plugin has then dropped the stream.
 */
export interface DialectEvents {
  /** The decoded events. */
  readonly events: readonly StreamEvent[];
  /** The decoder's failure, when it threw. */
  readonly error?: string;
}

/** `dialect.error` params: one failed response. */
export interface DialectErrorParams {
  /** The dialect's handle. */
  readonly dialect: number;
  /** The HTTP status. */
  readonly status: number;
  /** The response body. */
  readonly body: string;
}

/** `dialect.error` result: every reading of one failed response, in one round trip. */
export interface DialectErrorReading {
  /** `isRetryable`. */
  readonly retryable: boolean;
  /** `errorMessage`. */
  readonly message: string;
  /** `isContextOverflow`. */
  readonly contextOverflow: boolean;
  /** `retryDelayMs`, null when it gave none or the dialect has none. */
  readonly retryDelayMs: number | null;
}

/** `dialect.modelsRequest` params; the result is an `HttpRequestSpec`. */
export interface DialectModelsRequestParams {
  /** The dialect's handle. */
  readonly dialect: number;
  /** `ProviderSettings`, with the key as for `dialect.chatRequest`. */
  readonly settings: ProviderSettings;
}

/** `dialect.parseModels` params; the result is the model ids. */
export interface DialectParseModelsParams {
  /** The dialect's handle. */
  readonly dialect: number;
  /** The models response's body. */
  readonly body: string;
}

/** `dialect.allowance` params; the result is an `AllowanceSnapshot`, or null. */
export interface DialectAllowanceParams {
  /** The dialect's handle. */
  readonly dialect: number;
  /** The response's headers, as entries. */
  readonly headers: readonly (readonly [string, string])[];
}
