/**
 * The two search engines behind the `search` tool: ripgrep when it is installed, a built-in walk
 * otherwise. Both give the same matches in the same order.
 *
 * @module
 */

import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { compileRule, IgnoreMatcher, type IgnoreRule, parseGitignore } from "./gitignore.ts";

/** One matching line. */
export interface SearchMatch {
  /** The file's absolute path. */
  readonly path: string;
  /** The 1-based line number. */
  readonly line: number;
  /** The line's text, without its line end. */
  readonly text: string;
}

/** What a search is asked. */
export interface SearchQuery {
  /** The regular expression. */
  readonly pattern: string;
  /** The absolute directory or file to search. */
  readonly target: string;
  /** Whether `target` is a directory. */
  readonly targetIsDir: boolean;
  /** The workspace root, where the .gitignore rules start when the target is inside it. */
  readonly root: string;
  /** A glob selecting files, ripgrep style. */
  readonly glob?: string;
  /** Match regardless of case. */
  readonly caseInsensitive: boolean;
  /** Stop after this many matching lines (one more is looked for, to know there are more). */
  readonly limit: number;
  /** Stops the search. */
  readonly signal: AbortSignal;
}

/** What a search found. */
export interface SearchOutcome {
  /** The matches, at most `limit + 1` of them. */
  readonly matches: SearchMatch[];
  /** Set when ripgrep refused the pattern: the caller may retry with the built-in engine. */
  readonly regexError?: string;
}

/** Files bigger than this are not searched, by either engine. */
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
/** Directories never searched, whatever .gitignore says. */
export const ALWAYS_SKIPPED: readonly string[] = [".git", "node_modules"];

