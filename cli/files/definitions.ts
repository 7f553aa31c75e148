/**
 * What amber reads from markdown folders: commands (`commands/**\/*.md`), skills
 * (`skills/<name>/SKILL.md`) and agents (`agents/*.md`), each parsed from its frontmatter and
 * body. A file that cannot be read is a {@linkcode FileProblem} naming its path and line, and
 * every other file still loads.
 *
 * Reading is synchronous once the YAML parser is loaded (see `frontmatter.ts`): a folder is
 * listed, and re-read when its {@linkcode FolderScan.fingerprint} moves, at a step boundary.
 *
 * @module
 */

import { basename, join, relative, sep } from "node:path";
import type { Capability } from "@amber/core";
import { type Frontmatter, FrontmatterError, type FrontmatterReader } from "./frontmatter.ts";
import { frontmatterReader } from "./frontmatter.ts";
import type { AgentCatalog } from "./agent_catalog.ts";

/** The three kinds of folder. */
export type DefinitionKind = "commands" | "skills" | "agents";

/** A file that was not loaded, and why. */
export interface FileProblem {
  /** The file (or folder). */
  readonly path: string;
  /** The line, counted from 1, when the problem has one. */
  readonly line?: number;
  /** What is wrong. */
  readonly message: string;
}

/** A command: `review.md` is `/review`, `git/commit.md` is `/git:commit`. */
export interface CommandFile {
  /** The command's name, without the slash: `review`, `git:commit`. */
  readonly name: string;
  /** One line of help (`description`). */
  readonly description?: string;
  /** What the arguments are (`argument-hint`), shown while they are typed. */
  readonly argumentHint?: string;
  /** The model to use (`model`). */
  readonly model?: string;
  /** The tools the command means to use (`allowed-tools`), as written. */
  readonly allowedTools?: readonly string[];
  /** The prompt template. */
  readonly body: string;
  /** The file. */
  readonly path: string;
}

/** A skill: `skills/<name>/SKILL.md` and the files beside it. */
export interface SkillFile {
  /** `name`, else the folder's name. */
  readonly name: string;
  /** `description`: what the model reads to decide to load it. */
  readonly description: string;
  /** `allowed-tools`, as written; absent means no narrowing. */
  readonly allowedTools?: readonly string[];
  /** The instructions. */
  readonly body: string;
  /** The skill's folder. */
  readonly dir: string;
  /** Its SKILL.md. */
  readonly path: string;
}

/** An agent: `agents/<name>.md`, its body the sub-agent's system prompt. */
export interface AgentFile {
  /** `name`, else the file's name without `.md`. */
  readonly name: string;
  /** `description`: when to use it. */
  readonly description: string;
  /**
   * `tools`: names or globs (`mcp.*`) from a YAML list or a comma-separated line; absent means
   * every tool.
   */
  readonly tools?: readonly string[];
  /** `model`. */
  readonly model?: string;
  /** The system prompt. */
  readonly systemPrompt: string;
  /** The file. */
  readonly path: string;
}

/** What one kind of folder holds. */
export interface DefinitionOf {
  /** Commands. */
  readonly commands: CommandFile;
  /** Skills. */
  readonly skills: SkillFile;
  /** Agents. */
  readonly agents: AgentFile;
}

/** A folder's definitions and the files that failed. */
export interface LoadedFolder<T> {
  /** What loaded, sorted by name. */
  readonly items: readonly T[];
  /** What did not. */
  readonly problems: readonly FileProblem[];
}

/**
 * Where the plugin contributing a folder's definitions runs, for the builders of its capabilities
 * (`skills.ts`, `agents.ts`, `markdown_commands.ts`).
 */
export interface FilesContext {
  /** The contributing plugin (`files.skills`, `files.skills-claude`...). */
  readonly pluginId: string;
  /** The workspace root. */
  readonly workspace: string;
  /** amber's config directory. */
  readonly configDir: string;
  /** The host's one list of defined agents, which an agents plugin fills. */
  readonly agents?: AgentCatalog;
}

