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
 * body alone without a status. `body` is shown as given (the dialect clips it), except an HTML
 * page (a proxy's or a load balancer's error page), which is reduced to its `<title>`.
 */
export function bodyLine(status: number | undefined, body: string): string {
  const what = body.length > 0 ? htmlTitle(body) ?? body : "empty response body";
  return status === undefined ? what : `${status}: ${what}`;
}

const HTML_START = /^\s*(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<title[\s>])/i;
const TITLE = /<title[^>]*>([\s\S]*?)(?:<\/title>|$)/i;
const HEADING = /<h[1-3][^>]*>([\s\S]*?)(?:<\/h[1-3]>|$)/i;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" };

/**
 * What an HTML page says of itself, `<title> (an HTML page)`: its title, else its first
 * heading, else the start of its text; `undefined` for a body that is not HTML. Its markup,
 * styles and scripts say nothing a user can act on, and fill the screen.
 */
export function htmlTitle(body: string): string | undefined {
  if (!HTML_START.test(body)) return undefined;
  const said = TITLE.exec(body)?.[1] ?? HEADING.exec(body)?.[1] ?? textOf(body);
  const title = oneLine(textOf(said), 120);
  return title.length > 0 ? `${title} (an HTML page)` : "an HTML page";
}

// The text of some HTML: no styles or scripts, no tags, the common entities read.
function textOf(html: string): string {
  return html.replace(/<(style|script)\b[\s\S]*?(?:<\/\1>|$)/gi, " ").replace(/<[^>]*>?/g, " ")
    .replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ENTITIES[name]);
}
