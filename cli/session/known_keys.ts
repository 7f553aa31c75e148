/**
 * The keys a session knows of (the one in use, every configured provider's that is set), and
 * what keeps them out of sight: they are replaced in the events front ends show, in the tool
 * results the model is sent, in the session file and in the errors a front end prints
 * (`redact.ts` does the replacing).
 *
 * @module
 */

import type { SessionEvent } from "./events.ts";
import { EventRedactor, SecretRedactor } from "./redact.ts";

/**
 * The keys one session knows of. Learning keys only adds: a key once known stays redacted
 * after a switch to another provider.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { SessionEvent } from "./events.ts";
 * import { KnownKeys } from "./known_keys.ts";
 * const keys = new KnownKeys();
 * const out: SessionEvent[] = [];
 * const deliver = (event: SessionEvent) => out.push(event);
 * keys.learn(["sk-first-key"], deliver);
 * keys.learn(["sk-other-key"], deliver);
 * assert.deepEqual(keys.values, ["sk-other-key", "sk-first-key"]);
 * assert.equal(keys.redact("sk-first-key"), "[redacted]");
 * const error = keys.redactError(new TypeError("bad sk-other-key"));
 * assert.ok(error instanceof TypeError);
 * assert.equal(error.message, "bad [redacted]");
 * keys.apply({ type: "retry", message: "sk-first-key refused" }, deliver);
 * assert.deepEqual(out, [{ type: "retry", message: "[redacted] refused" }]);
 * ```
 */
export class KnownKeys {
  #values: readonly string[] = [];
  #redactor = new SecretRedactor([]);
  #events = new EventRedactor(this.#redactor);

  /** Every key known, for what is written to a session file. */
  get values(): readonly string[] {
    return this.#values;
  }

  /** `text` with every known key replaced by `[redacted]`. */
  redact(text: string): string {
    return this.#redactor.redact(text);
  }

  /**
   * `error` with no known key in its message or stack. Every front end prints a thrown error's
   * message: it must not carry a key either. The error keeps its class (callers tell errors
   * apart by it), only its text changes.
   */
  redactError(error: unknown): unknown {
    if (!(error instanceof Error)) return error;
    const message = this.#redactor.redact(error.message);
    if (message === error.message) return error;
    error.message = message;
    if (error.stack !== undefined) error.stack = this.#redactor.redact(error.stack);
    return error;
  }

  /** Passes `event`, redacted, to `deliver` (text that may start a key is held back). */
  apply(event: SessionEvent, deliver: (event: SessionEvent) => void): void {
    this.#events.apply(event, deliver);
  }

  /** Lets out to `deliver` any text held back (at the end of a turn, however it ended). */
  flush(deliver: (event: SessionEvent) => void): void {
    this.#events.flush(deliver);
  }

  /**
   * Adds `keys` to those known. When any is new, text held back so far goes to `deliver` first,
   * as redacted by the keys known until now.
   */
  learn(keys: Iterable<string>, deliver: (event: SessionEvent) => void): void {
    const values = new Set(keys);
    for (const old of this.#values) values.add(old);
    if (values.size === this.#values.length) return;
    this.#events.flush(deliver);
    this.#values = [...values];
    this.#redactor = new SecretRedactor(this.#values);
    this.#events = new EventRedactor(this.#redactor);
  }
}
