/**
 * The Gemini server side of the fake provider, shaped like recorded `alt=sse` streams: `data:`
 * frames ending in CRLF pairs as Google's front ends send them, thought parts, text parts in
 * chunks, function calls whole (parallel ones in one chunk), the finish reason on the last chunk
 * and cumulative usage on every chunk.
 *
 * @module
 */

import type { FinishReason } from "@amber/core";
import type { WireEncoder } from "./encoder.ts";
import { chunkText, finishOf, type ScriptedTurn } from "./script.ts";

const FINISH_REASONS: { readonly [reason in FinishReason]: string } = {
  stop: "STOP",
  tool_calls: "STOP",
  length: "MAX_TOKENS",
  content_filter: "SAFETY",
  error: "MALFORMED_FUNCTION_CALL",
  other: "OTHER",
};

const STATUS_NAMES: { readonly [code: number]: string } = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  501: "NOT_IMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

function statusName(code: number): string {
  return STATUS_NAMES[code] ?? (code >= 500 ? "INTERNAL" : "FAILED_PRECONDITION");
}

function dataFrame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}

type Part = Record<string, unknown>;

/** Gemini sends arguments as an object, never as broken JSON; scripted junk becomes `{}`. */
function argsOf(args: string | Record<string, unknown>): unknown {
  if (typeof args !== "string") return args;
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

/**
 * Gemini's wire, byte for byte. A turn that finishes with `error` ends with
 * `MALFORMED_FUNCTION_CALL`; `tool_calls` is `STOP`, as Gemini says it.
 *
 * @example
 * ```ts
 * import { geminiEncoder } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * const [frame] = geminiEncoder.frames({ text: "Hi" }, "gemini-test");
 * assert.ok(frame.startsWith("data: {") && frame.endsWith("\r\n\r\n"));
 * assert.equal(JSON.parse(frame.slice(6)).candidates[0].finishReason, "STOP");
 * ```
 */
export const geminiEncoder: WireEncoder = {
  flavor: "gemini",

  frames(turn: ScriptedTurn, model: string): string[] {
    const size = turn.chunkSize ?? 8;
    const chunks: Part[][] = [];
    for (const piece of chunkText(turn.reasoning ?? "", size)) {
      chunks.push([{ text: piece, thought: true }]);
    }
    for (const piece of chunkText(turn.text ?? "", size)) chunks.push([{ text: piece }]);
    const calls = turn.toolCalls ?? [];
    if (calls.length > 0) {
      chunks.push(calls.map((call) => {
        const functionCall: Part = { name: call.name, args: argsOf(call.arguments) };
        if (call.id !== undefined) functionCall.id = call.id;
        return { functionCall };
      }));
    }
    // Gemini closes even an empty answer with one chunk that carries the finish reason.
    if (chunks.length === 0) chunks.push([{ text: "" }]);
    const finish = FINISH_REASONS[finishOf(turn)];
    const usage = turn.usage;
    const frames: string[] = [];
    for (let i = 0; i < chunks.length; i++) {
      const last = i === chunks.length - 1;
      const candidate: Record<string, unknown> = {
        content: { parts: chunks[i], role: "model" },
        index: 0,
      };
      if (last) candidate.finishReason = finish;
      const chunk: Record<string, unknown> = { candidates: [candidate] };
      if (usage !== undefined) {
        // Cumulative: the count grows with each chunk and ends at the scripted total.
        const candidates = Math.floor(usage.completionTokens * (i + 1) / chunks.length);
        chunk.usageMetadata = {
          promptTokenCount: usage.promptTokens,
          candidatesTokenCount: candidates,
          totalTokenCount: usage.promptTokens + candidates,
        };
      }
      chunk.modelVersion = model;
      chunk.responseId = "fake-response-01";
      frames.push(dataFrame(chunk));
    }
    return frames;
  },

  errorBody(status: number, message: string): string {
    const error: Record<string, unknown> = { code: status, message, status: statusName(status) };
    if (status === 429) {
      error.details = [
        {
          "@type": "type.googleapis.com/google.rpc.QuotaFailure",
          violations: [{
            quotaMetric: "generativelanguage.googleapis.com/generate_content_requests",
            quotaId: "GenerateRequestsPerMinutePerProjectPerModel",
          }],
        },
        { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "1s" },
      ];
    }
    return JSON.stringify({ error });
  },

  streamErrorFrame(message: string): string {
    // Not an SSE line: Google writes the error object raw into the stream, pretty-printed.
    const body = JSON.stringify({ error: { code: 500, message, status: "INTERNAL" } }, null, 2);
    return `${body}\r\n\r\n`;
  },

  modelsBody(models: readonly string[]): string {
    return JSON.stringify({
      models: models.map((id) => ({
        name: `models/${id}`,
        displayName: id,
        supportedGenerationMethods: ["generateContent", "countTokens"],
      })),
    });
  },
};
