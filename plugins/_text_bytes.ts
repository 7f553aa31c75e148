/**
 * Private helpers for the file tools that must not change a byte they were not asked to: UTF-8
 * validation (streamed, with the offset of the first bad byte), byte order marks, and a file's
 * line-ending convention.
 *
 * @module
 */

/** The UTF-8 byte order mark. */
export const UTF8_BOM: Uint8Array = new Uint8Array([0xef, 0xbb, 0xbf]);

/**
 * Whether `bytes` start with the UTF-8 byte order mark.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasUtf8Bom } from "./_text_bytes.ts";
 * assert.equal(hasUtf8Bom(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), true);
 * assert.equal(hasUtf8Bom(new TextEncoder().encode("a")), false);
 * ```
 */
export function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * `bytes` with the UTF-8 byte order mark in front.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasUtf8Bom, withUtf8Bom } from "./_text_bytes.ts";
 * assert.equal(hasUtf8Bom(withUtf8Bom(new TextEncoder().encode("a"))), true);
 * ```
 */
export function withUtf8Bom(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(UTF8_BOM.length + bytes.length);
  out.set(UTF8_BOM);
  out.set(bytes, UTF8_BOM.length);
  return out;
}

/**
 * The name of the UTF-16 encoding whose byte order mark starts `bytes`, if one does: such a file
 * is text, but not text these tools can change byte for byte.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { utf16Bom } from "./_text_bytes.ts";
 * assert.equal(utf16Bom(new Uint8Array([0xff, 0xfe, 0x61, 0x00])), "UTF-16LE");
 * assert.equal(utf16Bom(new TextEncoder().encode("a")), undefined);
 * ```
 */
export function utf16Bom(bytes: Uint8Array): "UTF-16LE" | "UTF-16BE" | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "UTF-16LE";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "UTF-16BE";
  return undefined;
}

/**
 * Validates UTF-8 as it arrives in chunks, by the rules `TextDecoder` with `fatal: true` applies
 * (no overlong forms, no surrogates, nothing past U+10FFFF), and says where the first bad
 * sequence starts, counted in bytes from the start of the stream.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Utf8Validator } from "./_text_bytes.ts";
 * const check = new Utf8Validator();
 * assert.equal(check.feed(new Uint8Array([0x61, 0xc3])), -1); // "a" and half of "é"
 * assert.equal(check.feed(new Uint8Array([0xa9, 0x62, 0xff])), 4);
 * assert.equal(new Utf8Validator().finish(), -1);
 * ```
 */
export class Utf8Validator {
  #offset = 0;
  #needed = 0;
  #start = 0;
  #lower = 0x80;
  #upper = 0xbf;

  /** Checks the next chunk; the stream offset of the first bad sequence in it, or -1. */
  feed(chunk: Uint8Array): number {
    // Locals, not fields, in the loop: it runs once per byte of every file read.
    let needed = this.#needed;
    let lower = this.#lower;
    let upper = this.#upper;
    let start = this.#start;
    const base = this.#offset;
    const length = chunk.length;
    let bad = -1;
    // Four bytes at a time through ASCII: most of most files.
    const first = (4 - (chunk.byteOffset % 4)) % 4;
    const words = length - first >= 4
      ? new Uint32Array(chunk.buffer, chunk.byteOffset + first, (length - first) >> 2)
      : undefined;
    for (let i = 0; i < length; i++) {
      if (needed === 0 && words !== undefined && i >= first && (i - first) % 4 === 0) {
        let w = (i - first) >> 2;
        while (w < words.length && (words[w] & 0x80808080) === 0) w++;
        i = first + w * 4;
        if (i >= length) break;
      }
      const byte = chunk[i];
      if (needed === 0) {
        if (byte < 0x80) continue;
        start = base + i;
        if (byte >= 0xc2 && byte <= 0xdf) needed = 1;
        else if (byte >= 0xe0 && byte <= 0xef) {
          if (byte === 0xe0) lower = 0xa0;
          if (byte === 0xed) upper = 0x9f;
          needed = 2;
        } else if (byte >= 0xf0 && byte <= 0xf4) {
          if (byte === 0xf0) lower = 0x90;
          if (byte === 0xf4) upper = 0x8f;
          needed = 3;
        } else {
          bad = start;
          break;
        }
        continue;
      }
      if (byte < lower || byte > upper) {
        bad = start;
        break;
      }
      lower = 0x80;
      upper = 0xbf;
      needed--;
    }
    this.#offset = base + length;
    if (bad !== -1) {
      // Reported once; what follows is judged afresh.
      needed = 0;
      lower = 0x80;
      upper = 0xbf;
    }
    this.#needed = needed;
    this.#lower = lower;
    this.#upper = upper;
    this.#start = start;
    return bad;
  }

  /** At the end of the stream: the offset of a sequence cut short, or -1. */
  finish(): number {
    return this.#needed === 0 ? -1 : this.#start;
  }
}

/**
 * Where the first bad UTF-8 sequence in `bytes` starts, or -1 when they are all valid UTF-8.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { invalidUtf8At } from "./_text_bytes.ts";
 * assert.equal(invalidUtf8At(new TextEncoder().encode("héllo")), -1);
 * assert.equal(invalidUtf8At(new Uint8Array([0x68, 0xe9, 0x6c])), 1); // Latin-1 "hél"
 * ```
 */
export function invalidUtf8At(bytes: Uint8Array): number {
  const check = new Utf8Validator();
  const bad = check.feed(bytes);
  return bad === -1 ? check.finish() : bad;
}

/**
 * The 1-based line on which byte `offset` of `bytes` lies.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineOfByte } from "./_text_bytes.ts";
 * assert.equal(lineOfByte(new TextEncoder().encode("a\nb\nc"), 4), 3);
 * ```
 */
export function lineOfByte(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let at = bytes.indexOf(10); at !== -1 && at < offset; at = bytes.indexOf(10, at + 1)) {
    line++;
  }
  return line;
}

/**
 * A file's line-ending convention: `crlf` when every line break is CRLF, `lf` when none is, and
 * `mixed` when both occur (`none` for a single line).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineEndings } from "./_text_bytes.ts";
 * assert.equal(lineEndings("a\r\nb\r\n"), "crlf");
 * assert.equal(lineEndings("a\nb\r\n"), "mixed");
 * assert.equal(lineEndings("a"), "none");
 * ```
 */
export function lineEndings(text: string): "crlf" | "lf" | "mixed" | "none" {
  const breaks = countOf(text, "\n");
  if (breaks === 0) return "none";
  const crlf = countOf(text, "\r\n");
  return crlf === 0 ? "lf" : crlf === breaks ? "crlf" : "mixed";
}

/**
 * `text` with every line break written as CRLF (a CRLF already there stays one).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toCrlf } from "./_text_bytes.ts";
 * assert.equal(toCrlf("a\nb\r\nc"), "a\r\nb\r\nc");
 * ```
 */
export function toCrlf(text: string): string {
  return text.replaceAll("\r\n", "\n").replaceAll("\n", "\r\n");
}

/**
 * `text` with every CRLF written as LF.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toLf } from "./_text_bytes.ts";
 * assert.equal(toLf("a\r\nb\nc"), "a\nb\nc");
 * ```
 */
export function toLf(text: string): string {
  return text.replaceAll("\r\n", "\n");
}

function countOf(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    count++;
  }
  return count;
}
