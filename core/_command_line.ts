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
   * backticks), a process substitution, or output redirected into a file (`> out`; `2>&1` and
   * `> /dev/null` do not count). An allow rule never covers such a line.
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
  let quote: "'" | '"' | undefined;
  let opaque = false;
  const flush = (): void => {
    const command = current.trim().replace(/\s+/g, " ");
    if (command !== "") commands.push(command);
    current = "";
  };
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quote === "'") {
      current += char;
      if (char === "'") quote = undefined;
      continue;
    }
    if (char === "\\" && i + 1 < line.length) {
      current += char + line[i + 1];
      i++;
      continue;
    }
    if (char === "`" || (char === "$" && line[i + 1] === "(")) opaque = true;
    if (quote === '"') {
      current += char;
      if (char === '"') quote = undefined;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      current += char;
      continue;
    }
    if ((char === "<" || char === ">") && line[i + 1] === "(") opaque = true;
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

// Whether the `>` at `at` sends output into a file: not `>&2`, `2>&1`, nor `/dev/null`.
function writesFile(line: string, at: number): boolean {
  let i = at + 1;
  if (line[i] === ">") i++;
  if (line[i] === "&") return false;
  while (line[i] === " " || line[i] === "\t") i++;
  return !line.startsWith("/dev/null", i);
}
