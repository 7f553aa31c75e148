/**
 * The start of a text file, read without reading the rest: a markdown command's `@path` and a
 * skill's `file` name files the model or a cloned repository chose, and a log of gigabytes
 * must cost no more memory than the part of it that is kept.
 *
 * @module
 */

/** What {@linkcode readTextPrefix} read. */
export interface TextPrefix {
  /** At most the characters asked for. */
  readonly text: string;
  /** Whether the file had more. */
  readonly cut: boolean;
  /** The file's size in bytes. */
  readonly bytes: number;
}

/**
 * The first `maxChars` characters of the regular file at `path` (a UTF-8 character takes at
 * most 4 bytes, so no more than `4 × maxChars` bytes are read).
 *
 * @throws {Error} when `path` is not a regular file (a FIFO would block the read forever).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readTextPrefix } from "./text_prefix.ts";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, "héllo world");
 * assert.deepEqual(await readTextPrefix(path, 5), { text: "héllo", cut: true, bytes: 12 });
 * assert.deepEqual(await readTextPrefix(path, 50), { text: "héllo world", cut: false, bytes: 12 });
 * await Deno.remove(path);
 * ```
 */
export async function readTextPrefix(path: string, maxChars: number): Promise<TextPrefix> {
  // Asked before opening: opening a FIFO to read waits for a writer.
  const info = await Deno.stat(path);
  if (!info.isFile) throw new Error(`${path} is not a regular file`);
  using file = await Deno.open(path, { read: true });
  const buffer = new Uint8Array(Math.min(info.size, maxChars * 4));
  let filled = 0;
  while (filled < buffer.length) {
    const got = await file.read(buffer.subarray(filled));
    if (got === null) break;
    filled += got;
  }
  // A character cut at the buffer's end decodes as U+FFFD; it is past `maxChars` when it matters.
  const decoded = new TextDecoder().decode(buffer.subarray(0, filled));
  const cut = decoded.length > maxChars || filled < info.size;
  return { text: decoded.slice(0, maxChars), cut, bytes: info.size };
}
