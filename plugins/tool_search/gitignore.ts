/**
 * A small .gitignore matcher and the glob translation it rests on, for the search tool's built-in
 * walk; exported as `@amber/plugins/gitignore` for a front end that lists workspace files the
 * same way (the interactive session's `@` completion).
 *
 * @module
 */

/** One pattern of a .gitignore file (or a search glob), compiled. */
export interface IgnoreRule {
  /** The pattern as written, for messages and tests. */
  readonly source: string;
  /** Matches a `/`-separated path relative to the directory the rule belongs to. */
  readonly regex: RegExp;
  /** `!pattern`: re-includes what an earlier rule excluded. */
  readonly negate: boolean;
  /** `pattern/`: matches directories only. */
  readonly dirOnly: boolean;
}

/**
 * The source of a regular expression matching what `glob` matches, for a whole `/`-separated
 * path: `*` and `?` stay within one segment, `**` as a whole segment spans any number of them,
 * `[...]` is a character class (`[!...]` negated), `\` escapes. With `braces`, `{a,b}` means
 * either.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { globToRegExpSource } from "@amber/plugins/gitignore";
 * const re = new RegExp(`^${globToRegExpSource("src/**\/*.{ts,tsx}", true)}$`);
 * assert.deepEqual(
 *   [re.test("src/a/b.tsx"), re.test("src/b.ts"), re.test("lib/b.ts")],
 *   [true, true, false],
 * );
 * ```
 */
