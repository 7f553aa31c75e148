/**
 * The event bus: typed events, observers and interceptors. Publishing with no subscribers does
 * no work, and a handler that throws is contained and reported.
 *
 * @module
 */

import type {
  AmberEvents,
  EventHandler,
  EventInterceptor,
  HandlerErrorSink,
  InterceptableEvent,
  PluginEvents,
  Subscription,
} from "./events.ts";

type Listener = { fn: (event: never) => unknown; intercepts: boolean };

/**
 * The harness's event bus. Interceptors run before observers, newest first; observers run in
 * subscription order. Handler lists are copied on change, never on publish.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventBus } from "@amber/core";
 * const bus = new EventBus();
 * const seen: string[] = [];
 * bus.subscribe("toolCompleted", (event) => seen.push(event.name));
 * bus.intercept("toolRequested", (event) => event.name !== "rm");
 * assert.equal(bus.publish("toolRequested", { callId: "1", name: "rm", args: {} }), false);
 * ```
 */
export class EventBus implements PluginEvents {
  // Every type is a key from the start and emptied to undefined, never deleted, so the object
  // keeps one shape and the lookup in publish stays monomorphic.
  #listeners: { [K in keyof AmberEvents]: Listener[] | undefined } = {
    turnStarted: undefined,
    turnEnded: undefined,
    messageAdded: undefined,
    toolRequested: undefined,
    toolCompleted: undefined,
    llmResponse: undefined,
    errorRaised: undefined,
    pluginEnabled: undefined,
    pluginDisabled: undefined,
    pluginFailed: undefined,
    environmentChanged: undefined,
    refreshFailed: undefined,
    compression: undefined,
    compressionCompleted: undefined,
  };
  #onError: HandlerErrorSink;

  /** Creates a bus; `onError` receives what handlers throw (default: ignored after logging). */
  constructor(onError?: HandlerErrorSink) {
    this.#onError = onError ??
      ((error, type) => console.error(`event handler for ${type}:`, error));
  }

  /** Observes `type`. */
  subscribe<K extends keyof AmberEvents>(
    type: K,
    handler: EventHandler<AmberEvents[K]>,
  ): Subscription {
    return this.#add(type, { fn: handler as Listener["fn"], intercepts: false });
  }

  /** Intercepts `type` before every observer; returning false cancels it. */
  intercept<K extends InterceptableEvent>(
    type: K,
    interceptor: EventInterceptor<AmberEvents[K]>,
  ): Subscription {
    return this.#add(type, { fn: interceptor as Listener["fn"], intercepts: true });
  }

  /**
   * Delivers `event` to every handler of `type`. Returns false when an interceptor cancelled
   * it (observers are then not called), true otherwise.
   */
  publish<K extends keyof AmberEvents>(type: K, event: AmberEvents[K]): boolean {
    const list = this.#listeners[type];
    if (list === undefined) return true;
    for (let i = 0; i < list.length; i++) {
      const listener = list[i];
      try {
        const verdict = (listener.fn as (event: AmberEvents[K]) => unknown)(event);
        if (listener.intercepts && verdict === false) return false;
      } catch (error) {
        this.#report(error, type);
      }
    }
    return true;
  }

  /** Whether anything listens to `type`; lets a publisher skip building an event. */
  has(type: keyof AmberEvents): boolean {
    return this.#listeners[type] !== undefined;
  }

  /** How many handlers `type` has. */
  count(type: keyof AmberEvents): number {
    return this.#listeners[type]?.length ?? 0;
  }

  #add(type: keyof AmberEvents, listener: Listener): Subscription {
    const old = this.#listeners[type] ?? [];
    // Interceptors sit at the front, newest first; observers follow in subscription order.
    this.#listeners[type] = listener.intercepts ? [listener, ...old] : [...old, listener];
    let live = true;
    return {
      unsubscribe: () => {
        if (!live) return;
        live = false;
        const current = this.#listeners[type];
        if (current === undefined) return;
        const next = current.filter((entry) => entry !== listener);
        this.#listeners[type] = next.length === 0 ? undefined : next;
      },
    };
  }

  #report(error: unknown, type: string): void {
    try {
      this.#onError(error, type);
    } catch {
      // A failing error sink must not take delivery down with it.
    }
  }
}
