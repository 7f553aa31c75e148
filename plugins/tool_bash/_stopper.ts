/**
 * What stops a `bash` command before it ends on its own, wherever it runs (a local process
 * group or an editor's terminal): its timeout or the run's cancel, whichever comes first.
 *
 * @module
 */

import type { Stopped } from "./_result.ts";

/**
 * Calls `stop` once `timeoutMs` passed or `signal` aborted (at once if it already has), and
 * remembers which it was; {@linkcode CommandStopper.dispose} once the command ended.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CommandStopper } from "./_stopper.ts";
 * const controller = new AbortController();
 * let stops = 0;
 * const stopper = new CommandStopper(controller.signal, 60_000, () => stops++);
 * assert.equal(stopper.stopped, undefined);
 * controller.abort();
 * assert.equal(stopper.stopped, "cancelled");
 * assert.equal(stops, 1);
 * stopper.dispose();
 * ```
 */
export class CommandStopper {
  #stopped: Stopped;
  readonly #signal: AbortSignal;
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #onAbort: () => void;

  /** Starts the timeout and listens to `signal`. */
  constructor(signal: AbortSignal, timeoutMs: number, stop: () => void) {
    this.#signal = signal;
    this.#onAbort = () => {
      this.#stopped ??= "cancelled";
      stop();
    };
    signal.addEventListener("abort", this.#onAbort, { once: true });
    // The signal may have fired while the command was being started.
    if (signal.aborted) this.#onAbort();
    this.#timer = setTimeout(() => {
      this.#stopped ??= "timeout";
      stop();
    }, timeoutMs);
  }

  /** What stopped the command, if anything did yet. */
  get stopped(): Stopped {
    return this.#stopped;
  }

  /** Stops the timeout and the listening. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#signal.removeEventListener("abort", this.#onAbort);
  }
}
