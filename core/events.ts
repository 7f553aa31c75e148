/**
 * The events the harness publishes, and the part of the event bus a plugin gets: it may
 * observe and intercept, never publish. The bus itself is in `event_bus.ts`.
 *
 * @module
 */

import type { CompactionReason } from "./compaction.ts";
import type { Message } from "./message.ts";
import type { ToolResult } from "./tool.ts";

/**
 * The events the harness publishes, by type.
 */
export interface AmberEvents {
  /** A turn begins. Interceptable: an interceptor returning false cancels the turn. */
  turnStarted: { readonly prompt: string };
  /** A turn ended. */
  turnEnded: { readonly cancelled: boolean };
  /** A message was committed to the transcript. */
  messageAdded: { readonly message: Message; readonly index: number };
  /** The model asked for a tool, before the approval gate. Interceptable. */
  toolRequested: { readonly callId: string; readonly name: string; readonly args: unknown };
  /** A tool finished. */
  toolCompleted: {
    readonly callId: string;
    readonly name: string;
    readonly result: ToolResult;
    readonly durationMs: number;
  };
  /** A model response ended. */
  llmResponse: {
    readonly status: number;
    readonly promptTokens: number;
    readonly completionTokens: number;
  };
  /**
   * A compaction is about to run (the seed's Compression). Interceptable: an interceptor
   * returning false vetoes it, except after an overflow, when the request cannot be sent as is.
   */
  compression: {
    readonly reason: CompactionReason;
    readonly tokens: number;
    readonly budget: number;
    readonly threshold: number;
  };
  /** A compaction ended (the seed's CompressionCompleted). */
  compressionCompleted: {
    readonly success: boolean;
    readonly tokensBefore: number;
    readonly tokensAfter: number;
  };
  /** Something went wrong that the user should know of. */
  errorRaised: { readonly kind: string; readonly message: string; readonly retryable: boolean };
  /** A plugin became active. */
  pluginEnabled: { readonly id: string };
  /** A plugin was switched off. */
  pluginDisabled: { readonly id: string };
  /** A plugin failed. */
  pluginFailed: { readonly id: string; readonly reason: string };
  /** A live plugin was re-resolved: the environment changed, with the tools that did. */
  environmentChanged: {
    readonly pluginId: string;
    readonly version: number;
    readonly added: readonly string[];
    readonly removed: readonly string[];
    readonly changed: readonly string[];
  };
  /** A live plugin's refresh failed; the previous environment stays. Once per live version. */
  refreshFailed: { readonly pluginId: string; readonly version: number; readonly reason: string };
}

/** The types an interceptor may cancel. */
export type InterceptableEvent = "turnStarted" | "toolRequested" | "compression";

/** An observer. */
export type EventHandler<T> = (event: T) => void;

/** An interceptor: returning false cancels the event. */
export type EventInterceptor<T> = (event: T) => boolean | void;

/** A subscription; `unsubscribe` is idempotent. */
export interface Subscription {
  /** Ends the subscription. */
  unsubscribe(): void;
}

/** Where contained handler errors go. */
export type HandlerErrorSink = (error: unknown, type: string) => void;

/**
 * The part of the bus a plugin gets: it may listen, never publish the harness's own events.
 */
export interface PluginEvents {
  /** Observes `type`. */
  subscribe<K extends keyof AmberEvents>(
    type: K,
    handler: EventHandler<AmberEvents[K]>,
  ): Subscription;
  /** Intercepts `type` before any observer; returning false cancels it. */
  intercept<K extends InterceptableEvent>(
    type: K,
    interceptor: EventInterceptor<AmberEvents[K]>,
  ): Subscription;
}
