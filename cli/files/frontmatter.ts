/**
 * Splitting a markdown file into its YAML frontmatter and its body, as commands, skills and
 * agents are written: a first line `---`, YAML, a line `---`, then the body.
 *
 * The parser (the `yaml` package) is loaded once by {@linkcode frontmatterReader}; reading is then
 * synchronous, so a live refresh at a step boundary can re-read a changed file without waiting.
 *
 * @module
 */

/** A markdown file split in two. */
export interface Frontmatter {
  /** The frontmatter's fields; empty when the file has none. */
  readonly data: Readonly<Record<string, unknown>>;
  /** What follows the frontmatter (the whole text when there is none). */
  readonly body: string;
  /** The line of the file the body starts on, counted from 1. */
  readonly bodyLine: number;
  /** The line each top-level field is on, counted from the file's first line. */
  readonly lines: Readonly<Record<string, number>>;
}

/**
 * A file whose frontmatter cannot be read: names the file and the line (counted from the file's
 * first line) where the problem is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FrontmatterError } from "./frontmatter.ts";
 * const error = new FrontmatterError("review.md", 3, "a tab is not indentation");
 * assert.equal(error.message, "review.md:3: a tab is not indentation");
 * assert.equal(error.name, "FrontmatterError");
 * ```
 */
export class FrontmatterError extends Error {
  /** The file. */
  readonly path: string;
  /** The line, counted from 1. */
  readonly line: number;
  /** What is wrong, without the place. */
  readonly detail: string;

  /** Creates the error for `path` at `line`. */
  constructor(path: string, line: number, detail: string, options?: ErrorOptions) {
    super(`${path}:${line}: ${detail}`, options);
    this.name = "FrontmatterError";
    this.path = path;
    this.line = line;
    this.detail = detail;
  }
}

/** Reads one file's text (named `path` in errors); throws a {@linkcode FrontmatterError}. */
export type FrontmatterReader = (text: string, path: string) => Frontmatter;

type Yaml = typeof import("yaml");

let loaded: Promise<Yaml> | undefined;
let ready: Yaml | undefined;

/**
 * The reader, once the YAML parser is loaded (the first call loads it; later calls share it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { frontmatterReader } from "./frontmatter.ts";
 * const read = await frontmatterReader();
 * const file = read("---\ndescription: Review code\n---\nReview $ARGUMENTS\n", "review.md");
 * assert.deepEqual(file.data, { description: "Review code" });
 * assert.equal(file.body, "Review $ARGUMENTS\n");
 * assert.equal(file.bodyLine, 4);
 * assert.throws(() => read("---\ndescription: x\n", "open.md"), /open\.md:1: .*never closed/);
 * ```
 */
export async function frontmatterReader(): Promise<FrontmatterReader> {
  loaded ??= import("yaml").then((yaml) => (ready = yaml));
  const yaml = await loaded;
  return (text, path) => splitWith(yaml, text, path);
}

/**
 * The reader if the YAML parser is already loaded, else `undefined` (and it starts loading), for
 * a caller that must not wait.
 */
export function frontmatterReaderNow(): FrontmatterReader | undefined {
  if (ready === undefined) {
    // A failed load shows when a caller awaits `frontmatterReader()`.
    frontmatterReader().catch(() => {});
    return undefined;
  }
  const yaml = ready;
  return (text, path) => splitWith(yaml, text, path);
}

const FENCE = /^---[ \t]*$/;
const CLOSE = /^(?:---|\.\.\.)[ \t]*$/;
// A top-level field whose value starts like a YAML list or map but is plain text, as Claude Code
// files write `argument-hint: [file] [focus]`: retried quoted when the YAML does not parse.
const BRACKETED = /^([A-Za-z][\w-]*):[ \t]+([[{].*)$/;
// Fields that are text whatever they look like: `argument-hint: [path]` is a hint, not a list.
const TEXT_FIELD = /^(argument-hint|description):[ \t]+([[{].*)$/;

function splitWith(yaml: Yaml, text: string, path: string): Frontmatter {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = source.split(/\r?\n/);
  if (lines.length === 0 || !FENCE.test(lines[0])) {
    return { data: {}, body: source, bodyLine: 1, lines: {} };
  }
  const close = lines.findIndex((line, i) => i > 0 && CLOSE.test(line));
  if (close === -1) {
    throw new FrontmatterError(
      path,
      1,
      "the frontmatter opened here is never closed (no `---` line after it)",
    );
  }
  const yamlLines = lines.slice(1, close).map((line) => {
    const match = TEXT_FIELD.exec(line);
    return match ? `${match[1]}: ${JSON.stringify(match[2].trim())}` : line;
  });
  const body = lines.slice(close + 1).join("\n");
  const bodyLine = close + 2;
  let parsed = parseYaml(yaml, yamlLines.join("\n"));
  if (parsed.error !== undefined) {
    // Retried with such values quoted; if that does not help, the first error stands.
    const quoted = yamlLines.map((line) => {
      const match = BRACKETED.exec(line);
      return match ? `${match[1]}: ${JSON.stringify(match[2].trim())}` : line;
    });
    const again = parseYaml(yaml, quoted.join("\n"));
    if (again.error !== undefined) {
      // The YAML starts on the file's second line.
      throw new FrontmatterError(path, parsed.error.line + 1, parsed.error.message);
    }
    parsed = again;
  }
  const value = parsed.value ?? {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new FrontmatterError(path, 2, "the frontmatter is not a mapping of `key: value` lines");
  }
  const at: Record<string, number> = {};
  for (const [key, line] of Object.entries(parsed.lines)) at[key] = line + 1;
  return { data: value as Record<string, unknown>, body, bodyLine, lines: at };
}

interface Parsed {
  readonly value?: unknown;
  readonly lines: Record<string, number>;
  readonly error?: { readonly line: number; readonly message: string };
}

function parseYaml(yaml: Yaml, text: string): Parsed {
  const counter = new yaml.LineCounter();
  const document = yaml.parseDocument(text, { lineCounter: counter, prettyErrors: false });
  const first = document.errors[0];
  if (first !== undefined) {
    const line = counter.linePos(first.pos[0]).line;
    // The parser's message repeats the place, which the error puts in front.
    const message = first.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    return { lines: {}, error: { line, message } };
  }
  const lines: Record<string, number> = {};
  const contents = document.contents;
  if (yaml.isMap(contents)) {
    for (const item of contents.items) {
      const key = yaml.isScalar(item.key) ? item.key : undefined;
      if (key?.range !== undefined && key.range !== null) {
        lines[String(key.value)] = counter.linePos(key.range[0]).line;
      }
    }
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { lines, error: { line: 1, message: error instanceof Error ? error.message : "" } };
  }
  return { value, lines };
}
