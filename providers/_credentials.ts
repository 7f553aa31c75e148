/**
 * Keeping an API key out of what the client sends needlessly and out of all it reports: the
 * headers with empty credentials dropped, and every text scrubbed of the key in the forms a
 * server could echo it back in. Private to the package.
 *
 * @module
 */

import { errorText } from "./_failure_text.ts";

const REDACTED = "[redacted]";

/** Scrubs one API key from texts and errors. */
export class Redactor {
  /** The forms of the key to scrub, longest first. */
  readonly #secrets: readonly string[];

  /** A redactor for `key`; one for no key (or an empty one) changes nothing. */
  constructor(key: string | undefined) {
    const raw = key ?? "";
    const secrets = new Set<string>();
    if (raw !== "") secrets.add(raw);
    if (raw.trim() !== "") {
      secrets.add(raw.trim());
      // A key URL-encoded into a query string reads differently in a URL.
      secrets.add(encodeURIComponent(raw.trim()));
    }
    this.#secrets = [...secrets].sort((a, b) => b.length - a.length);
  }

  /** Whether there is a key to scrub at all (so callers can skip copying events). */
  get active(): boolean {
    return this.#secrets.length > 0;
  }

  /** `text` with every form of the key replaced by `[redacted]`. */
  redact(text: string): string {
    for (const secret of this.#secrets) {
      if (text.includes(secret)) text = text.split(secret).join(REDACTED);
    }
    return text;
  }

  /** The cause to attach to a thrown error: the original unless its text holds the key. */
  safeCause(error: unknown): unknown {
    const text = error instanceof Error ? `${error.message} ${String(error.cause)}` : String(error);
    return this.#secrets.some((s) => text.includes(s))
      ? new Error(this.redact(errorText(error)))
      : error;
  }
}

/**
 * The headers to send: every empty value dropped (an empty key must read as "no key", never as
 * an empty credential), and a bearer credential without a token dropped too.
 */
export function credentialSafeHeaders(spec: { readonly [name: string]: string }): Headers {
  const headers = new Headers();
  for (const name in spec) {
    const value = spec[name];
    if (typeof value !== "string") continue;
    const trimmed = value.trim();
    if (trimmed === "") continue;
    if (/^bearer$/i.test(trimmed)) continue;
    headers.set(name, value);
  }
  return headers;
}
