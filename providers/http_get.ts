/**
 * The core-owned GET with a bearer token: what wallet and allowance fetches use to read an
 * account endpoint, so that no plugin opens its own HTTP client.
 *
 * @module
 */

import { TimedFetch } from "./_timed_fetch.ts";

/**
 * Options of {@linkcode getWithBearer} and {@linkcode getJsonWithBearer}.
 *
 * @example
 * ```ts
 * import { type GetOptions, getWithBearer } from "@amber/providers";
 * import assert from "node:assert/strict";
 * const controller = new AbortController();
 * const options: GetOptions = { timeoutMs: 5_000, signal: controller.signal };
 * controller.abort(); // an aborted request reads as undefined, before anything is sent
 * assert.equal(await getWithBearer("http://127.0.0.1:1/v1/key", "sk-…", options), undefined);
 * ```
 */
export interface GetOptions {
  /** Gives up after this long, body included; 20 s by default. */
  readonly timeoutMs?: number;
  /** Cancels the request: an aborted request reads as undefined. */
  readonly signal?: AbortSignal;
  /** Extra request headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The timeout of a GET when none is given. */
const DEFAULT_TIMEOUT_MS = 20_000;

/**
 * GETs `url` and returns the body of a 2xx response, or undefined for anything else: a non-2xx
 * status, a bad URL, a network error, a timeout, an abort. It never throws and logs nothing, so
 * the token cannot leak through it. `Authorization: Bearer <token>` is sent only when `token` is
 * non-empty: an empty credential header is never sent (nor an empty `Authorization` passed in
 * `headers`). Redirects are followed; the credential is dropped on a redirect to another origin.
 *
 * @example
 * ```ts
 * import { getWithBearer } from "@amber/providers";
 * import assert from "node:assert/strict";
 * const body = await getWithBearer("not a url", "sk-secret");
 * assert.equal(body, undefined);
 * ```
 */
export async function getWithBearer(
  url: string,
  token: string | undefined,
  options: GetOptions = {},
): Promise<string | undefined> {
  if (typeof url !== "string" || !URL.canParse(url)) return undefined;
  const target = new URL(url);
  if (target.protocol !== "http:" && target.protocol !== "https:") return undefined;
  if (options.signal?.aborted) return undefined;

  const timeoutMs = options.timeoutMs !== undefined && options.timeoutMs > 0
    ? options.timeoutMs
    : DEFAULT_TIMEOUT_MS;
  using request = new TimedFetch(target, { timeoutMs, signal: options.signal });
  try {
    const headers = new Headers(options.headers);
    const credential = typeof token === "string" ? token.trim() : "";
    if (credential !== "") headers.set("authorization", `Bearer ${credential}`);
    else if (isEmptyCredential(headers.get("authorization"))) headers.delete("authorization");
    const response = await request.fetch({ method: "GET", headers, redirect: "follow" });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      return undefined;
    }
    return await response.text();
  } catch {
    // Every failure (network, timeout, abort, a header value fetch rejects) reads as "no body";
    // the error is dropped on purpose, since its text could carry the request's headers.
    return undefined;
  }
}

function isEmptyCredential(value: string | null): boolean {
  return value !== null && /^(bearer)?\s*$/i.test(value.trim());
}

/**
 * Like {@linkcode getWithBearer}, and parses the body as JSON: undefined when the request failed
 * or the body is not JSON. Asks for `application/json` unless `headers` says otherwise. The value
 * is unchecked: validate its shape before using it.
 *
 * @example
 * ```ts
 * import { getJsonWithBearer } from "@amber/providers";
 * import assert from "node:assert/strict";
 * const data = await getJsonWithBearer("http://127.0.0.1:1/v1/key", "");
 * assert.equal(data, undefined);
 * ```
 */
export async function getJsonWithBearer(
  url: string,
  token: string | undefined,
  options: GetOptions = {},
): Promise<unknown> {
  const headers = new Headers(options.headers);
  if (!headers.has("accept")) headers.set("accept", "application/json");
  const body = await getWithBearer(url, token, {
    ...options,
    headers: Object.fromEntries(headers),
  });
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
