/**
 * A turn's view of a rejected key: a provider's 401, in the `error` event, the `end` event and
 * the run's result, names the variable the key came from (see `rejected_key.ts`), so `amber run`
 * and the interactive session say what to fix.
 *
 * @module
 */

import type { EndCause, RunEvent, RunResult } from "@amber/core/kernel";
import { type KeySource, keySourceOf, rejectedKeyText } from "../rejected_key.ts";
import type { ResolvedProvider } from "../provider_settings.ts";

/**
 * Rewrites a turn's 401s for the provider a session resolved.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KeyRejections } from "./key_rejections.ts";
 * const rejections = new KeyRejections({ keyEnv: "ANTHROPIC_API_KEY", preset: { name: "anthropic" } });
 * const event = rejections.event({
 *   type: "error",
 *   message: "401 authentication_error: invalid x-api-key",
 *   retryable: false,
 *   status: 401,
 * });
 * assert.equal(event.type === "error" && event.message.startsWith(
 *   "ANTHROPIC_API_KEY is rejected by anthropic (401): set it to a valid key",
 * ), true);
 * const other = { type: "stepStart", step: 0 } as const;
 * assert.equal(rejections.event(other), other);
 * ```
 */
export class KeyRejections {
  readonly #source: KeySource;

  /** Rejections of the key `resolved` names (its variable and its preset). */
  constructor(
    resolved: Pick<ResolvedProvider, "keyEnv"> & { readonly preset: { readonly name: string } },
  ) {
    this.#source = keySourceOf(resolved);
  }

  /** `event` with a 401's message naming the key's variable; any other event as it is. */
  event(event: RunEvent): RunEvent {
    if (event.type === "error") {
      const text = rejectedKeyText(event.status, event.message, this.#source);
      return text === undefined ? event : { ...event, message: text };
    }
    if (event.type === "end") {
      const cause = this.#cause(event.cause);
      return cause === event.cause ? event : { ...event, cause };
    }
    return event;
  }

  /** `result` with a 401's end cause naming the key's variable. */
  result(result: RunResult): RunResult {
    const cause = this.#cause(result.cause);
    return cause === result.cause ? result : { ...result, cause };
  }

  #cause(cause: EndCause): EndCause {
    if (cause.kind !== "error" || cause.failure.kind !== "provider") return cause;
    const text = rejectedKeyText(cause.failure.status, cause.failure.message, this.#source);
    return text === undefined ? cause : { ...cause, failure: { ...cause.failure, message: text } };
  }
}
