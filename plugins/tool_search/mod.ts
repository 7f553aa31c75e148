/**
 * The `search` tool: a regular expression over the workspace's files, ripgrep when it is
 * installed and a built-in walk that honours .gitignore otherwise.
 *
 * @module
 */

import type { FromJsonSchema, Plugin, PluginServices, Tool, ToolResult } from "@amber/core";
import { defineTool } from "@amber/core";
import {
  describeError,
  displayPath,
  hasCommand,
  outsideWorkspace,
  resolvePath,
  toolError,
} from "../_workspace.ts";
import { toolPlugin } from "../tool_plugin.ts";
import { ripgrepSearch, type SearchOutcome, type SearchQuery, walkSearch } from "./_walk.ts";

export {
  compileRule,
  globToRegExpSource,
  IgnoreMatcher,
  type IgnoreRule,
  parseGitignore,
} from "./gitignore.ts";
export { ALWAYS_SKIPPED, MAX_FILE_BYTES } from "./_walk.ts";

/** How many matching lines `search` returns when the call does not say. */
export const DEFAULT_MAX_RESULTS = 200;
/** The most matching lines a call may ask for. */
export const MAX_RESULTS_CEILING = 5000;
// A matching line is shown up to this many characters: minified files have enormous lines.
const MAX_TEXT_CHARS = 500;

/** Options of {@linkcode createToolSearchPlugin}. */
export interface ToolSearchOptions {
  /**
   * Which engine runs a search: `"auto"` (the default) uses ripgrep when `rg` is on the PATH
   * (asked once, the first time), `"builtin"` never does, `"ripgrep"` always does and fails when
   * it is missing.
   */
  readonly engine?: "auto" | "builtin" | "ripgrep";
}

const PARAMETERS = {
  type: "object",
  properties: {
    pattern: {
      type: "string",
      minLength: 1,
      description: "The regular expression to look for, matched line by line " +
        "(e.g. `function\\s+load`). Escape regex characters to find them literally.",
    },
    path: {
      type: "string",
      description: "The directory or file to search, relative to the workspace root. " +
        "Default: the whole workspace.",
    },
    glob: {
      type: "string",
      description: 'Only search files matching this glob, e.g. "*.ts" or "src/**/*.rs"; ' +
        'a leading "!" excludes instead.',
    },
    case_insensitive: {
      type: "boolean",
      description: "Match regardless of letter case. Default false.",
    },
    max_results: {
      type: "integer",
      minimum: 1,
      maximum: MAX_RESULTS_CEILING,
      description: `The most matching lines to return. Default ${DEFAULT_MAX_RESULTS}.`,
    },
  },
  required: ["pattern"],
  additionalProperties: false,
} as const;

type SearchArgs = FromJsonSchema<typeof PARAMETERS>;

/**
 * Creates the `tool_search` plugin, which contributes the `search` tool.
 *
 * `search` finds the lines matching a regular expression under a directory (the workspace by
 * default) or in one file, and returns them as `path:line: text`, paths relative to the
 * workspace, at most `max_results` (default 200) with the cut stated. Both engines skip `.git/`,
 * `node_modules/`, symlinks, binary files, files over 50 MiB and what .gitignore files say
 * (nested ones, `*`, `**`, anchored `/x`, `dir/`, `!negation`); both search hidden files and
 * walk in name order, so they give the same result. A `glob` selects files by name (`*.ts`) or by
 * path under the searched directory (`src/lib/*.ts`, with `**` for any depth); as in ripgrep, it
 * selects a file even where .gitignore lists it, but never reaches into an ignored directory.
 * If ripgrep rejects a pattern that JavaScript accepts (look-around, back-references), the
 * built-in engine takes over. (One difference remains: ripgrep also reads .gitignore files above
 * the workspace root; the built-in walk starts at the root.) The tool is read-only and asks for
 * approval only for a path outside the workspace.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolSearchPlugin } from "@amber/plugins/tool_search";
 * const plugin = createToolSearchPlugin({ engine: "builtin" });
 * assert.equal(plugin.id, "tool_search");
 * assert.deepEqual(plugin.capabilities().map((c) => c.name), ["search"]);
 * ```
 */
