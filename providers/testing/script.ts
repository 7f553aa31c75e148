/**
 * What a fake provider is told to answer: scripted turns in neutral terms, and the faults it can
 * inject. Each wire encoder turns a turn into its protocol's bytes.
 *
 * @module
 */

import type { FinishReason } from "@amber/core";

/** A tool call the fake model makes. */
export interface ScriptedToolCall {
  /** The call id; one is made up when absent. */
  readonly id?: string;
  /** The tool's name. */
  readonly name: string;
  /** The arguments, as JSON text or a value to serialise. */
  readonly arguments: string | Record<string, unknown>;
}

/** Something going wrong on purpose. */
export type Fault =
  /** An error response instead of a stream; optional retry-after headers. */
  | {
    readonly kind: "status";
    readonly status: number;
    readonly message?: string;
    /** `retry-after` in seconds, or an HTTP date. */
    readonly retryAfter?: string;
    /** `retry-after-ms`. */
    readonly retryAfterMs?: number;
    /** A body to send as it is, instead of the protocol's error object. */
    readonly body?: string;
  }
  /** The connection is cut after this many events. */
  | { readonly kind: "drop"; readonly afterEvents: number }
  /** A chunk that is not valid JSON after this many events; the stream then goes on. */
  | { readonly kind: "malformed"; readonly afterEvents: number }
  /** The protocol's in-stream error event after this many events; the stream then ends. */
  | { readonly kind: "streamError"; readonly afterEvents: number; readonly message: string }
  /** The response starts only after this delay. */
  | { readonly kind: "slowFirstByte"; readonly delayMs: number };

/**
 * One answer of the fake model.
 *
 * @example
 * ```ts
 * import { finishOf, type ScriptedTurn } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * const turn: ScriptedTurn = {
 *   reasoning: "The user wants a file read.",
 *   toolCalls: [{ name: "read", arguments: { path: "README.md" } }],
 *   usage: { promptTokens: 120, completionTokens: 14 },
 * };
 * assert.equal(finishOf(turn), "tool_calls");
 * ```
 */
export interface ScriptedTurn {
  /** Text the model streams. */
  readonly text?: string;
  /** Reasoning the model streams first. */
  readonly reasoning?: string;
  /** Tool calls, streamed in parallel where the protocol allows. */
  readonly toolCalls?: readonly ScriptedToolCall[];
  /** The token counts to report. */
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
  /** The finish reason; `tool_calls` when there are calls, `stop` otherwise. */
  readonly finish?: FinishReason;
  /** How many characters each text or argument delta carries (default 8). */
  readonly chunkSize?: number;
  /** A fault to inject. */
  readonly fault?: Fault;
}

/**
 * Splits `text` into pieces of at most `size` characters, never splitting a surrogate pair.
 *
 * @example
 * ```ts
 * import { chunkText } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * assert.deepEqual(chunkText("abcdefg", 3), ["abc", "def", "g"]);
 * ```
 */
export function chunkText(text: string, size: number): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + Math.max(1, size));
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}

/**
 * The arguments of a scripted call as JSON text.
 *
 * @example
 * ```ts
 * import { argumentsText } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * assert.equal(argumentsText({ name: "x", arguments: { a: 1 } }), '{"a":1}');
 * ```
 */
export function argumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

/**
 * The finish reason a turn ends with.
 *
 * @example
 * ```ts
 * import { finishOf } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * assert.equal(finishOf({ toolCalls: [{ name: "x", arguments: "{}" }] }), "tool_calls");
 * ```
 */
export function finishOf(turn: ScriptedTurn): FinishReason {
  return turn.finish ?? (turn.toolCalls?.length ? "tool_calls" : "stop");
}
