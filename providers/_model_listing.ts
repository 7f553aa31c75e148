/**
 * The models request of {@linkcode ProviderClient}: built by the dialect, sent under one
 * deadline that covers its body too (a listing is one small answer, not a stream), and answered
 * with success; every way it fails is thrown as a {@linkcode ProviderError} naming the URL.
 * Reading the listing is the caller's. Private to the package.
 *
 * @module
 */

import type { Dialect, HttpRequestSpec, ProviderSettings } from "@amber/core";
import { credentialSafeHeaders, type Redactor } from "./_credentials.ts";
import { errorText, networkReason } from "./_failure_text.ts";
import { errorMessage, isRetryable } from "./_http_failure.ts";
import { ProviderError } from "./_provider_error.ts";
import { durationText, TimedFetch } from "./_timed_fetch.ts";

/** What {@linkcode fetchListing} needs from the client. */
export interface ListingContext {
  /** The client's dialect, or the promise of it while it loads. */
  readonly dialect: Dialect | Promise<Dialect>;
  /** The API's settings, given to the dialect's `modelsRequest`. */
  readonly settings: ProviderSettings;
  /** Scrubs the API key from messages and causes. */
  readonly redactor: Redactor;
  /** How long the request, its body included, may take. */
  readonly timeoutMs: number;
  /** The `fetch` to call; the global one by default. */
  readonly fetch: typeof globalThis.fetch | undefined;
}

/** A successful models answer, not yet read. */
export interface Listing {
  /** The loaded dialect. */
  readonly dialect: Dialect;
  /** The URL requested, already redacted. */
  readonly url: string;
  /** The (2xx) status of the answer. */
  readonly status: number;
  /** The body of the answer. */
  readonly text: string;
}

/**
 * Sends the models request and returns its successful answer. The plain listing needs the
 * dialect's `parseModels` (`needsParser`), checked before anything is sent; the facts are read
 * the same way for every protocol.
 *
 * @throws {ProviderError} when the dialect cannot be loaded or cannot list models, the request
 * cannot be built or sent, or the API answers with an error.
 */
export async function fetchListing(
  context: ListingContext,
  signal: AbortSignal | undefined,
  needsParser: boolean,
): Promise<Listing> {
  const { settings, redactor } = context;
  let dialect: Dialect;
  try {
    dialect = context.dialect instanceof Promise ? await context.dialect : context.dialect;
  } catch (error) {
    throw new ProviderError(
      redactor.redact(`the dialect could not be loaded: ${errorText(error)}`),
      { url: redactor.redact(settings.baseUrl), retryable: false },
      { cause: redactor.safeCause(error) },
    );
  }
  if (
    dialect.modelsRequest === undefined || (needsParser && dialect.parseModels === undefined)
  ) {
    throw new ProviderError(`the ${dialect.flavor} protocol cannot list models`, {
      url: redactor.redact(settings.baseUrl),
      retryable: false,
    });
  }
  let spec: HttpRequestSpec;
  try {
    const built = dialect.modelsRequest(settings);
    spec = built instanceof Promise ? await built : built;
  } catch (error) {
    throw new ProviderError(
      redactor.redact(
        `the ${dialect.flavor} models request could not be built: ${errorText(error)}`,
      ),
      { url: redactor.redact(settings.baseUrl), retryable: false },
      { cause: redactor.safeCause(error) },
    );
  }
  const url = redactor.redact(spec.url);
  let status: number;
  let text: string;
  {
    // The deadline covers the body too: a listing is one small answer, not a stream.
    using call = new TimedFetch(spec.url, {
      timeoutMs: context.timeoutMs,
      signal,
      fetch: context.fetch,
    });
    try {
      const response = await call.fetch({
        method: spec.method,
        headers: credentialSafeHeaders(spec.headers),
        ...(spec.body === undefined ? {} : { body: spec.body }),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      const message = signal?.aborted
        ? `listing models at ${url} was cancelled`
        : call.timedOut
        ? `listing models at ${url} timed out after ${durationText(context.timeoutMs)}`
        : `cannot reach ${url}: ${networkReason(error)}`;
      throw new ProviderError(
        redactor.redact(message),
        { url, retryable: !signal?.aborted },
        { cause: redactor.safeCause(error) },
      );
    }
  }
  if (status < 200 || status > 299) {
    const message = await errorMessage(dialect, status, text);
    throw new ProviderError(
      redactor.redact(`listing models at ${url} failed: ${message}`),
      { url, status, retryable: await isRetryable(dialect, status, text) },
    );
  }
  return { dialect, url, status, text };
}

/** The error for a successful answer the listing could not be read from. */
export function unreadableListing(
  url: string,
  status: number,
  error: unknown,
  redactor: Redactor,
): ProviderError {
  return new ProviderError(
    redactor.redact(`the models listing from ${url} could not be read: ${errorText(error)}`),
    { url, status, retryable: false },
    { cause: redactor.safeCause(error) },
  );
}
