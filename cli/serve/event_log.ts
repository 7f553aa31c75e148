/**
 * A served session's events, numbered from 0 and kept so that a client that went away can come
 * back and replay them from an offset. The log keeps the newest `capacity` events: a client
 * asking for older ones gets the oldest still kept (the events before are gone for good).
 *
 * @module
 */

/** One event of the log. */
export interface LoggedEvent {
  /** Its place in the session's stream, from 0. */
  readonly offset: number;
  /** The event's `type`. */
  readonly type: string;
  /** The event, as JSON text on one line. */
  readonly data: string;
}

/** An event as the log takes it: JSON with a `type`. */
export interface ServedEvent {
  /** What kind of event it is. */
  readonly type: string;
  /** The event's other fields. */
  readonly [field: string]: unknown;
}

/** How many events a session keeps for replay, by default. */
export const DEFAULT_EVENT_CAPACITY = 10_000;

/**
 * A session's numbered events: appended as they happen, replayed and followed by readers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventLog } from "./event_log.ts";
 * const log = new EventLog(2);
 * log.append({ type: "text", delta: "a" });
 * log.append({ type: "text", delta: "b" });
 * log.append({ type: "end" });
 * const seen: number[] = [];
 * const stop = log.follow(0, (event) => seen.push(event.offset), () => {});
 * log.append({ type: "session" });
 * stop();
 * assert.deepEqual(seen, [1, 2, 3]);
 * assert.equal(log.next, 4);
 * ```
 */
export class EventLog {
  readonly #capacity: number;
  #events: LoggedEvent[] = [];
  #next = 0;
  #closed = false;
  readonly #followers = new Set<{ onEvent: (e: LoggedEvent) => void; onClose: () => void }>();

  /** A log keeping the newest `capacity` events. */
  constructor(capacity: number = DEFAULT_EVENT_CAPACITY) {
    this.#capacity = Math.max(1, capacity);
  }

  /** The offset the next event gets. */
  get next(): number {
    return this.#next;
  }

  /** Appends `event` (an object with a `type`) and hands it to every follower. */
  append(event: ServedEvent): LoggedEvent {
    const logged = { offset: this.#next++, type: event.type, data: JSON.stringify(event) };
    if (this.#closed) return logged;
    this.#events.push(logged);
    // Trimmed in chunks, so that a long turn does not shift the array on every event.
    if (this.#events.length > this.#capacity * 1.25) {
      this.#events = this.#events.slice(this.#events.length - this.#capacity);
    }
    for (const follower of this.#followers) follower.onEvent(logged);
    return logged;
  }

  /**
   * Replays the kept events from offset `from` and then hands over each new one, until the
   * returned function is called or the log closes (`onClose`).
   */
  follow(from: number, onEvent: (event: LoggedEvent) => void, onClose: () => void): () => void {
    const first = this.#events[0]?.offset ?? this.#next;
    const start = Math.max(0, Math.max(from, first) - first);
    const kept = this.#events.slice(start);
    const oldest = kept.length - this.#capacity;
    for (const event of oldest > 0 ? kept.slice(oldest) : kept) onEvent(event);
    if (this.#closed) {
      onClose();
      return () => {};
    }
    const follower = { onEvent, onClose };
    this.#followers.add(follower);
    return () => this.#followers.delete(follower);
  }

  /** Ends every reader's stream; later events are not kept. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const follower of this.#followers) follower.onClose();
    this.#followers.clear();
  }
}
