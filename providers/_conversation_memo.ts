/**
 * What a dialect built for the previous request's conversation, for the next request to take
 * over. Each request of a session repeats the previous one's messages (the same frozen objects)
 * and adds a few: a dialect that remembers the text it made for them, and checks that they are
 * still the same objects in the same places, only has to add the new ones. Private to the
 * package.
 *
 * @module
 */

import type { Message } from "@amber/core";

/**
 * The run of messages a dialect built last, with the state it reached at the end of them
 * (`S`: the text so far and whatever else the next messages depend on), under a key for what
 * else the text depended on (whether images were sent, say).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConversationMemo } from "./_conversation_memo.ts";
 * const memo = new ConversationMemo<string>();
 * const a = Object.freeze({ role: "user", content: "a" } as const);
 * const b = Object.freeze({ role: "user", content: "b" } as const);
 * assert.equal(memo.take([a], 0, ""), undefined);
 * memo.keep([a], 0, 1, "", "[a]");
 * assert.deepEqual(memo.take([a, b], 0, ""), { count: 1, state: "[a]" });
 * assert.equal(memo.take([b, a], 0, ""), undefined);
 * assert.equal(memo.take([a, b], 0, "images"), undefined);
 * ```
 */
export class ConversationMemo<S> {
  #refs: Message[] = [];
  #key = "";
  #state: S | undefined = undefined;
  // How many of #refs the last `take` found again (-1: none), so `keep` can extend in place.
  #taken = -1;

  /**
   * The state at the end of the remembered run and its length, when `messages` holds that run
   * (the same objects, in order) from `head` on and `key` is the same; else undefined.
   */
  take(messages: readonly Message[], head: number, key: string): Taken<S> | undefined {
    this.#taken = -1;
    const refs = this.#refs;
    const state = this.#state;
    if (state === undefined || key !== this.#key || head + refs.length > messages.length) {
      return undefined;
    }
    for (let j = 0; j < refs.length; j++) if (messages[head + j] !== refs[j]) return undefined;
    this.#taken = refs.length;
    return { count: refs.length, state };
  }

  /** Remembers `messages` from `head` to `end` and the `state` at their end, under `key`. */
  keep(messages: readonly Message[], head: number, end: number, key: string, state: S): void {
    const taken = this.#taken;
    this.#taken = -1;
    const count = end - head;
    if (taken >= 0 && key === this.#key) {
      // The run found again is a prefix of the new one (or the new one of it): no copy.
      const refs = this.#refs;
      if (count < refs.length) refs.length = count;
      for (let i = head + refs.length; i < end; i++) refs.push(messages[i]);
    } else {
      this.#refs = messages.slice(head, end);
    }
    this.#key = key;
    this.#state = state;
  }
}

/** A remembered run found again: its length and the state at its end. */
export interface Taken<S> {
  /** How many messages, from `head`, the remembered run covers. */
  readonly count: number;
  /** The state at its end. */
  readonly state: S;
}
