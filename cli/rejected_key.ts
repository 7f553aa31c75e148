/**
 * What a rejected key reads as: a 401 from the provider says which variable to fix, rather than
 * the provider's own words (`invalid x-api-key`), which do not say where amber took the key from.
 *
 * @module
 */

import { AmberError } from "@amber/core";
import { ProviderError } from "@amber/providers/client";

/** Where a session's key comes from: the variable and the provider it is sent to. */
export interface KeySource {
  /** The environment variable the key is read from; unknown for a preset that needs none. */
  readonly keyEnv?: string;
  /** The provider preset's name. */
  readonly provider: string;
}

/**
 * The key source of a resolved provider: its key variable (when it has one) and its preset.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keySourceOf } from "./rejected_key.ts";
 * assert.deepEqual(keySourceOf({ keyEnv: "GROQ_API_KEY", preset: { name: "groq" } }), {
 *   keyEnv: "GROQ_API_KEY",
 *   provider: "groq",
 * });
 * assert.deepEqual(keySourceOf({ preset: { name: "ollama" } }), { provider: "ollama" });
 * ```
 */
export function keySourceOf(
  resolved: { readonly keyEnv?: string; readonly preset: { readonly name: string } },
): KeySource {
  return resolved.keyEnv === undefined
    ? { provider: resolved.preset.name }
    : { keyEnv: resolved.keyEnv, provider: resolved.preset.name };
}

/**
 * `<VAR> is rejected by <provider> (401): set it to a valid key`, followed by the provider's own
 * words in parentheses, for an HTTP 401; `undefined` for any other status, or when the key's
 * variable is unknown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rejectedKeyText } from "./rejected_key.ts";
 * const source = { keyEnv: "ANTHROPIC_API_KEY", provider: "anthropic" };
 * assert.equal(
 *   rejectedKeyText(401, "401 authentication_error: invalid x-api-key", source),
 *   "ANTHROPIC_API_KEY is rejected by anthropic (401): set it to a valid key " +
 *     "(401 authentication_error: invalid x-api-key)",
 * );
 * assert.equal(rejectedKeyText(429, "slow down", source), undefined);
 * assert.equal(rejectedKeyText(401, "no", { provider: "ollama" }), undefined);
 * ```
 */
export function rejectedKeyText(
  status: number | undefined,
  said: string,
  source: KeySource,
): string | undefined {
  if (status !== 401 || source.keyEnv === undefined) return undefined;
  const why = said.trim() === "" ? "" : ` (${said.trim()})`;
  return `${source.keyEnv} is rejected by ${source.provider} (401): set it to a valid key${why}`;
}

/**
 * A key the provider refused: the message names the variable to fix.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RejectedKeyError } from "./rejected_key.ts";
 * const error = new RejectedKeyError("OPENAI_API_KEY is rejected by openai (401): set it to a valid key");
 * assert.equal(error.name, "RejectedKeyError");
 * ```
 */
export class RejectedKeyError extends AmberError {
  /** Creates the error; `options.cause` keeps the provider's error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RejectedKeyError";
  }
}

/**
 * `error` as a {@linkcode RejectedKeyError} when it is a provider's 401 (see
 * {@linkcode rejectedKeyText}), else `error` itself.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProviderError } from "@amber/providers/client";
 * import { explainRejectedKey } from "./rejected_key.ts";
 * const refused = new ProviderError("listing models at http://x/v1/models failed: 401: bad key", {
 *   url: "http://x/v1/models",
 *   retryable: false,
 *   status: 401,
 * });
 * const explained = explainRejectedKey(refused, { keyEnv: "OPENAI_API_KEY", provider: "openai" });
 * assert.match((explained as Error).message, /^OPENAI_API_KEY is rejected by openai \(401\)/);
 * assert.equal((explained as Error).cause, refused);
 * const other = new Error("boom");
 * assert.equal(explainRejectedKey(other, { keyEnv: "OPENAI_API_KEY", provider: "openai" }), other);
 * ```
 */
export function explainRejectedKey(error: unknown, source: KeySource): unknown {
  if (!(error instanceof ProviderError)) return error;
  const text = rejectedKeyText(error.status, error.message, source);
  return text === undefined ? error : new RejectedKeyError(text, { cause: error });
}