export function globToRegExpSource(glob: string, braces = false): string {
  let out = "";
  let i = 0;
  while (i < glob.length) {
    const char = glob[i];
    if (char === "\\" && i + 1 < glob.length) {
      out += escapeRegExp(glob[i + 1]);
      i += 2;
      continue;
    }
    if (char === "*") {
      if (glob[i + 1] === "*") {
        const atStart = i === 0 || glob[i - 1] === "/";
        const after = glob[i + 2];
        if (atStart && after === undefined) {
          // `**` at the end: everything below (or everything, alone).
          out += ".*";
          i += 2;
          continue;
        }
        if (atStart && after === "/") {
          // `**/`: zero or more whole directories.
          out += "(?:.*/)?";
          i += 3;
          continue;
        }
        // Any other run of stars is one star.
        while (glob[i] === "*") i++;
        out += "[^/]*";
        continue;
      }
      out += "[^/]*";
      i++;
      continue;
    }
    if (char === "?") {
      out += "[^/]";
      i++;
      continue;
    }
    if (char === "[") {
      const end = classEnd(glob, i);
      if (end !== -1) {
        let body = glob.slice(i + 1, end);
        let negated = false;
        if (body.startsWith("!") || body.startsWith("^")) {
          negated = true;
          body = body.slice(1);
        }
        const escaped = body.replace(/\\(.)/g, "$1").replace(/[\\\]^]/g, (c) => `\\${c}`);
        // A class never matches the separator, as in fnmatch with FNM_PATHNAME.
        out += `(?!/)[${negated ? "^" : ""}${escaped}]`;
        i = end + 1;
        continue;
      }
    }
    if (char === "{" && braces) {
      const end = braceEnd(glob, i);
      if (end !== -1) {
        const alternatives = splitTopLevel(glob.slice(i + 1, end));
        out += `(?:${alternatives.map((alt) => globToRegExpSource(alt, true)).join("|")})`;
        i = end + 1;
        continue;
      }
    }
    out += escapeRegExp(char);
    i++;
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

// The index of the `]` closing the class opened at `start`, or -1 when it is a literal `[`.
function classEnd(glob: string, start: number): number {
  let i = start + 1;
  if (glob[i] === "!" || glob[i] === "^") i++;
  if (glob[i] === "]") i++; // A leading `]` is a member, not the end.
  for (; i < glob.length; i++) {
    if (glob[i] === "\\") i++;
    else if (glob[i] === "]") return i;
  }
  return -1;
}

function braceEnd(glob: string, start: number): number {
  let depth = 0;
  for (let i = start; i < glob.length; i++) {
    if (glob[i] === "\\") i++;
    else if (glob[i] === "{") depth++;
    else if (glob[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "{") depth++;
    else if (text[i] === "}") depth--;
    else if (text[i] === "," && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/**
 * Compiles one pattern line the way git reads .gitignore: `#` comments and blank lines give
 * nothing; `!` negates; a trailing `/` limits it to directories; a pattern with a `/` before its
 * end is anchored to its file's directory (a leading `/` only anchors), one without matches at
 * any depth. Unescaped trailing spaces are dropped. `braces` also allows `{a,b}`, as search
 * globs do.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileRule } from "@amber/plugins/gitignore";
 * const rule = compileRule("!/build/")!;
 * assert.deepEqual(
 *   [rule.negate, rule.dirOnly, rule.regex.test("build"), rule.regex.test("a/build")],
 *   [true, true, true, false],
 * );
 * ```
 */
export function compileRule(line: string, braces = false): IgnoreRule | undefined {
  let text = line.endsWith("\r") ? line.slice(0, -1) : line;
  // Trailing spaces go unless the last one is escaped.
  text = text.replace(/(?<!\\) +$/, "");
  if (text === "" || text.startsWith("#")) return undefined;
  let negate = false;
  if (text.startsWith("!")) {
    negate = true;
    text = text.slice(1);
  }
  let dirOnly = false;
  if (text.endsWith("/") && !text.endsWith("\\/")) {
    dirOnly = true;
    text = text.replace(/\/+$/, "");
  }
  if (text === "") return undefined;
  const anchored = text.includes("/");
  if (text.startsWith("/")) text = text.slice(1);
  const body = globToRegExpSource(text, braces);
  const regex = new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`);
  return { source: line, regex, negate, dirOnly };
}

/**
 * Every rule of a .gitignore file's text, in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseGitignore } from "@amber/plugins/gitignore";
 * const rules = parseGitignore("# build output\ndist/\n*.log\n!keep.log\n");
 * assert.deepEqual(rules.map((rule) => rule.negate), [false, false, true]);
 * ```
 */
export function parseGitignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const line of text.split("\n")) {
    const rule = compileRule(line);
    if (rule !== undefined) rules.push(rule);
  }
  return rules;
}

/** The rules of one .gitignore and the directory they belong to. */
interface IgnoreLevel {
  /** The directory, `/`-separated and relative to the matcher's root; "" for the root. */
  readonly base: string;
  readonly rules: readonly IgnoreRule[];
}

/**
 * The .gitignore rules in force at one point of a walk: the root's file and every nested one on
 * the way down. Immutable: {@linkcode IgnoreMatcher.with} returns the matcher for a
 * subdirectory. As in git, the last matching rule wins, a deeper file's rules come after its
 * parents', and (because a walk never enters an ignored directory) nothing under an ignored
 * directory can be re-included.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { IgnoreMatcher, parseGitignore } from "@amber/plugins/gitignore";
 * const root = IgnoreMatcher.empty().with("", parseGitignore("*.log\n!keep.log\n/dist\n"));
 * assert.deepEqual([root.ignores("a/x.log", false), root.ignores("a/keep.log", false)], [
 *   true,
 *   false,
 * ]);
 * assert.deepEqual([root.ignores("dist", true), root.ignores("src/dist", true)], [true, false]);
 * const src = root.with("src", parseGitignore("gen/\n"));
 * assert.deepEqual([src.ignores("src/gen", true), src.ignores("gen", true)], [true, false]);
 * ```
 */
export class IgnoreMatcher {
  readonly #levels: readonly IgnoreLevel[];

  private constructor(levels: readonly IgnoreLevel[]) {
    this.#levels = levels;
  }

  /** A matcher that ignores nothing. */
  static empty(): IgnoreMatcher {
    return new IgnoreMatcher([]);
  }

  /** This matcher plus the rules of the .gitignore in `base` (relative to the root). */
  with(base: string, rules: readonly IgnoreRule[]): IgnoreMatcher {
    if (rules.length === 0) return this;
    return new IgnoreMatcher([...this.#levels, { base, rules }]);
  }

  /** Whether `path` (`/`-separated, relative to the root) is ignored. */
  ignores(path: string, isDir: boolean): boolean {
    let ignored = false;
    for (const level of this.#levels) {
      let rel: string;
      if (level.base === "") rel = path;
      else if (path.startsWith(`${level.base}/`)) rel = path.slice(level.base.length + 1);
      else continue;
      for (const rule of level.rules) {
        if (rule.dirOnly && !isDir) continue;
        if (rule.regex.test(rel)) ignored = !rule.negate;
      }
    }
    return ignored;
  }
}
