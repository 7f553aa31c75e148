/**
 * `@` completion in the input line. A word being typed at the end of the line that starts with
 * `@` names a workspace file (`@src/main.ts`, attached to the prompt when it is sent: see
 * `attachments.ts`) or an MCP resource as `@server:uri` (the attachment `@amber/mcp` reads when
 * the prompt is sent). `@ma` offers the files whose paths hold `ma` fuzzily (see `fuzzy.ts`) and
 * the servers with resources whose names start with it; `@everything:` offers that server's
 * resources by uri and name, narrowed by what follows the colon. Tab inserts the selection in
 * place of the word.
 *
 * @module
 */

import { fuzzyRank } from "./fuzzy.ts";

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
  /** Everything after the `@`: a file path, or `server:uri`. */
  readonly word: string;
  /**
   * The server part, up to the colon, when the word could name an MCP server (letters, digits,
   * `_` and `-`); undefined otherwise.
   */
  readonly server?: string;
  /** What follows the colon; undefined while the server is still being typed. */
  readonly resource?: string;
}

/** One offer of the drawer: what Tab puts in place of the word, and what it shows. */
export interface MentionEntry {
  /** The word it completes to: `@path `, `@server:` or `@server:uri `. */
  readonly insert: string;
  /** The text shown for it. */
  readonly line: string;
  /** Its description: `file`, the resource's name, or the server's resource count. */
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
 * assert.deepEqual(mentionQuery("read @docs:file:///a"), {
 *   start: 5,
 *   word: "docs:file:///a",
 *   server: "docs",
 *   resource: "file:///a",
 * });
 * assert.deepEqual(mentionQuery("@do"), { start: 0, word: "do", server: "do" });
 * assert.deepEqual(mentionQuery("see @src/ma"), { start: 4, word: "src/ma" });
 * assert.equal(mentionQuery("mail me@example.com"), undefined);
 * assert.equal(mentionQuery("@docs:x then more"), undefined);
 * assert.equal(mentionQuery("/help @docs:"), undefined);
 * ```
 */
export function mentionQuery(input: string): MentionQuery | undefined {
  if (input.trimStart().startsWith("/")) return undefined;
  const match = /(^|\s)@(\S*)$/.exec(input);
  if (match === null) return undefined;
  const start = match.index + match[1].length;
  const word = match[2];
  const mcp = /^([A-Za-z0-9_-]*)(?::(.*))?$/.exec(word);
  if (mcp === null) return { start, word };
  return mcp[2] === undefined
    ? { start, word, server: mcp[1] }
    : { start, word, server: mcp[1], resource: mcp[2] };
}

/** What {@linkcode mentionEntries} offers from. */
export interface MentionSources {
  /** The MCP servers' resources. */
  readonly resources?: readonly MentionResource[];
  /** The workspace's files, `/`-separated and relative to the root. */
  readonly files?: readonly string[];
  /** At most this many files (50 by default). */
  readonly limit?: number;
}

/**
 * What the drawer offers for `query`: while no colon is typed, the servers with resources whose
 * names start with the word, then the files matching it best first; after `server:`, that
 * server's resources whose uri starts with, or whose name contains, what follows the colon (and
 * the files matching the whole word, when no server has that name).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mentionEntries } from "./mentions.ts";
 * const resources = [
 *   { server: "docs", uri: "file:///readme.md", name: "README" },
 *   { server: "docs", uri: "file:///guide.md", name: "Guide" },
 * ];
 * const files = ["src/docs.ts", "README.md"];
 * const inserts = (query: Parameters<typeof mentionEntries>[1]) =>
 *   mentionEntries({ resources, files }, query).map((e) => e.insert);
 * assert.deepEqual(inserts({ start: 0, word: "do", server: "do" }), ["@docs:", "@src/docs.ts "]);
 * assert.deepEqual(inserts({ start: 0, word: "docs:gui", server: "docs", resource: "gui" }), [
 *   "@docs:file:///guide.md ",
 * ]);
 * assert.deepEqual(inserts({ start: 0, word: "src/d" }), ["@src/docs.ts "]);
 * ```
 */
export function mentionEntries(sources: MentionSources, query: MentionQuery): MentionEntry[] {
  const resources = sources.resources ?? [];
  const { server, resource } = query;
  if (server !== undefined && resource !== undefined) {
    const typed = resource.toLowerCase();
    const found = resources.filter((r) =>
      r.server === server &&
      (r.uri.toLowerCase().startsWith(typed) || r.name.toLowerCase().includes(typed))
    ).map((r) => ({
      insert: `@${r.server}:${r.uri} `,
      line: `@${r.server}:${r.uri}`,
      help: r.name,
    }));
    if (resources.some((r) => r.server === server)) return found;
  }
  const entries: MentionEntry[] = [];
  if (server !== undefined && resource === undefined) {
    const counts = new Map<string, number>();
    for (const r of resources) {
      if (r.server.startsWith(server)) counts.set(r.server, (counts.get(r.server) ?? 0) + 1);
    }
    for (const [name, count] of counts) {
      entries.push({
        insert: `@${name}:`,
        line: `@${name}:`,
        help: `${count} resource${count === 1 ? "" : "s"}`,
      });
    }
  }
  for (const path of fuzzyRank(sources.files ?? [], query.word, sources.limit ?? 50)) {
    entries.push({ insert: `@${path} `, line: `@${path}`, help: "file" });
  }
  return entries;
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
