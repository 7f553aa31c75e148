/**
 * Which base URLs a worker sends its provider keys to. A job's `baseUrl` comes from whoever can
 * write to the queue, and a session sends the worker's key (and the workspace's content) to it,
 * so a worker takes a job's `baseUrl` only when it is the provider's own (the preset's, or
 * `baseUrl` in the worker's `config.yaml` for that provider) or under an entry of
 * `allowBaseUrls` in the worker's `batch.yaml`. Anything else fails the job before a request
 * leaves, with a {@linkcode BaseUrlNotAllowedError} naming the URL and how to allow it.
 *
 * Loopback and private addresses get no exception: on a shared machine any user can listen on a
 * loopback port, so a local server (a fake provider, a model served on the machine) is listed
 * with its port like any other.
 *
 * An entry allows the URLs with its scheme, host and port whose path is the entry's or below it
 * (`http://10.0.0.9:8000` allows `http://10.0.0.9:8000/v1`; `https://gw.example/openai` does not
 * allow `https://gw.example/openai-old`).
 *
 * @module
 */

/** A job's base URL that the worker will not send its key to. */
export class BaseUrlNotAllowedError extends Error {
  /** The job's base URL. */
  readonly url: string;

  /**
   * An error for the job's `url`, used with `provider`, whose own base URL is `ownUrl`; the
   * message says to list it in `settingsFile`.
   */
  constructor(url: string, provider: string, ownUrl: string, settingsFile: string) {
    super(
      `baseUrl '${url}' is not allowed on this worker (provider '${provider}' is at ` +
        `${ownUrl}), so nothing was sent there; to let jobs send this worker's key to it, ` +
        `add '${originAndPath(url) ?? url}' to allowBaseUrls in ${settingsFile}`,
    );
    this.name = "BaseUrlNotAllowedError";
    this.url = url;
  }
}

/** An `allowBaseUrls` entry that cannot be used: not an http(s) URL, or one with more. */
export class BaseUrlEntryError extends Error {
  /** The entry. */
  readonly entry: string;

  /** An error about `entry`, saying `problem`. */
  constructor(entry: string, problem: string) {
    super(`'${entry}' ${problem}`);
    this.name = "BaseUrlEntryError";
    this.entry = entry;
  }
}

// The parts of a URL that decide where a request goes: scheme, host, port, and path.
interface Target {
  readonly origin: string;
  readonly path: string;
}

function target(url: string): Target | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined;
  return { origin: parsed.origin, path: parsed.pathname.replace(/\/+$/, "") };
}

function originAndPath(url: string): string | undefined {
  const parts = target(url);
  return parts === undefined ? undefined : parts.origin + parts.path;
}

/**
 * Checks an `allowBaseUrls` entry and returns it as it is matched (no trailing slash); throws a
 * {@linkcode BaseUrlEntryError} for one that is not an http(s) URL or that has credentials, a
 * query or a fragment (none of which says where requests go).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BaseUrlEntryError, checkAllowEntry } from "./base_url_policy.ts";
 * assert.equal(checkAllowEntry("http://127.0.0.1:8080/"), "http://127.0.0.1:8080");
 * assert.throws(() => checkAllowEntry("127.0.0.1:8080"), BaseUrlEntryError);
 * ```
 */
export function checkAllowEntry(entry: string): string {
  let parsed: URL;
  try {
    parsed = new URL(entry);
  } catch {
    throw new BaseUrlEntryError(entry, "is not a URL (write it as http://HOST:PORT/PATH)");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new BaseUrlEntryError(entry, "is not an http(s) URL");
  }
  if (parsed.username !== "" || parsed.password !== "" || parsed.search !== "" || parsed.hash) {
    throw new BaseUrlEntryError(entry, "has credentials, a query or a fragment; give the URL only");
  }
  return parsed.origin + parsed.pathname.replace(/\/+$/, "");
}

/**
 * Whether `url` is one of `allowed` or below one of them: the same scheme, host and port, and a
 * path equal to the entry's or under it. A URL that does not parse is allowed by nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isBaseUrlAllowed } from "./base_url_policy.ts";
 * const allowed = ["http://127.0.0.1:8080", "https://gw.example/openai"];
 * assert.equal(isBaseUrlAllowed("http://127.0.0.1:8080/v1", allowed), true);
 * assert.equal(isBaseUrlAllowed("http://127.0.0.1:8081/v1", allowed), false);
 * assert.equal(isBaseUrlAllowed("https://gw.example/openai/v1", allowed), true);
 * assert.equal(isBaseUrlAllowed("https://gw.example/openai-old", allowed), false);
 * assert.equal(isBaseUrlAllowed("http://gw.example/openai", allowed), false);
 * ```
 */
export function isBaseUrlAllowed(url: string, allowed: readonly string[]): boolean {
  const wanted = target(url);
  if (wanted === undefined) return false;
  return allowed.some((entry) => {
    const granted = target(entry);
    if (granted === undefined || granted.origin !== wanted.origin) return false;
    return granted.path === "" || wanted.path === granted.path ||
      wanted.path.startsWith(`${granted.path}/`);
  });
}

/** What {@linkcode checkJobBaseUrl} weighs. */
export interface BaseUrlCheck {
  /** The job's `baseUrl`. */
  readonly url: string;
  /** The provider the job uses. */
  readonly provider: string;
  /** The provider's own base URL on this worker (its `config.yaml`'s, else the preset's). */
  readonly ownUrl: string;
  /** The worker's `allowBaseUrls`. */
  readonly allowed: readonly string[];
  /** The worker's `batch.yaml`, named in the error. */
  readonly settingsFile: string;
}

/**
 * Throws a {@linkcode BaseUrlNotAllowedError} unless the job's base URL is the provider's own
 * (or below it) or allowed by the worker's `allowBaseUrls`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BaseUrlNotAllowedError, checkJobBaseUrl } from "./base_url_policy.ts";
 * const check = {
 *   provider: "openai",
 *   ownUrl: "https://api.openai.com/v1",
 *   allowed: ["http://10.0.0.9:8000"],
 *   settingsFile: "/etc/amber/batch.yaml",
 * };
 * checkJobBaseUrl({ ...check, url: "https://api.openai.com/v1" });
 * checkJobBaseUrl({ ...check, url: "http://10.0.0.9:8000/v1" });
 * assert.throws(
 *   () => checkJobBaseUrl({ ...check, url: "https://collector.example/v1" }),
 *   BaseUrlNotAllowedError,
 * );
 * ```
 */
export function checkJobBaseUrl(check: BaseUrlCheck): void {
  if (isBaseUrlAllowed(check.url, [check.ownUrl, ...check.allowed])) return;
  throw new BaseUrlNotAllowedError(check.url, check.provider, check.ownUrl, check.settingsFile);
}
