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

// Whether `name` fits `glob` (`*` any run, `?` one character). Not a regular expression: one of
// `*a*a*a...z` backtracks for minutes on each tool call, and a cloned repository's file writes
// the pattern. This walk goes back only to the last `*`, so it takes at most glob × name steps.
function globMatches(glob: string, name: string): boolean {
  let g = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    if (g < glob.length && (glob[g] === "?" || glob[g] === name[n])) {
      g++;
      n++;
    } else if (g < glob.length && glob[g] === "*") {
      star = g++;
      resume = n;
    } else if (star !== -1) {
      g = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (glob[g] === "*") g++;
  return g === glob.length;
}

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
  // `Bash(git status:*)` names `Bash`: cut at the first `(` when the entry ends with `)` (what
  // /\(.*\)$/ does, without its quadratic time on a line of thousands of `(`).
  const trimmed = entry.trim();
  const open = trimmed.indexOf("(");
  const wanted = (open !== -1 && trimmed.endsWith(")") ? trimmed.slice(0, open) : trimmed).trim();
  if (wanted === "") return () => false;
  const lower = wanted.toLowerCase();
  if (/[*?]/.test(lower)) return (name) => globMatches(lower, name.toLowerCase());
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
