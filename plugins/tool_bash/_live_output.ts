/**
 * A command's output streamed to a front end while it runs (`ToolCallContext.output`): text is
 * gathered and sent in batches at most every {@linkcode LIVE_OUTPUT_INTERVAL_MS}, so a chatty
 * command costs a few events a second, not one per read. The command's secrets are redacted
 * before anything leaves, also when a secret arrives split over two reads: the end of the text
 * that could be the start of a secret is held back until the next read, or the end, settles it.
 *
 * @module
 */

import { redactSecrets } from "../process_group.ts";

/** The shortest time between two batches (ms): at most ~20 a second. */
export const LIVE_OUTPUT_INTERVAL_MS = 50;

/**
 * The most characters one batch carries. Output that comes faster is shown by its end, after a
 * line saying how much was left out (the result keeps its own tail regardless).
 */
export const MAX_LIVE_BATCH_CHARS = 8_192;

/**
 * Batches, redacts and sends a command's output as it streams.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LiveOutput } from "./_live_output.ts";
 * const sent: string[] = [];
 * const live = new LiveOutput((chunk) => sent.push(chunk), ["s3cret"]);
 * live.push("key: s3c");
 * live.push("ret\nok\n");
 * live.close();
 * assert.deepEqual(sent, ["key: [redacted]\nok\n"]);
 * ```
 */
export class LiveOutput {
  readonly #send: (chunk: string) => void;
  readonly #secrets: readonly string[];
  readonly #intervalMs: number;
  // Redacted text waiting for the next batch.
  #ready = "";
  // The unredacted end that may be the start of a secret.
  #held = "";
  // Characters of the waiting text dropped because it came faster than a batch carries.
  #dropped = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  /**
   * Sends batches to `send`, with `secrets` redacted, at most one per `intervalMs`. A `send`
   * that throws ends the stream (the command and its result are not the front end's to break).
   */
  constructor(
    send: (chunk: string) => void,
    secrets: readonly string[],
    intervalMs: number = LIVE_OUTPUT_INTERVAL_MS,
  ) {
    this.#send = send;
    this.#secrets = secrets.filter((secret) => secret !== "");
    this.#intervalMs = intervalMs;
  }

  /** Takes the next decoded piece of output. */
  push(text: string): void {
    if (this.#closed || text === "") return;
    const raw = this.#held + text;
    const hold = secretPrefixAtEnd(raw, this.#secrets);
    this.#held = raw.slice(raw.length - hold);
    this.#ready += redactSecrets(raw.slice(0, raw.length - hold), this.#secrets);
    // Trimmed now and then rather than per piece: slicing on every piece would be quadratic.
    if (this.#ready.length > 2 * MAX_LIVE_BATCH_CHARS) {
      this.#dropped += this.#ready.length - MAX_LIVE_BATCH_CHARS;
      this.#ready = this.#ready.slice(-MAX_LIVE_BATCH_CHARS);
    }
    this.#timer ??= setTimeout(() => this.#flush(), this.#intervalMs);
  }

  /** Sends what is left, the held-back end included, and stops; later pieces are ignored. */
  close(): void {
    if (this.#closed) return;
    this.#ready += redactSecrets(this.#held, this.#secrets);
    this.#held = "";
    this.#flush();
    this.#closed = true;
  }

  #flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    let chunk = this.#ready;
    this.#ready = "";
    if (chunk.length > MAX_LIVE_BATCH_CHARS) {
      this.#dropped += chunk.length - MAX_LIVE_BATCH_CHARS;
      chunk = chunk.slice(-MAX_LIVE_BATCH_CHARS);
    }
    if (chunk === "" || this.#closed) return;
    if (this.#dropped > 0) {
      chunk = `[${this.#dropped} characters of output not shown]\n${chunk}`;
      this.#dropped = 0;
    }
    try {
      this.#send(chunk);
    } catch {
      this.#closed = true;
    }
  }
}

/**
 * The length of the longest end of `text` that is the start (not the whole) of a secret: what
 * must wait for more text before it can be redacted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { secretPrefixAtEnd } from "./_live_output.ts";
 * assert.equal(secretPrefixAtEnd("token=ab", ["abcd"]), 2);
 * assert.equal(secretPrefixAtEnd("token=abcd", ["abcd"]), 0);
 * assert.equal(secretPrefixAtEnd("plain", ["abcd"]), 0);
 * ```
 */
export function secretPrefixAtEnd(text: string, secrets: readonly string[]): number {
  let longest = 0;
  const last = text.at(-1);
  if (last === undefined) return 0;
  for (const secret of secrets) {
    for (let length = Math.min(secret.length - 1, text.length); length > longest; length--) {
      if (secret[length - 1] === last && text.endsWith(secret.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}
