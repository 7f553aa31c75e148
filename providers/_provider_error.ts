/**
 * The error a model API request throws when it fails outside a stream (listing models). Private
 * to the package; re-exported by `client.ts` and `mod.ts`.
 *
 * @module
 */

import { AmberError } from "@amber/core";

/**
 * Where a {@linkcode ProviderError} came from.
 *
 * @example
 * ```ts
 * import type { ProviderErrorDetails } from "@amber/providers/client";
 * import assert from "node:assert/strict";
 * const details: ProviderErrorDetails = { url: "http://127.0.0.1:1/v1/models", retryable: false, status: 401 };
 * assert.equal(details.status, 401);
 * ```
 */
export interface ProviderErrorDetails {
  /** The URL requested (never with the API key in it). */
  readonly url: string;
  /** Whether trying again later may succeed. */
  readonly retryable: boolean;
  /** The HTTP status, when there was a response. */
  readonly status?: number;
}

/**
 * A request to a model API failed. The message names the URL and never holds the API key.
 *
 * @example
 * ```ts
 * import { ProviderError } from "@amber/providers";
 * import assert from "node:assert/strict";
 * const error = new ProviderError("listing models at http://127.0.0.1:1/v1/models failed: 503", {
 *   url: "http://127.0.0.1:1/v1/models",
 *   retryable: true,
 *   status: 503,
 * });
 * assert.equal(error.name, "ProviderError");
 * assert.equal(error.status, 503);
 * assert.equal(error.retryable, true);
 * ```
 */
export class ProviderError extends AmberError {
  /** The HTTP status, when there was a response. */
  readonly status?: number;
  /** Whether trying again later may succeed. */
  readonly retryable: boolean;
  /** The URL requested. */
  readonly url: string;
  /** Creates the error; `options.cause` keeps the underlying failure. */
  constructor(message: string, details: ProviderErrorDetails, options?: ErrorOptions) {
    super(message, options);
    this.name = "ProviderError";
    this.url = details.url;
    this.retryable = details.retryable;
    if (details.status !== undefined) this.status = details.status;
  }
}