/** What a kind's builder makes of a folder's definitions. */
export interface BuiltContributions {
  /** The contributions. */
  readonly capabilities: readonly Capability[];
  /** Definitions left out, to report. */
  readonly problems?: readonly FileProblem[];
}

/** Makes a kind's contributions from its definitions; synchronous (see `Plugin.capabilities`). */
export type FilesBuilder<K extends DefinitionKind> = (
  items: readonly DefinitionOf[K][],
) => BuiltContributions;

/** A file a folder holds, before it is read. */
export interface ScannedFile {
  /** Its path. */
  readonly path: string;
  /** Its path below the folder, with `/` between names. */
  readonly relative: string;
  /** Its size in bytes. */
  readonly size: number;
}

/** A listing of a folder: its files, what could not be listed, and a fingerprint. */
export interface FolderScan {
  /** The markdown files the kind reads. */
  readonly files: readonly ScannedFile[];
  /** Folders that could not be listed (a symlink loop...). */
  readonly problems: readonly FileProblem[];
  /** Moves when a file is added, removed or changed (paths, sizes, modification times). */
  readonly fingerprint: string;
}

/** A file bigger than this is not read: a prompt template is a few kilobytes. */
export const MAX_DEFINITION_BYTES = 256 * 1024;
// How deep command namespaces go; also what stops a walk in a tree of symlinks.
const MAX_DEPTH = 8;
const COMMAND_NAME = /^[a-z0-9_-]+(?::[a-z0-9_-]+)*$/;

/**
 * Lists the files `dir` holds for `kind` (a missing folder holds none). Symlinks are followed;
 * one that leads back into a folder being walked is reported, not followed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scanFolder } from "./definitions.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/git`);
 * await Deno.writeTextFile(`${dir}/git/commit.md`, "Commit.");
 * await Deno.writeTextFile(`${dir}/notes.txt`, "not markdown");
 * assert.deepEqual(scanFolder("commands", dir).files.map((f) => f.relative), ["git/commit.md"]);
 * assert.deepEqual(scanFolder("commands", `${dir}/missing`).files, []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function scanFolder(kind: DefinitionKind, dir: string): FolderScan {
  const files: ScannedFile[] = [];
  const problems: FileProblem[] = [];
  const stamps: string[] = [];
  let top: Deno.FileInfo;
  try {
    top = Deno.statSync(dir);
  } catch {
    return { files, problems, fingerprint: "" };
  }
  if (!top.isDirectory) {
    problems.push({ path: dir, message: "is not a folder" });
    return { files, problems, fingerprint: `!${dir}` };
  }
  // The folders being walked, outermost first. Only a symlink can lead back into one of them, so
  // real paths are asked for (they cost a system call each) only when one is followed.
  const walking: string[] = [];
  const reals = new Map<string, string>();
  const realOf = (path: string): string => {
    let real = reals.get(path);
    if (real === undefined) reals.set(path, real = Deno.realPathSync(path));
    return real;
  };
  const loops = (folder: string): boolean => {
    try {
      const real = realOf(folder);
      return walking.some((above) => realOf(above) === real);
    } catch {
      return false;
    }
  };
  const walk = (folder: string, depth: number, linked: boolean): void => {
    if (linked && loops(folder)) {
      problems.push({
        path: folder,
        message: "is a symlink loop: it leads back to a folder above",
      });
      return;
    }
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(folder)].sort((a, b) => a.name < b.name ? -1 : 1);
    } catch (error) {
      problems.push({ path: folder, message: `cannot be listed: ${messageOf(error)}` });
      return;
    }
    walking.push(folder);
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue;
      const path = join(folder, entry.name);
      let info: Deno.FileInfo;
      try {
        info = entry.isSymlink ? Deno.statSync(path) : Deno.lstatSync(path);
      } catch (error) {
        problems.push({ path, message: `cannot be read: ${messageOf(error)}` });
        continue;
      }
      const below = relative(dir, path).split(sep).join("/");
      if (info.isDirectory) {
        if (kind === "commands" && depth < MAX_DEPTH) walk(path, depth + 1, entry.isSymlink);
        else if (kind === "skills" && depth === 0) {
          const skill = join(path, "SKILL.md");
          let found: Deno.FileInfo | undefined;
          try {
            found = Deno.statSync(skill);
          } catch {
            found = undefined;
          }
          if (found?.isFile) {
            files.push({ path: skill, relative: `${below}/SKILL.md`, size: found.size });
            stamps.push(`${below}/SKILL.md:${found.size}:${found.mtime?.getTime()}`);
          } else {
            problems.push({ path, message: "holds no SKILL.md, so it is not a skill" });
            stamps.push(`${below}/`);
          }
        }
        continue;
      }
      if (kind === "skills" || !info.isFile || !entry.name.endsWith(".md")) continue;
      files.push({ path, relative: below, size: info.size });
      stamps.push(`${below}:${info.size}:${info.mtime?.getTime()}`);
    }
    walking.pop();
  };
  walk(dir, 0, false);
  return { files, problems, fingerprint: `${dir}\n${stamps.join("\n")}` };
}

/**
 * Reads what `scan` listed: one definition per file, and a problem for each file that fails.
 */
