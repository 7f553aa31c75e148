// Images `read` returns as images (the model sees them where it takes images; a line says what was
// left out where it does not): known by their first bytes, not by their names.

import type { ToolImage } from "@amber/core";

/** The largest image `read` returns (bytes): the smallest limit among the providers (5 MB). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

// An image format's media type and the bytes its header has, each run at its offset.
const SIGNATURES: readonly {
  readonly type: string;
  readonly runs: readonly (readonly [at: number, bytes: readonly number[]])[];
}[] = [
  { type: "image/png", runs: [[0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]]] },
  { type: "image/jpeg", runs: [[0, [0xff, 0xd8, 0xff]]] },
  { type: "image/gif", runs: [[0, [0x47, 0x49, 0x46, 0x38, 0x37, 0x61]]] },
  { type: "image/gif", runs: [[0, [0x47, 0x49, 0x46, 0x38, 0x39, 0x61]]] },
  // RIFF....WEBP
  { type: "image/webp", runs: [[0, [0x52, 0x49, 0x46, 0x46]], [8, [0x57, 0x45, 0x42, 0x50]]] },
];

/**
 * The media type of the image whose first bytes are `head` (PNG, JPEG, GIF or WebP), or
 * undefined for anything else.
 */
export function imageType(head: Uint8Array): string | undefined {
  return SIGNATURES.find(({ runs }) => runs.every(([at, bytes]) => has(head, at, bytes)))?.type;
}

function has(head: Uint8Array, at: number, bytes: readonly number[]): boolean {
  if (head.length < at + bytes.length) return false;
  return bytes.every((byte, i) => head[at + i] === byte);
}

/** The image in `bytes`, of media type `mimeType`, as a tool result carries it. */
export function toolImage(bytes: Uint8Array, mimeType: string): ToolImage {
  // V8 has Uint8Array.prototype.toBase64; TypeScript's library does not name it yet.
  return { mimeType, data: (bytes as unknown as { toBase64(): string }).toBase64() };
}
