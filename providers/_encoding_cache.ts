/**
 * Each committed message serialized once per dialect. A session's conversation only grows, and
 * the kernel freezes every message it commits, so the JSON a dialect made of a message for the
 * previous request is still right for the next one: reusing it keeps the cost of building a
 * request flat as the session grows, instead of re-serializing the whole history every step.
 *
 * @module
 */

/**
 * Encodings of frozen messages, by the message object and a variant (what else the encoding
 * depends on: whether images are sent, say). A message that is not frozen could still change,
 * so it is encoded every time and never kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EncodingCache } from "./_encoding_cache.ts";
 * const cache = new EncodingCache();
 * let calls = 0;
 * const encode = (m: { content: string }) => (calls++, JSON.stringify(m));
 * const message = Object.freeze({ content: "hi" });
 * assert.equal(cache.encode(message, "", encode), '{"content":"hi"}');
 * assert.equal(cache.encode(message, "", encode), '{"content":"hi"}');
 * assert.equal(calls, 1);
 * cache.encode({ content: "not frozen" }, "", encode);
 * cache.encode({ content: "not frozen" }, "", encode);
 * assert.equal(calls, 3);
 * ```
 */
export class EncodingCache {
  readonly #variants = new Map<string, WeakMap<object, string>>();

  /** The encoding of `message` under `variant`, made by `encode` the first time. */
  encode<M extends object>(message: M, variant: string, encode: (message: M) => string): string {
    if (!Object.isFrozen(message)) return encode(message);
    let cache = this.#variants.get(variant);
    if (cache === undefined) this.#variants.set(variant, cache = new WeakMap());
    let text = cache.get(message);
    if (text === undefined) cache.set(message, text = encode(message));
    return text;
  }
}
