/**
 * How an entry of a markdown file's tool list (an agent's `tools`, a skill's `allowed-tools`)
 * names amber's tools: an amber tool name or a glob (`*`, `mcp__github__*`), matched without
 * regard to case. A name that is none of amber's but one of Claude Code's (`Read`, `Grep`,
 * `Glob`, `Bash`, `Edit`, `MultiEdit`, `Write`, `TodoWrite`) stands for amber's tool doing that
 * work, so a `.claude/` file works unchanged; Claude Code's argument patterns (`Bash(git *)`)
 * name the tool only: amber narrows by tool, not by argument.
 *
 * @module
 */

// Claude Code's tool names, lower-cased, and the amber tool doing the same work.
const CLAUDE_TOOLS: { readonly [name: string]: string } = {
  read: "read",
  write: "write",
  edit: "edit",
  multiedit: "edit",
  bash: "bash",
  grep: "search",
  glob: "search",
  todowrite: "todowrite",
};

/**
 * Whether a tool name is one that `entry` stands for.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolMatcher } from "./tool_patterns.ts";
 * assert.equal(toolMatcher("Grep")("search"), true);
 * assert.equal(toolMatcher("Bash(git status:*)")("bash"), true);
 * assert.equal(toolMatcher("mcp__gh__*")("mcp__gh__issues"), true);
 * assert.equal(toolMatcher("read")("write"), false);
 * assert.equal(toolMatcher("  ")("read"), false);
 * ```
 */
export function toolMatcher(entry: string): (name: string) => boolean {
  const wanted = entry.trim().replace(/\(.*\)$/s, "").trim();
  if (wanted === "") return () => false;
  if (/[*?]/.test(wanted)) {
    const source = wanted.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    const pattern = new RegExp(`^${source}$`, "i");
    return (name) => pattern.test(name);
  }
  const lower = wanted.toLowerCase();
  const claude = CLAUDE_TOOLS[lower];
  return (name) => name.toLowerCase() === lower || name === claude;
}

/**
 * Whether a tool name is one of those `entries` stand for.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolsMatcher } from "./tool_patterns.ts";
 * const allows = toolsMatcher(["Read", "Glob"]);
 * assert.deepEqual(["read", "search", "bash"].filter(allows), ["read", "search"]);
 * ```
 */
export function toolsMatcher(entries: readonly string[]): (name: string) => boolean {
  const matchers = entries.map(toolMatcher);
  return (name) => matchers.some((matches) => matches(name));
}
