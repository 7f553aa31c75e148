/**
 * The mention of an MCP resource in a prompt, `@server:uri`, apart from the resource tools so that
 * a front end completes mentions without loading the SDK.
 *
 * @module
 */

/**
 * A mention of a server's resource in a prompt: `@<server>:<uri>`, after the start of the text or
 * a blank, the URI running to the next blank but not taking a final `.`, `,`, `)` and the like
 * (so "see @docs:guide://intro." names `guide://intro`). Groups: `server` and `uri`. It is global:
 * use it with `String.prototype.matchAll` or `replace`, not `test` or `exec`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MCP_MENTION } from "./mention.ts";
 * const text = "Compare @fs:file:///a.md with @docs:guide://intro. Mail me@host:1";
 * const found = [...text.matchAll(MCP_MENTION)].map((m) => [m.groups?.server, m.groups?.uri]);
 * assert.deepEqual(found, [["fs", "file:///a.md"], ["docs", "guide://intro"]]);
 * ```
 */
export const MCP_MENTION: RegExp =
  /(?<=^|[\s(\[{"'])@(?<server>[A-Za-z0-9_-]{1,48}):(?<uri>\S*[^\s.,;:!?)\]}'"`>])/g;
