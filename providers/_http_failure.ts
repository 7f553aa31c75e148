/**
 * What a failed HTTP response means to {@linkcode ProviderClient}, read through the dialect: its
 * message, whether another attempt may succeed (`x-should-retry` first), how long the server asks
 * to wait, and whether the request overflowed the model's context window. A dialect that throws
 * or rejects while reading gets a safe answer instead. Private to the package.
 *
 * @module
 */

import type { Dialect } from "@amber/core";
import type { Redactor } from "./_credentials.ts";
import { type Failure, headerDelayMs } from "./_retry.ts";

/**
 * The failure a non-2xx `response` with body `body` reports, its message scrubbed by `redactor`.
 * An error path: a dialect in a plugin process answers these later, so they are awaited, one
 * after the other.
 */
export async function httpFailure(
  dialect: Dialect,
  response: Response,
  body: string,
  redactor: Redactor,
): Promise<Failure> {
  const status = response.status;
  const shouldRetry = response.headers.get("x-should-retry");
  const retryable = shouldRetry === "true"
    ? true
    : shouldRetry === "false"
    ? false
    : await isRetryable(dialect, status, body);
  let serverDelayMs = headerDelayMs(response.headers);
  if (serverDelayMs === undefined) {
    try {
      const fromBody = await dialect.retryDelayMs?.(status, body);
      if (typeof fromBody === "number" && Number.isFinite(fromBody) && fromBody >= 0) {
        serverDelayMs = fromBody;
      }
    } catch {
      // An unreadable retry hint is no hint.
    }
  }
  return {
    message: redactor.redact(await errorMessage(dialect, status, body)),
    retryable,
    status,
    ...(serverDelayMs === undefined ? {} : { serverDelayMs }),
    ...(await isContextOverflow(dialect, status, body) ? { contextOverflow: true } : {}),
  };
}

/** Whether the dialect calls the failure retryable; a 429 or 5xx when it cannot tell. */
export async function isRetryable(
  dialect: Dialect,
  status: number,
  body: string,
): Promise<boolean> {
  try {
    return await dialect.isRetryable(status, body);
  } catch {
    return status === 429 || status >= 500;
  }
}

/** The dialect's message for the failure; `HTTP <status>` when it cannot read one. */
export async function errorMessage(
  dialect: Dialect,
  status: number,
  body: string,
): Promise<string> {
  try {
    return await dialect.errorMessage(status, body);
  } catch {
    return `HTTP ${status}`;
  }
}

// The kernel compacts and retries once on an overflow; a dialect that cannot tell says no.
async function isContextOverflow(dialect: Dialect, status: number, body: string): Promise<boolean> {
  try {
    return await dialect.isContextOverflow(status, body) === true;
  } catch {
    return false;
  }
}