export function createToolSearchPlugin(options: ToolSearchOptions = {}): Plugin {
  const engine = options.engine ?? "auto";
  return toolPlugin({
    id: "tool_search",
    name: "Search",
    description: "The search tool: a regular expression over the workspace (ripgrep or built in).",
    tools: ["search"],
    build: (services) => [searchTool(services, engine)],
  });
}

function searchTool(
  services: PluginServices,
  engine: NonNullable<ToolSearchOptions["engine"]>,
): Tool<SearchArgs> {
  const root = services.workspace.root;
  return defineTool({
    name: "search",
    description: "Search file contents for a regular expression. Returns matching lines as " +
      "`path:line: text`, paths relative to the workspace root, in path order. Searches the " +
      "workspace by default, or the directory or file given as `path`; `glob` keeps only files " +
      "whose name (`*.ts`, `*.{ts,tsx}`) or path under the searched directory " +
      "(`src/**/*.test.ts`) matches. Skips .git, node_modules, binary files and anything " +
      ".gitignore lists. Use it to find definitions, usages and files before reading them.",
    parameters: PARAMETERS,
    verb: "searching",
    readOnly: true,
    requiresApproval: (args) => outsideWorkspace(root, args),
    summarize: ({ pattern, path, glob }) =>
      `search /${String(pattern)}/ in ${String(path ?? ".")}${glob ? ` (${String(glob)})` : ""}`,
    execute: (args, context) => search(root, args, engine, context.signal),
  });
}

async function search(
  root: string,
  args: SearchArgs,
  engine: NonNullable<ToolSearchOptions["engine"]>,
  signal: AbortSignal,
): Promise<ToolResult> {
  const target = resolvePath(root, args.path ?? ".");
  const shown = displayPath(root, target);
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(target);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return toolError(`path not found: ${shown}`);
    return toolError(`cannot search ${shown}: ${describeError(error)}`);
  }
  const limit = args.max_results ?? DEFAULT_MAX_RESULTS;
  const query: SearchQuery = {
    pattern: args.pattern,
    target,
    targetIsDir: info.isDirectory,
    root,
    glob: args.glob,
    caseInsensitive: args.case_insensitive ?? false,
    limit,
    signal,
  };

  let outcome: SearchOutcome | undefined;
  let rgError: string | undefined;
  try {
    const rg = engine !== "builtin" && await hasCommand("rg");
    if (engine === "ripgrep" && !rg) {
      return toolError("ripgrep (rg) is not installed, and this search was set to use it");
    }
    // One file needs no walk: the built-in engine reads it directly.
    if (rg && info.isDirectory) {
      outcome = await ripgrepSearch(query);
      rgError = outcome.regexError;
      if (rgError !== undefined) outcome = undefined;
    }
    if (outcome === undefined) {
      let regex: RegExp;
      try {
        regex = new RegExp(args.pattern, query.caseInsensitive ? "i" : "");
      } catch (error) {
        return toolError(
          `invalid regular expression /${args.pattern}/: ${rgError ?? describeError(error)}`,
        );
      }
      outcome = await walkSearch(query, regex);
    }
  } catch (error) {
    return toolError(`search failed: ${describeError(error)}`);
  }
  if (signal.aborted) return toolError("cancelled");

  const matches = outcome.matches;
  if (matches.length === 0) {
    return {
      ok: true,
      output: `No matches for /${args.pattern}/ in ${shown === "." ? "the workspace" : shown}${
        args.glob ? ` (glob ${args.glob})` : ""
      }.`,
      data: { matches: 0 },
    };
  }
  const cut = matches.length > limit;
  const lines = matches.slice(0, limit).map((match) => {
    const text = match.text.length > MAX_TEXT_CHARS
      ? `${match.text.slice(0, MAX_TEXT_CHARS)}... [line cut: ${match.text.length} chars]`
      : match.text;
    return `${displayPath(root, match.path)}:${match.line}: ${text}`;
  });
  if (cut) {
    lines.push(
      "",
      `[results cut at ${limit} matching lines; there are more. Narrow the pattern, path or ` +
        "glob, or raise max_results]",
    );
  }
  return {
    ok: true,
    output: lines.join("\n"),
    data: { matches: Math.min(matches.length, limit), cut },
  };
}
