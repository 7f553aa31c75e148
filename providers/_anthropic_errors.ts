/**
 * Anthropic's error object (`{type: "error", error: {type, message}, request_id}`), read from an
 * error response or an in-stream `error` event, and the one-line message made of it. Private to
 * the package.
 *
 * @module
 */

import { bodyLine, errorLine, oneLine } from "./_error_text.ts";

/** Error types by status, for the messages of in-stream errors that name only a type. */
export const STATUS_OF_ERROR_TYPE: { readonly [type: string]: number } = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** What Anthropic's error object says. */
export interface ErrorBody {
  /** The error type (`overloaded_error`, ...). */
  readonly type?: string;
  /** Anthropic's own words. */
  readonly message?: string;
  /** The request id to quote to Anthropic's support. */
  readonly requestId?: string;
}

/** The error object of an error response's body, when it holds one. */
export function readErrorBody(body: string): ErrorBody | undefined {
  try {
    const parsed = JSON.parse(body) as {
      error?: { type?: unknown; message?: unknown };
      request_id?: unknown;
    };
    const error = parsed?.error;
    if (error === null || typeof error !== "object") return undefined;
    return {
      type: typeof error.type === "string" ? error.type : undefined,
      message: typeof error.message === "string" ? error.message : undefined,
      requestId: typeof parsed.request_id === "string" ? parsed.request_id : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * `<status> <type>: <message> (request <id>)`; without a status for an in-stream error, and with
 * the body clipped when it is not Anthropic's object.
 */
export function describeError(
  status: number | undefined,
  error: ErrorBody | undefined,
  body: string,
): string {
  if (error === undefined || (error.type === undefined && error.message === undefined)) {
    return bodyLine(status, oneLine(body));
  }
  return errorLine({
    status,
    label: error.type,
    message: oneLine(error.message ?? "no message"),
    suffix: error.requestId === undefined ? undefined : ` (request ${error.requestId})`,
  });
}

/**
 * Whether an error says the request is too long for the model's context window: "prompt is too
 * long: 210000 tokens > 200000 maximum", or "input length and `max_tokens` exceed context
 * limit". `body` is read when the error object says nothing.
 */
export function isOverflowError(error: ErrorBody | undefined, body: string): boolean {
  const message = (error?.message ?? body).toLowerCase();
  if (message.includes("prompt is too long")) return true;
  if (error?.type !== undefined && error.type !== "invalid_request_error") return false;
  return message.includes("context window") || message.includes("context length") ||
    message.includes("too many tokens") ||
    (message.includes("context") && message.includes("exceed"));
}

/** Whether an in-stream error type is worth retrying. */
export function retryableType(type: string | undefined): boolean {
  return type === "overloaded_error" || type === "api_error" || type === "rate_limit_error" ||
    type === "timeout_error";
}
