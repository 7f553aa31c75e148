/**
 * The ids of Gemini's function calls, which Gemini itself leaves out. They only have to be
 * unique within one conversation (the kernel pairs results with calls by id, a front end keys
 * its tool lines by it, and a conversation that moves to another provider sends them as that
 * provider's call ids), and never have to mean anything to Gemini, which pairs responses with
 * calls by name and order. So they are counted per dialect instance, that is per client, with
 * no state shared between sessions or runs, and each request moves the count past the
 * `call_<n>` ids its conversation already holds: a resumed session, or one whose client was
 * made anew, goes on numbering where its transcript left off. Private to the package.
 *
 * @module
 */

import type { Message } from "@amber/core";

const MADE_UP = /^call_(\d+)$/;

/** Hands out `call_<n>` ids, in order, for the calls of one conversation. */
export class CallIds {
  #next = 0;

  /** The next id. */
  next(): string {
    return `call_${this.#next++}`;
  }

  /** Moves past every `call_<n>` id among `messages`' tool calls, so none is handed out twice. */
  skipPast(messages: readonly Message[]): void {
    let next = this.#next;
    for (const message of messages) {
      if (message.role !== "assistant" || message.toolCalls === undefined) continue;
      for (const call of message.toolCalls) {
        const match = MADE_UP.exec(call.id);
        if (match === null) continue;
        const n = Number(match[1]);
        // An id too long to count exactly cannot collide with one counted from zero anyway.
        if (Number.isSafeInteger(n) && n >= next) next = n + 1;
      }
    }
    this.#next = next;
  }
}
