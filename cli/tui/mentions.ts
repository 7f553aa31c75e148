/**
 * `@` completion of MCP resources in the input line. A word being typed at the end of the line
 * that starts with `@` names a resource as `@server:uri` (the attachment `@amber/mcp` reads
 * when the prompt is sent): `@ev` offers the servers that have resources, `@everything:` that
 * server's resources by uri and name, narrowed by what follows the colon. Tab inserts the
 * selection in place of the word.
 *
 * @module
 */

/** A resource a mention can name. */
export interface MentionResource {
  /** The server's name as configured. */
  readonly server: string;
  /** The resource's uri. */
  readonly uri: string;
  /** Its name. */
  readonly name: string;
}

/** The `@` word being typed at the end of a line. */
export interface MentionQuery {
  /** Where the word starts in the line (the `@`). */
  readonly start: number;
  /** The server part: what follows `@`, up to the colon. */
  readonly server: string;
  /** What follows the colon; undefined while the server is still being typed. */
  readonly resource?: string;
}

/** One offer of the drawer: what Tab puts in place of the word, and what it shows. */
export interface MentionEntry {
  /** The word it completes to: `@server:` or `@server:uri `. */
  readonly insert: string;
  /** The text shown for it. */
  readonly line: string;
  /** Its description: the resource's name, or the server's resource count. */
  readonly help: string;
}

/**
 * The `@` word at the end of `input`, when there is one (it starts the line or follows a space,
 * and the line is not a command).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mentionQuery } from "./mentions.ts";
 * assert.deepEqual(mentionQuery("read @docs:file:///a"), { start: 5, server: "docs", resource: "file:///a" });
 * assert.deepEqual(mentionQuery("@do"), { start: 0, server: "do" });
 * assert.equal(mentionQuery("mail me@example.com"), undefined);
 * assert.equal(mentionQuery("@docs:x then more"), undefined);
 * assert.equal(mentionQuery("/help @docs:"), undefined);
 * ```
 */
export function mentionQuery(input: string): MentionQuery | undefined {
  if (input.trimStart().startsWith("/")) return undefined;
  const match = /(^|\s)@([A-Za-z0-9_-]*)(?::(\S*))?$/.exec(input);
  if (match === null) return undefined;
  const start = match.index + match[1].length;
  return match[3] === undefined
    ? { start, server: match[2] }
    : { start, server: match[2], resource: match[3] };
}

/**
 * What the drawer offers for `query`: servers with resources while the server is typed, then
 * that server's resources whose uri starts with, or whose name contains, what follows the colon.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mentionEntries } from "./mentions.ts";
 * const resources = [
 *   { server: "docs", uri: "file:///readme.md", name: "README" },
 *   { server: "docs", uri: "file:///guide.md", name: "Guide" },
 * ];
 * assert.deepEqual(mentionEntries(resources, { start: 0, server: "d" }).map((e) => e.insert), ["@docs:"]);
 * assert.deepEqual(
 *   mentionEntries(resources, { start: 0, server: "docs", resource: "gui" }).map((e) => e.insert),
 *   ["@docs:file:///guide.md "],
 * );
 * ```
 */
export function mentionEntries(
  resources: readonly MentionResource[],
  query: MentionQuery,
): MentionEntry[] {
  if (query.resource === undefined) {
    const counts = new Map<string, number>();
    for (const resource of resources) {
      if (resource.server.startsWith(query.server)) {
        counts.set(resource.server, (counts.get(resource.server) ?? 0) + 1);
      }
    }
    return [...counts].map(([server, count]) => ({
      insert: `@${server}:`,
      line: `@${server}:`,
      help: `${count} resource${count === 1 ? "" : "s"}`,
    }));
  }
  const typed = query.resource.toLowerCase();
  return resources.filter((resource) =>
    resource.server === query.server &&
    (resource.uri.toLowerCase().startsWith(typed) || resource.name.toLowerCase().includes(typed))
  ).map((resource) => ({
    insert: `@${resource.server}:${resource.uri} `,
    line: `@${resource.server}:${resource.uri}`,
    help: resource.name,
  }));
}

/**
 * `input` with the `@` word of `query` replaced by `entry`'s completion.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { completeMention, mentionQuery } from "./mentions.ts";
 * const input = "summarise @docs:gu";
 * const entry = { insert: "@docs:file:///guide.md ", line: "", help: "" };
 * assert.equal(completeMention(input, mentionQuery(input)!, entry), "summarise @docs:file:///guide.md ");
 * ```
 */
export function completeMention(input: string, query: MentionQuery, entry: MentionEntry): string {
  return input.slice(0, query.start) + entry.insert;
}
