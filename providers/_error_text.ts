/**
 * The one shape every dialect's error messages share, `<status> <label>: <message><suffix>` (or
 * the clipped body when it held no error object), and the one-line text they are made of. Each
 * dialect only reads its own error object into the parts. Private to the package.
 *
 * @module
 */

/** `text` with every run of whitespace as one space, at most `limit` characters (then `…`). */
export function oneLine(text: string, limit = 500): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > limit ? `${flat.slice(0, limit)}…` : flat;
}

/** What a dialect read from a provider's error object. */
export interface ErrorParts {
  /** The HTTP status; absent for an error read from inside a stream. */
  readonly status?: number;
  /** The provider's code, type or status name; left out when absent or empty. */
  readonly label?: string;
  /** The provider's message, already on one line. */
  readonly message: string;
  /** What follows the message, e.g. ` (request <id>)`. */
  readonly suffix?: string;
}

/** `<status> <label>: <message><suffix>`, leaving out what is absent. */
export function errorLine(parts: ErrorParts): string {
  const status = parts.status === undefined ? "" : `${parts.status}`;
  const label = parts.label ?? "";
  const head = status.length > 0 && label.length > 0 ? `${status} ${label}` : status + label;
  return `${head.length > 0 ? `${head}: ` : ""}${parts.message}${parts.suffix ?? ""}`;
}

/**
 * `<status>: <body>` for a body that held no error object (`empty response body` for none), the
 * body alone without a status. `body` is shown as given: the dialect clips it.
 */
export function bodyLine(status: number | undefined, body: string): string {
  const what = body.length > 0 ? body : "empty response body";
  return status === undefined ? what : `${status}: ${what}`;
}
