/**
 * What the user typed while amber was starting, before the terminal went into raw mode. The
 * terminal was then in its line mode, which turns the carriage return of Enter into a line feed;
 * read in raw mode, where a line feed is Ctrl-J (a new line in the prompt), the typed-ahead Enter
 * would not send the prompt.
 *
 * @module
 */

const LF = 0x0a;
const CR = 0x0d;
const ESC = 0x1b;

/**
 * The first bytes read once raw mode is on, with each Enter typed before it as the carriage return
 * raw mode delivers for Enter. Such a read holds what waited in the terminal: text and line feeds,
 * never a carriage return (line mode turned them into line feeds) and no escape (no key but plain
 * text and Enter is worth typing blind). A key pressed in raw mode arrives alone, Ctrl-J as one
 * line feed, so a first read of one byte, or one with a carriage return or an escape in it, is
 * left as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { typedAhead } from "./typeahead.ts";
 * const bytes = (text: string) => new TextEncoder().encode(text);
 * // Typed while amber started: Enter sends it.
 * assert.deepEqual(typedAhead(bytes("fix the typo\n")), bytes("fix the typo\r"));
 * // Ctrl-J pressed in raw mode stays a new line.
 * assert.deepEqual(typedAhead(bytes("\n")), bytes("\n"));
 * // Keys read in raw mode: left alone.
 * assert.deepEqual(typedAhead(bytes("a\x1b[A\n")), bytes("a\x1b[A\n"));
 * ```
 */
export function typedAhead(bytes: Uint8Array): Uint8Array {
  if (bytes.length < 2 || !bytes.includes(LF) || bytes.includes(CR) || bytes.includes(ESC)) {
    return bytes;
  }
  return bytes.map((byte) => byte === LF ? CR : byte);
}
