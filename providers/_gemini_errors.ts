/**
 * Gemini's error object (`{error: {code, message, status, details}}`), read from an error
 * response or from inside a stream, and the one-line message made of it. Private to the package.
 *
 * @module
 */

import { bodyLine, errorLine, oneLine } from "./_error_text.ts";
import { isObject } from "./_gemini_schema.ts";

/** gRPC status names by HTTP status, for messages that lack one. */
const STATUS_NAMES: { readonly [code: number]: string } = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "NOT_IMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** What Gemini's error object says. */
export interface GeminiError {
  /** The HTTP status the error stands for. */
  readonly code?: number;
  /** Gemini's own words. */
  readonly message?: string;
  /** The gRPC status name (`RESOURCE_EXHAUSTED`, ...). */
  readonly status?: string;
  /** The wait a `google.rpc.RetryInfo` detail asks for. */
  readonly retryDelayMs?: number;
}

/** Reads `{error: {...}}`, also wrapped in a list as the non-SSE stream sends it. */
export function readError(value: unknown): GeminiError | undefined {
  const holder = Array.isArray(value) ? value[0] : value;
  const error = isObject(holder) ? holder.error : undefined;
  if (!isObject(error)) return undefined;
  return {
    code: typeof error.code === "number" ? error.code : undefined,
    message: typeof error.message === "string" ? error.message : undefined,
    status: typeof error.status === "string" ? error.status : undefined,
    retryDelayMs: retryDelayOf(error.details),
  };
}

/** The error object of an error response's body, when it holds one. */
export function readErrorBody(body: string): GeminiError | undefined {
  try {
    return readError(JSON.parse(body));
  } catch {
    return undefined;
  }
}

/** `RetryInfo.retryDelay` ("34.4s", or a `{seconds, nanos}` object) in milliseconds. */
function retryDelayOf(details: unknown): number | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (!isObject(detail)) continue;
    const type = detail["@type"];
    if (typeof type !== "string" || !type.endsWith("google.rpc.RetryInfo")) continue;
    const delay = detail.retryDelay;
    let seconds: number | undefined;
    if (typeof delay === "string" && delay.endsWith("s")) seconds = Number(delay.slice(0, -1));
    else if (isObject(delay)) {
      seconds = Number(delay.seconds ?? 0) + Number(delay.nanos ?? 0) / 1e9;
    }
    if (seconds !== undefined && Number.isFinite(seconds) && seconds >= 0) {
      return Math.round(seconds * 1000);
    }
  }
  return undefined;
}

/**
 * `<status> <STATUS>: <message>`; an in-stream error leaves the number out (it is in the event's
 * `status`), and a body that is not Google's error object is shown clipped.
 */
export function describeError(
  status: number | undefined,
  error: GeminiError | undefined,
  body: string,
): string {
  if (error === undefined || (error.message === undefined && error.status === undefined)) {
    return bodyLine(status, oneLine(body));
  }
  const code = status ?? error.code;
  return errorLine({
    status,
    label: error.status ?? (code === undefined ? undefined : STATUS_NAMES[code]),
    message: oneLine(error.message ?? "no message"),
  });
}

/** Whether a failure with this HTTP status (or in-stream error code) may pass on retry. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
