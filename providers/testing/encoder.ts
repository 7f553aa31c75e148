/**
 * The wire half of the fake provider: what one protocol's server sends for a scripted turn.
 *
 * @module
 */

import type { ScriptedTurn } from "./script.ts";

/**
 * One protocol's server side, byte for byte: the SSE frames of a turn, its error bodies, its
 * in-stream error event and its models listing.
 */
export interface WireEncoder {
  /** The flavor it speaks. */
  readonly flavor: string;
  /** Complete SSE frames (each ending in a blank line) for a turn. */
  frames(turn: ScriptedTurn, model: string): string[];
  /** The body of an error response with this status. */
  errorBody(status: number, message: string): string;
  /** The protocol's in-stream error, as one frame. */
  streamErrorFrame(message: string): string;
  /** The body of a models listing. */
  modelsBody(models: readonly string[]): string;
  /**
   * The whole answer as one JSON body, for a request that did not ask to stream; protocols
   * without a non-streaming mode leave it out.
   */
  completionBody?(turn: ScriptedTurn, model: string): string;
}

/**
 * One SSE frame: an optional event name and a data line.
 *
 * @example
 * ```ts
 * import { sseFrame } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * assert.equal(sseFrame({ a: 1 }, "ping"), 'event: ping\ndata: {"a":1}\n\n');
 * ```
 */
export function sseFrame(data: unknown, event?: string): string {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return `${event === undefined ? "" : `event: ${event}\n`}data: ${payload}\n\n`;
}