export function readScanned<K extends DefinitionKind>(
  kind: K,
  scan: FolderScan,
  read: FrontmatterReader,
): LoadedFolder<DefinitionOf[K]> {
  const items: DefinitionOf[K][] = [];
  const problems: FileProblem[] = [...scan.problems];
  for (const file of scan.files) {
    if (file.size > MAX_DEFINITION_BYTES) {
      problems.push({
        path: file.path,
        message: `is ${file.size} bytes, over the ${MAX_DEFINITION_BYTES} a definition may have`,
      });
      continue;
    }
    try {
      const text = Deno.readTextFileSync(file.path);
      const item = definitionOf(kind, file, read(text, file.path));
      items.push(item as DefinitionOf[K]);
    } catch (error) {
      if (error instanceof FrontmatterError) {
        problems.push({ path: error.path, line: error.line, message: error.detail });
      } else if (error instanceof DefinitionError) {
        problems.push({
          path: file.path,
          ...(error.line !== undefined ? { line: error.line } : {}),
          message: error.message,
        });
      } else problems.push({ path: file.path, message: `cannot be read: ${messageOf(error)}` });
    }
  }
  items.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return { items, problems };
}

/**
 * Loads every definition of `kind` in `dir`: what loaded, and a problem with path and line for
 * each file that did not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadFolder } from "./definitions.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/review.md`, "---\ndescription: Review\n---\nReview $1\n");
 * await Deno.writeTextFile(`${dir}/broken.md`, "---\nmodel: x\ndescription: \"unclosed\n---\n");
 * const { items, problems } = await loadFolder("commands", dir);
 * assert.deepEqual(items.map((c) => [c.name, c.description]), [["review", "Review"]]);
 * assert.equal(problems[0].line, 3);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadFolder<K extends DefinitionKind>(
  kind: K,
  dir: string,
): Promise<LoadedFolder<DefinitionOf[K]>> {
  const scan = scanFolder(kind, dir);
  if (scan.files.length === 0) return { items: [], problems: scan.problems };
  return readScanned(kind, scan, await frontmatterReader());
}

/** A file whose fields are wrong; `line` is the field's line when known. */
class DefinitionError extends Error {
  readonly line?: number;
  constructor(message: string, line?: number) {
    super(message);
    this.name = "DefinitionError";
    if (line !== undefined) this.line = line;
  }
}