/**
 * The built-in engine: walks `target` depth first with entries in name order, skipping
 * symlinks, `.git/`, `node_modules/`, binary files, files over {@linkcode MAX_FILE_BYTES} and
 * whatever the .gitignore files from the workspace root down say. A glob, as in ripgrep, selects
 * files even when .gitignore lists them, but never reaches into an ignored directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { walkSearch } from "./_walk.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${root}/.gitignore`, "*.log\n");
 * await Deno.writeTextFile(`${root}/a.ts`, "const x = 1;\n");
 * await Deno.writeTextFile(`${root}/a.log`, "const x = 1;\n");
 * const query = {
 *   pattern: "const",
 *   target: root,
 *   targetIsDir: true,
 *   root,
 *   caseInsensitive: false,
 *   limit: 10,
 *   signal: new AbortController().signal,
 * };
 * const { matches } = await walkSearch(query, /const/);
 * assert.deepEqual(matches.map((m) => `${m.path.slice(root.length + 1)}:${m.line}`), ["a.ts:1"]);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function walkSearch(query: SearchQuery, regex: RegExp): Promise<SearchOutcome> {
  const matches: SearchMatch[] = [];
  const full = (): boolean => matches.length > query.limit;
  if (!query.targetIsDir) {
    await searchFile(query.target, regex, matches, query.limit);
    return { matches };
  }
  const overrides = overrideRules(query.glob);
  // Rules are read from the workspace root down when the target is inside it, so a search of a
  // subdirectory still honours the root's .gitignore.
  const base = isUnder(query.root, query.target) ? query.root : query.target;
  let matcher = IgnoreMatcher.empty();
  let dir = base;
  const steps = relative(base, query.target).split(sep).filter((part) => part !== "");
  matcher = matcher.with("", await readGitignore(dir));
  for (const step of steps) {
    dir = join(dir, step);
    matcher = matcher.with(toSlash(relative(base, dir)), await readGitignore(dir));
  }
  const targetRel = toSlash(relative(base, query.target));

  const visit = async (dir: string, rel: string, matcher: IgnoreMatcher): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      return; // Unreadable directories are passed over, as ripgrep does.
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (full() || query.signal.aborted) return;
      if (entry.isSymlink) continue;
      const path = join(dir, entry.name);
      const entryRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
      // Globs are matched relative to the searched directory, .gitignore rules to their own.
      const searchRel = toSlash(relative(query.target, path));
      const override = matchOverrides(overrides, searchRel, entry.isDirectory);
      if (override === "exclude") continue;
      if (override === "none" && matcher.ignores(entryRel, entry.isDirectory)) continue;
      if (entry.isDirectory) {
        await visit(path, entryRel, matcher.with(entryRel, await readGitignore(path)));
      } else if (entry.isFile) {
        await searchFile(path, regex, matches, query.limit);
      }
    }
  };
  await visit(query.target, targetRel, matcher);
  return { matches };
}

async function searchFile(
  path: string,
  regex: RegExp,
  matches: SearchMatch[],
  limit: number,
): Promise<void> {
  let bytes: Uint8Array;
  try {
    const info = await Deno.stat(path);
    if (info.size > MAX_FILE_BYTES) return;
    bytes = await Deno.readFile(path);
  } catch {
    return;
  }
  if (bytes.includes(0)) return;
  const lines = new TextDecoder().decode(bytes).split("\n");
  for (let i = 0; i < lines.length; i++) {
    let text = lines[i];
    if (i === lines.length - 1 && text === "") break;
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (!regex.test(text)) continue;
    matches.push({ path, line: i + 1, text });
    if (matches.length > limit) return;
  }
}

async function readGitignore(dir: string): Promise<IgnoreRule[]> {
  try {
    return parseGitignore(await Deno.readTextFile(join(dir, ".gitignore")));
  } catch {
    return [];
  }
}

interface Override {
  readonly rule: IgnoreRule;
}

function overrideRules(glob: string | undefined): Override[] {
  const rules: Override[] = [];
  if (glob !== undefined && glob !== "") {
    const rule = compileRule(glob, true);
    if (rule !== undefined) rules.push({ rule });
  }
  for (const name of ALWAYS_SKIPPED) rules.push({ rule: compileRule(`!${name}`)! });
  return rules;
}

// ripgrep's override logic: the last glob that matches decides; a file no glob matches is left
// out when any glob selects (is not `!`); directories are never left out for not matching.
function matchOverrides(
  overrides: readonly Override[],
  rel: string,
  isDir: boolean,
): "include" | "exclude" | "none" {
  let result: "include" | "exclude" | "none" = "none";
  let selecting = false;
  for (const { rule } of overrides) {
    if (!rule.negate) selecting = true;
    if (rule.dirOnly && !isDir) continue;
    if (rule.regex.test(rel)) result = rule.negate ? "exclude" : "include";
  }
  if (result === "none" && selecting && !isDir) return "exclude";
  return result;
}

/**
 * The ripgrep engine: `rg --json` with the options that make it agree with the built-in walk,
 * stopped as soon as it has found one match more than the limit. Rejects when ripgrep fails for
 * a reason other than the pattern.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ripgrepSearch } from "./_walk.ts";
 * import { hasCommand } from "../_workspace.ts";
 * if (await hasCommand("rg")) {
 *   const root = await Deno.makeTempDir();
 *   await Deno.writeTextFile(`${root}/a.ts`, "const x = 1;\n");
 *   const { matches } = await ripgrepSearch({
 *     pattern: "const",
 *     target: root,
 *     targetIsDir: true,
 *     root,
 *     caseInsensitive: false,
 *     limit: 10,
 *     signal: new AbortController().signal,
 *   });
 *   assert.deepEqual(matches.map((m) => [m.line, m.text]), [[1, "const x = 1;"]]);
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 */
export async function ripgrepSearch(query: SearchQuery): Promise<SearchOutcome> {
  const args = [
    "--json",
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-ignore-global",
    "--sort",
    "path",
    "--max-filesize",
    String(MAX_FILE_BYTES),
  ];
  if (query.caseInsensitive) args.push("--ignore-case");
  if (query.glob !== undefined && query.glob !== "") args.push("--glob", query.glob);
  for (const name of ALWAYS_SKIPPED) args.push("--glob", `!${name}`);
  args.push("--regexp", query.pattern, "--", ".");

  const child = new Deno.Command("rg", {
    args,
    cwd: query.target,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stop = (): void => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  };
  query.signal.addEventListener("abort", stop, { once: true });
  if (query.signal.aborted) stop();
  const stderr = new Response(child.stderr).text();
  const matches: SearchMatch[] = [];
  const decoder = new TextDecoder();
  let pending = "";
  try {
    for await (const chunk of child.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = pending.indexOf("\n")) !== -1) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        const match = parseMatch(line, query.target);
        if (match !== undefined) matches.push(match);
        if (matches.length > query.limit) break;
      }
      if (matches.length > query.limit) {
        stop();
        break;
      }
    }
  } finally {
    query.signal.removeEventListener("abort", stop);
  }
  await child.stdout.cancel().catch(() => {});
  const status = await child.status;
  const errors = await stderr;
  if (status.code === 2 && matches.length === 0 && !query.signal.aborted) {
    if (/regex parse error|error parsing regex|regex/i.test(errors)) {
      return { matches, regexError: errors.trim() };
    }
    throw new Error(errors.trim() || "ripgrep failed");
  }
  return { matches };
}

interface RgText {
  readonly text?: string;
  readonly bytes?: string;
}

function parseMatch(line: string, cwd: string): SearchMatch | undefined {
  if (!line.startsWith('{"type":"match"')) return undefined;
  const message = JSON.parse(line) as {
    data: { path: RgText; lines: RgText; line_number: number };
  };
  const path = resolve(cwd, rgText(message.data.path));
  const text = rgText(message.data.lines).replace(/\r?\n$/, "");
  return { path, line: message.data.line_number, text };
}

// ripgrep sends text that is not UTF-8 as base64 bytes.
function rgText(value: RgText): string {
  if (value.text !== undefined) return value.text;
  if (value.bytes === undefined) return "";
  const raw = atob(value.bytes);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

function isUnder(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function toSlash(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}
