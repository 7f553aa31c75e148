/**
 * The ids of Gemini's function calls, which Gemini itself often leaves out. They never have to
 * mean anything to Gemini (it pairs responses with calls by name and order, and these ids are
 * not sent back), but amber needs them unique wherever calls meet: the kernel pairs results
 * with calls by id, a front end keys its tool lines by it, a transcript resumed in another
 * process goes on from calls made earlier, and a conversation that moves to another provider
 * sends them as that provider's call ids. So each is `call_<process>_<n>`: a random tag made
 * once per process and a count within it. Private to the package.
 *
 * @module
 */

/** Random per process: 48 bits, so two processes pick the same tag about never. */
const PROCESS_TAG: string = (() => {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
})();

let count = 0;

/**
 * A call id no other call of this process or of another one gets.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { madeUpCallId } from "./_gemini_call_ids.ts";
 * const [a, b] = [madeUpCallId(), madeUpCallId()];
 * assert.match(a, /^call_[0-9a-f]{12}_\d+$/);
 * assert.notEqual(a, b);
 * ```
 */
export function madeUpCallId(): string {
  return `call_${PROCESS_TAG}_${count++}`;
}
