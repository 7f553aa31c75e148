/**
 * Text for a terminal that came from a plugin (a reason it failed with, a diagnostic quoting what
 * it threw or logged, a row of a list): its control characters are removed, so no escape
 * sequence of its sets the title, writes the clipboard or clears the screen. Newlines and tabs
 * stay.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainText } from "./plain_text.ts";
 * assert.equal(plainText("boom\x1b]0;PWNED\x07\tok\n"), "boom]0;PWNED\tok\n");
 * ```
 *
 * @module
 */

// deno-lint-ignore no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` without control characters other than newline and tab. */
export function plainText(text: string): string {
  return text.replace(CONTROLS, "");
}
