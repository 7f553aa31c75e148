/**
 * Ctrl-C as presses, not signals. One Ctrl-C in a terminal can reach amber as two SIGINTs a few
 * milliseconds apart: the terminal signals its whole foreground process group (amber and the
 * `deno task` running it), and `deno task` forwards what it got to its child. Counted as two
 * presses, the second would read as "quit at once" and cut a cancel short. Signals that arrive
 * within {@linkcode ECHO_MS} of the last counted press are its echo.
 *
 * @module
 */

/** How close (ms) a signal must follow a press to be taken for the same press. */
export const ECHO_MS = 300;

/** How {@linkcode InterruptPresses} tells presses apart. */
export interface InterruptPressesOptions {
  /** The echo window, ms; {@linkcode ECHO_MS} by default. */
  readonly echoMs?: number;
  /** The clock, ms; `performance.now` by default (tests pass their own). */
  readonly now?: () => number;
}

/**
 * Counts presses from the signals that arrive.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { InterruptPresses } from "./interrupt_presses.ts";
 * let time = 0;
 * const presses = new InterruptPresses({ now: () => time });
 * assert.equal(presses.signal(), true);
 * time = 5; // `deno task` forwarding the same Ctrl-C
 * assert.equal(presses.signal(), false);
 * time = 1000;
 * assert.equal(presses.signal(), true);
 * assert.equal(presses.count, 2);
 * ```
 */
export class InterruptPresses {
  readonly #echoMs: number;
  readonly #now: () => number;
  #last: number | undefined;
  #count = 0;

  /** Presses told apart by `options`. */
  constructor(options: InterruptPressesOptions = {}) {
    this.#echoMs = options.echoMs ?? ECHO_MS;
    this.#now = options.now ?? (() => performance.now());
  }

  /** How many presses were counted. */
  get count(): number {
    return this.#count;
  }

  /** A signal arrived: true when it is a new press, false when it echoes the last one. */
  signal(): boolean {
    const now = this.#now();
    if (this.#last !== undefined && now - this.#last < this.#echoMs) return false;
    this.#last = now;
    this.#count++;
    return true;
  }
}
