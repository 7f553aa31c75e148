/**
 * Server-sent events framing, per the WHATWG HTML "event stream" grammar, tuned for LLM streams:
 * thousands of small events, sometimes one huge one, arriving in arbitrary chunks.
 *
 * @module
 */

const LF = 10;
const COLON = 58;
const SPACE = 32;
const BOM = 0xfeff;
const CHAR_D = 100;
const CHAR_E = 101;
const CHAR_I = 105;
const CHAR_R = 114;

// Hoisted so the hot path allocates no options object per chunk.
const STREAM: TextDecodeOptions = { stream: true };
const KEEP_BOM: TextDecoderOptions = { ignoreBOM: true };

/**
 * An incremental SSE decoder. Feed it bytes ({@linkcode SseDecoder.pushBytes}) or text
 * ({@linkcode SseDecoder.push}) in chunks of any size, split anywhere (even inside a multi-byte
 * character or between the `\r` and `\n` of one line ending), then call
 * {@linkcode SseDecoder.end}. Each complete event reaches `onEvent` with its name (undefined for
 * the default type) and its `data` lines joined with `\n`; comments, `id` and `retry` are
 * dropped; a line that is no SSE field at all (a raw JSON error some servers write mid-stream)
 * goes to `onUnframed`. Unlike a browser, a last event without its closing blank line is still
 * delivered at `end()`, as every LLM SDK does.
 *
 * Work is linear in the input whatever the chunking: a partial line is kept as a list of pieces
 * and joined once, and the scan never goes back over text it has already seen.
 *
 * @example
 * ```ts
 * import { SseDecoder } from "@amber/providers/sse";
 * import assert from "node:assert/strict";
 * const seen: string[] = [];
 * const decoder = new SseDecoder(
 *   (name, data) => seen.push(`${name ?? "message"}=${data}`),
 *   (line) => seen.push(`raw ${line}`),
 * );
 * decoder.push("event: ping\ndata: {}\n\ndata: a\r");
 * decoder.push("\ndata: b\n\n{\"error\":{\"code\":500}}\ndata: tail");
 * decoder.end();
 * assert.deepEqual(seen, ["ping={}", "message=a\nb", "raw {\"error\":{\"code\":500}}", "message=tail"]);
 * ```
 */
export class SseDecoder {
  readonly #onEvent: (name: string | undefined, data: string) => void;
  readonly #onUnframed: ((line: string) => void) | undefined;
  /** Decodes a chunk that may end inside a character, keeping its last bytes for the next. */
  #textDecoder: TextDecoder | undefined;
  /** Decodes a chunk known to end on a whole character, in one pass. */
  #wholeDecoder: TextDecoder | undefined;
  /** The last chunk ended in a byte that may leave a character unfinished. */
  #streaming = false;
  /** No text has been decoded yet: a leading byte-order mark is the UTF-8 decoder's to drop. */
  #decoderBom = true;
  /** Pieces of a line whose ending has not arrived yet; joined once when it does. */
  #pending: string[] = [];
  /** The last text ended in `\r`: a `\n` opening the next text belongs to that line ending. */
  #afterCR = false;
  /** Nothing has been read yet: a leading byte-order mark is to be dropped. */
  #atStart = true;
  /** The data of the event being built; undefined until a `data` line arrives. */
  #data: string | undefined = undefined;
  /** The event name being built; undefined (or empty) is the default type. */
  #name: string | undefined = undefined;

  /**
   * Creates a decoder that reports complete events to `onEvent` and lines that are not SSE
   * fields to `onUnframed` (dropped when it is not given).
   */
  constructor(
    onEvent: (name: string | undefined, data: string) => void,
    onUnframed?: (line: string) => void,
  ) {
    this.#onEvent = onEvent;
    this.#onUnframed = onUnframed;
  }