function definitionOf(
  kind: DefinitionKind,
  file: ScannedFile,
  parsed: Frontmatter,
): CommandFile | SkillFile | AgentFile {
  const fields = new Fields(parsed);
  if (kind === "commands") {
    const name = file.relative.slice(0, -".md".length).split("/").join(":").toLowerCase();
    if (!COMMAND_NAME.test(name)) {
      throw new DefinitionError(
        `'${name}' cannot be a command name: use a-z 0-9 _ - in file and folder names`,
      );
    }
    if (parsed.body.trim() === "") {
      throw new DefinitionError("is empty: a command needs a prompt to send", parsed.bodyLine);
    }
    return {
      name,
      ...fields.text("description", "description"),
      ...fields.text("argument-hint", "argumentHint"),
      ...fields.text("model", "model"),
      ...fields.list("allowed-tools", "allowedTools"),
      body: parsed.body,
      path: file.path,
    };
  }
  if (kind === "skills") {
    const folder = file.relative.split("/")[0];
    const name = fields.text("name", "name").name ?? folder;
    const description = fields.required("description");
    return {
      name,
      description,
      ...fields.list("allowed-tools", "allowedTools"),
      body: parsed.body,
      dir: file.path.slice(0, -"/SKILL.md".length),
      path: file.path,
    };
  }
  const name = fields.text("name", "name").name ?? basename(file.path, ".md");
  return {
    name,
    description: fields.required("description"),
    ...fields.list("tools", "tools"),
    ...fields.text("model", "model"),
    systemPrompt: parsed.body.trim(),
    path: file.path,
  };
}

/** The longest `description` a skill or an agent may have (Claude Code's bound too). */
export const MAX_DESCRIPTION_CHARS = 1024;

// The frontmatter's fields, checked one by one; a wrong one is an error naming its line.
class Fields {
  readonly #parsed: Frontmatter;
  constructor(parsed: Frontmatter) {
    this.#parsed = parsed;
  }

  text<N extends string>(key: string, as: N): { [P in N]?: string } {
    const value = this.#parsed.data[key];
    if (value === undefined || value === null) return {};
    if (typeof value === "number" || typeof value === "boolean") {
      return { [as]: String(value) } as { [P in N]?: string };
    }
    if (typeof value !== "string") throw this.#wrong(key, value, "text");
    return { [as]: value.trim() } as { [P in N]?: string };
  }

  required(key: string): string {
    const value = this.text(key, "value").value;
    if (value === undefined || value === "") {
      throw new DefinitionError(`has no \`${key}\` in its frontmatter`, 1);
    }
    // A skill's or an agent's description goes into every request (the prompt, the task tool),
    // and the file may come from any repository that is opened.
    if (value.length > MAX_DESCRIPTION_CHARS) {
      throw new DefinitionError(
        `\`${key}\` has ${value.length} characters; at most ${MAX_DESCRIPTION_CHARS} are allowed`,
        this.#parsed.lines[key],
      );
    }
    return value;
  }

  list<N extends string>(key: string, as: N): { [P in N]?: readonly string[] } {
    const value = this.#parsed.data[key];
    if (value === undefined || value === null) return {};
    let items: unknown[];
    if (typeof value === "string") items = splitList(value);
    else if (Array.isArray(value)) items = value;
    else throw this.#wrong(key, value, "a list or a comma-separated line");
    if (!items.every((item) => typeof item === "string")) {
      throw this.#wrong(key, value, "a list of names");
    }
    const names = (items as string[]).map((item) => item.trim()).filter((item) => item !== "");
    return { [as]: names } as unknown as { [P in N]?: readonly string[] };
  }

  #wrong(key: string, value: unknown, expected: string): DefinitionError {
    const found = Array.isArray(value) ? "a list" : value === null ? "null" : typeof value;
    return new DefinitionError(
      `\`${key}\` must be ${expected}, not ${found}`,
      this.#parsed.lines[key],
    );
  }
}

// `Read, Bash(git add:*), Grep`: commas inside parentheses belong to the entry.
function splitList(line: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of line) {
    if (char === "(") depth++;
    if (char === ")") depth = Math.max(0, depth - 1);
    if (char === "," && depth === 0) {
      items.push(current);
      current = "";
    } else current += char;
  }
  items.push(current);
  return items;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
