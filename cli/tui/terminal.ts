/**
 * The terminal the TUI runs in: raw mode (every key reaches the app, Ctrl-C included, and
 * nothing is echoed), the alternate screen (the shell's scrollback is left as it was), bracketed
 * paste, no line wrap at the right edge, its size and resizes (SIGWINCH), and input read as
 * bytes. `restore()` undoes all of it and may be called any number of times;
 * {@linkcode guardTerminal} calls it on every way out: a normal exit, `Deno.exit`, an uncaught
 * error, an unhandled rejection, SIGTERM, SIGHUP.
 *
 * @module
 */

import { ECHO_MS, InterruptPresses } from "../interrupt_presses.ts";
import { typedAhead } from "./typeahead.ts";

/** A terminal as the TUI uses it. */
export interface Terminal {
  /** Columns and rows now. */
  size(): { readonly columns: number; readonly rows: number };
  /** Writes text and escape sequences. */
  write(text: string): void;
  /** Enters the TUI's modes and starts delivering input and resizes. */
  start(handlers: TerminalHandlers): void;
  /** Leaves every mode `start` entered and stops input; safe to call more than once. */
  restore(): void;
}

/** What a started terminal calls. */
export interface TerminalHandlers {
  /** Bytes typed or pasted. */
  onInput(bytes: Uint8Array): void;
  /** The window changed size. */
  onResize(): void;
  /** Input ended (the terminal went away). */
  onEnd?(): void;
}

/** Sequences that enter the TUI's modes: alternate screen, bracketed paste, no autowrap. */
export const ENTER_SEQUENCE = "\x1b[?1049h\x1b[?2004h\x1b[?7l\x1b[?25l\x1b[2J";
/** Sequences that leave them again, cursor shown, attributes reset. */
export const RESTORE_SEQUENCE = "\x1b[0m\x1b[?2004l\x1b[?7h\x1b[?25h\x1b[?1049l";

/**
 * The process's own terminal: stdin in raw mode, stdout for output.
 *
 * @example
 * ```ts ignore
 * const terminal = new DenoTerminal();
 * terminal.start({ onInput: (bytes) => {}, onResize: () => {} });
 * terminal.restore();
 * ```
 */
export class DenoTerminal implements Terminal {
  #encoder = new TextEncoder();
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #resize: (() => void) | undefined;
  #started = false;
  #restored = false;

  /** Columns and rows of stdout (80 x 24 when it cannot tell). */
  size(): { columns: number; rows: number } {
    try {
      const { columns, rows } = Deno.consoleSize();
      if (columns > 0 && rows > 0) return { columns, rows };
    } catch {
      // Not a terminal after all.
    }
    return { columns: 80, rows: 24 };
  }

  /** Writes synchronously: a frame is on screen when this returns. */
  write(text: string): void {
    if (text === "") return;
    const bytes = this.#encoder.encode(text);
    let written = 0;
    while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
  }

  /** Raw mode, alternate screen, bracketed paste; reading and SIGWINCH start. */
  start(handlers: TerminalHandlers): void {
    if (this.#started) return;
    this.#started = true;
    Deno.stdin.setRaw(true, { cbreak: false });
    this.write(ENTER_SEQUENCE);
    this.#resize = () => handlers.onResize();
    Deno.addSignalListener("SIGWINCH", this.#resize);
    const reader = Deno.stdin.readable.getReader();
    this.#reader = reader;
    (async () => {
      try {
        // The first read holds what was typed while amber started, in the terminal's line mode.
        let first = true;
        while (true) {
          const { value, done } = await reader.read();
          if (done) break;
          handlers.onInput(first ? typedAhead(value) : value);
          first = false;
        }
      } catch {
        // Cancelled by restore(), or the terminal went away: either way input is over.
      }
      if (!this.#restored) handlers.onEnd?.();
    })();
  }

  /** Leaves raw mode and the alternate screen, shows the cursor, stops reading. */
  restore(): void {
    if (!this.#started || this.#restored) return;
    this.#restored = true;
    try {
      this.write(RESTORE_SEQUENCE);
    } catch {
      // stdout is gone; there is nothing left to restore on it.
    }
    try {
      Deno.stdin.setRaw(false);
    } catch {
      // stdin is gone.
    }
    if (this.#resize !== undefined) {
      try {
        Deno.removeSignalListener("SIGWINCH", this.#resize);
      } catch {
        // Already removed.
      }
    }
    // Cancelling the reader ends the pending read, which would otherwise keep the process alive.
    this.#reader?.cancel().catch(() => {});
  }
}

/**
 * Makes sure `terminal.restore()` runs whatever way the process ends: on `unload` (a normal end
 * and `Deno.exit`), an uncaught error or unhandled rejection (restored first, so Deno's report
 * lands on a sane terminal), and SIGTERM or SIGHUP (restored, then the process exits with
 * 128 + the signal number). SIGINT sent from outside goes to `onInterrupt`, as a Ctrl-C typed in
 * the TUI does; in raw mode a typed Ctrl-C is input, but `deno task` may still forward a SIGINT
 * it was sent, and a signal that echoes the one before it (within `echoMs`) is one press.
 * Returns a function that removes the guards.
 *
 * @example
 * ```ts ignore
 * const unguard = guardTerminal(terminal, () => app.interrupt());
 * try {
 *   await app.run();
 * } finally {
 *   terminal.restore();
 *   unguard();
 * }
 * ```
 */
export function guardTerminal(
  terminal: Terminal,
  onInterrupt: () => void,
  echoMs: number = ECHO_MS,
): () => void {
  const restore = () => terminal.restore();
  const presses = new InterruptPresses({ echoMs });
  const signals: [Deno.Signal, () => void][] = [
    ["SIGTERM", () => {
      restore();
      Deno.exit(143);
    }],
    ["SIGHUP", () => {
      restore();
      Deno.exit(129);
    }],
    ["SIGINT", () => {
      if (presses.signal()) onInterrupt();
    }],
  ];
  globalThis.addEventListener("unload", restore);
  globalThis.addEventListener("error", restore);
  globalThis.addEventListener("unhandledrejection", restore);
  for (const [signal, handler] of signals) Deno.addSignalListener(signal, handler);
  return () => {
    globalThis.removeEventListener("unload", restore);
    globalThis.removeEventListener("error", restore);
    globalThis.removeEventListener("unhandledrejection", restore);
    for (const [signal, handler] of signals) {
      try {
        Deno.removeSignalListener(signal, handler);
      } catch {
        // Already removed.
      }
    }
  };
}