  /**
   * Feeds UTF-8 bytes. A multi-byte character split between chunks is decoded once whole.
   *
   * @example
   * ```ts
   * import { SseDecoder } from "@amber/providers/sse";
   * import assert from "node:assert/strict";
   * const bytes = new TextEncoder().encode("data: é\n\n");
   * let data = "";
   * const decoder = new SseDecoder((_name, d) => data = d);
   * decoder.pushBytes(bytes.subarray(0, 7)); // ends inside "é"
   * decoder.pushBytes(bytes.subarray(7));
   * assert.equal(data, "é");
   * ```
   */
  pushBytes(chunk: Uint8Array): void {
    const length = chunk.length;
    if (length === 0) return;
    // A chunk ending in an ASCII byte ends on a whole character, so once the streaming decoder
    // holds nothing back it decodes the same in one pass, which costs half as much (no options
    // to convert, no state carried): on the wire almost every chunk ends so.
    const endsWhole = chunk[length - 1] < 0x80;
    let text: string;
    if (!this.#streaming && endsWhole) {
      text = (this.#wholeDecoder ??= new TextDecoder("utf-8", KEEP_BOM)).decode(chunk);
    } else {
      this.#streaming = !endsWhole;
      text = (this.#textDecoder ??= new TextDecoder("utf-8", KEEP_BOM)).decode(chunk, STREAM);
    }
    // Both decoders keep every U+FEFF (Deno's streaming one would drop one at the start of any
    // chunk); the UTF-8 decoder's own byte-order mark is the first character of the stream only.
    if (this.#decoderBom) {
      if (text.length === 0) return;
      this.#decoderBom = false;
      if (text.charCodeAt(0) === BOM) text = text.slice(1);
    }
    this.push(text);
  }

  /**
   * Feeds decoded text.
   *
   * @example
   * ```ts
   * import { SseDecoder } from "@amber/providers/sse";
   * import assert from "node:assert/strict";
   * const names: (string | undefined)[] = [];
   * const decoder = new SseDecoder((name) => names.push(name));
   * decoder.push("event: a\ndata: 1\n\n: a comment\ndata: 2\n\n");
   * assert.deepEqual(names, ["a", undefined]);
   * ```
   */
  push(text: string): void {
    const length = text.length;
    if (length === 0) return;
    let start = 0;
    if (this.#atStart) {
      this.#atStart = false;
      if (text.charCodeAt(0) === BOM) start = 1;
    }
    if (this.#afterCR) {
      this.#afterCR = false;
      if (text.charCodeAt(start) === LF) start++;
    }
    // Each indexOf runs once per line ending found, forward from the last one, so a chunk is
    // scanned once; a chunk with no `\r` costs a single failed search for it.
    let lf = text.indexOf("\n", start);
    let cr = text.indexOf("\r", start);
    while (lf !== -1 || cr !== -1) {
      let end: number;
      let next: number;
      if (cr === -1 || (lf !== -1 && lf < cr)) {
        end = lf;
        next = lf + 1;
        lf = text.indexOf("\n", next);
      } else {
        end = cr;
        next = cr + 1;
        if (next === length) {
          this.#afterCR = true;
        } else if (text.charCodeAt(next) === LF) {
          next++;
          lf = text.indexOf("\n", next);
        }
        cr = text.indexOf("\r", next);
      }
      const pending = this.#pending;
      if (pending.length === 0) {
        this.#line(text, start, end);
      } else {
        if (end > start) pending.push(text.slice(start, end));
        this.#pending = [];
        const line = pending.length === 1 ? pending[0] : pending.join("");
        this.#line(line, 0, line.length);
      }
      start = next;
    }
    if (start < length) this.#pending.push(start === 0 ? text : text.slice(start));
  }

  /**
   * Ends the stream: flushes the byte decoder, takes an unterminated last line as a line, and
   * delivers a last event that had no closing blank line. The decoder is then ready for a new
   * stream.
   *
   * @example
   * ```ts
   * import { SseDecoder } from "@amber/providers/sse";
   * import assert from "node:assert/strict";
   * const data: string[] = [];
   * const decoder = new SseDecoder((_name, d) => data.push(d));
   * decoder.push("data: [DONE]");
   * assert.equal(data.length, 0);
   * decoder.end();
   * assert.deepEqual(data, ["[DONE]"]);
   * ```
   */
  end(): void {
    if (this.#textDecoder !== undefined) {
      const rest = this.#textDecoder.decode();
      if (rest.length > 0) this.push(rest);
    }
    const pending = this.#pending;
    if (pending.length > 0) {
      this.#pending = [];
      const line = pending.length === 1 ? pending[0] : pending.join("");
      this.#line(line, 0, line.length);
    }
    this.#dispatch();
    this.#afterCR = false;
    this.#atStart = true;
    this.#streaming = false;
    this.#decoderBom = true;
  }

  /**
   * One line: `text` from `start` to `end`, read in place so that only the value (and the whole
   * line, for an unframed one) is ever copied out.
   */
  #line(text: string, start: number, end: number): void {
    if (start === end) {
      this.#dispatch();
      return;
    }
    const first = text.charCodeAt(start);
    if (first === COLON) return;
    // The field name is what precedes the first colon (the whole line when there is none); it is
    // compared in place, since almost every line is `data:`.
    let nameLength = -1;
    if (first === CHAR_D) {
      if (text.startsWith("data", start)) nameLength = 4;
    } else if (first === CHAR_E) {
      if (text.startsWith("event", start)) nameLength = 5;
    } else if (first === CHAR_I) {
      if (text.startsWith("id", start)) nameLength = 2;
    } else if (first === CHAR_R) {
      if (text.startsWith("retry", start)) nameLength = 5;
    }
    const colon = start + nameLength;
    if (nameLength === -1 || (colon < end && text.charCodeAt(colon) !== COLON) || colon > end) {
      this.#onUnframed?.(text.slice(start, end));
      return;
    }
    let valueStart = colon + 1;
    if (valueStart < end && text.charCodeAt(valueStart) === SPACE) valueStart++;
    if (first === CHAR_D) {
      const value = valueStart >= end ? "" : text.slice(valueStart, end);
      this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
    } else if (first === CHAR_E) {
      this.#name = valueStart >= end ? "" : text.slice(valueStart, end);
    }
    // `id` and `retry` are read and dropped: amber never reconnects an LLM stream.
  }

  #dispatch(): void {
    const data = this.#data;
    const name = this.#name;
    this.#data = undefined;
    this.#name = undefined;
    if (data === undefined) return;
    this.#onEvent(name === undefined || name.length === 0 ? undefined : name, data);
  }
}
