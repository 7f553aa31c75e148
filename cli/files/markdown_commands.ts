/**
 * Markdown commands: each {@linkcode CommandFile} becomes a command root (`/review`,
 * `/git:commit`) whose handler expands the file's template and answers with it as the prompt the
 * front end sends to the model, as the user's message. The template:
 *
 * - `$ARGUMENTS` is the whole argument line; `$1`, `$2`... its words (`"two words"` is one).
 * - `@path` includes a workspace file (or lists a folder); a path that leads outside the
 *   workspace, through `..` or a symlink, fails the command. One that names nothing stays text.
 * - `` !`cmd` `` runs `cmd` in the workspace, once {@linkcode CommandTemplateHost.approve} allows
 *   it (amber's permission rules and approval policy), and is replaced by its output.
 *
 * The file's `model` and `allowed-tools` go with the prompt (its `turn`): the turn it starts is
 * answered by that model and may call only those tools; the next turn runs as before.
 *
 * @module
 */

import { isAbsolute, relative, resolve, sep } from "node:path";
import type { Capability, CommandCapability, CommandTurn } from "@amber/core";
import type { CommandFile, FileProblem } from "./definitions.ts";
import { readTextPrefix } from "./text_prefix.ts";

/** What expanding a template needs of the host. */
export interface CommandTemplateHost {
  /** The workspace root: `@path` is resolved in it and `!` commands run in it. */
  readonly workspace: string;
  /**
   * Undefined when `command` may run, else why not. The host answers as for the `bash` tool:
   * the permission rules, then the approval policy, asking the user when there is one to ask.
   */
  approve(command: string, from: string): Promise<string | undefined>;
  /** Runs an approved `command` in the workspace; resolves with what it printed. */
  run(command: string): Promise<string>;
}

/** A template that cannot be expanded (an `@path` outside the workspace, a refused command). */
export class CommandTemplateError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CommandTemplateError";
  }
}

/** An included file bigger than this is cut, with a note. */
export const MAX_INCLUDED_CHARS = 100_000;

/**
 * Splits an argument line into words; double or single quotes keep spaces inside one word.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { argumentWords } from "./markdown_commands.ts";
 * assert.deepEqual(argumentWords(`src "two words" 'x y'`), ["src", "two words", "x y"]);
 * assert.deepEqual(argumentWords("   "), []);
 * ```
 */
export function argumentWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3]);
  return words;
}

/**
 * Puts the arguments into a template: `$ARGUMENTS` and `$1`... (a missing word is empty).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { substituteArguments } from "./markdown_commands.ts";
 * assert.equal(substituteArguments("Fix #$1 ($2): $ARGUMENTS", "42 high"), "Fix #42 (high): 42 high");
 * assert.equal(substituteArguments("Review $1.", ""), "Review .");
 * ```
 */
export function substituteArguments(template: string, line: string): string {
  const words = argumentWords(line);
  return template.replace(/\$ARGUMENTS|\$(\d+)/g, (match, index?: string) => {
    if (index === undefined) return line;
    const n = Number(index);
    return n >= 1 ? words[n - 1] ?? "" : match;
  });
}

/**
 * Expands `template` with the argument line `line`: arguments first, then `` !`cmd` ``, then
 * `@path`. `from` names the command in questions and errors.
 *
 * @throws {CommandTemplateError} for an `@path` outside the workspace or a refused command.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { expandTemplate } from "./markdown_commands.ts";
 * const workspace = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${workspace}/notes.md`, "ship it");
 * const host = {
 *   workspace,
 *   approve: (command: string) => Promise.resolve(command === "date" ? undefined : "denied"),
 *   run: () => Promise.resolve("Monday\n"),
 * };
 * const text = await expandTemplate("Read @$1. Today: !`date`", "notes.md", host, "/x");
 * assert.match(text, /<file path="notes.md">\nship it\n<\/file>/);
 * assert.match(text, /Today: Monday/);
 * await assert.rejects(expandTemplate("@../../etc/passwd", "", host, "/x"), /outside the workspace/);
 * await assert.rejects(expandTemplate("!`rm -rf x`", "", host, "/x"), /denied/);
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export async function expandTemplate(
  template: string,
  line: string,
  host: CommandTemplateHost,
  from: string,
): Promise<string> {
  let text = substituteArguments(template, line);
  const commands = [...text.matchAll(/!`([^`\n]+)`/g)];
  if (commands.length > 0) {
    const outputs: string[] = [];
    // One at a time, in order: each is asked about, and a refusal stops the rest.
    for (const [, command] of commands) {
      const refused = await host.approve(command.trim(), from);
      if (refused !== undefined) {
        throw new CommandTemplateError(`${from}: \`${command.trim()}\` was not run: ${refused}`);
      }
      outputs.push((await host.run(command.trim())).replace(/\n+$/, ""));
    }
    let i = 0;
    text = text.replace(/!`([^`\n]+)`/g, () => outputs[i++]);
  }
  return await includeFiles(text, host.workspace, from);
}

// `@path` at the start of a line or after a space; what follows up to a space or a closing mark.
const MENTION = /(^|[\s(])@([^\s`'"()<>]+)/g;

async function includeFiles(text: string, workspace: string, from: string): Promise<string> {
  const mentions = [...text.matchAll(MENTION)];
  if (mentions.length === 0) return text;
  let root: string;
  try {
    root = await Deno.realPath(workspace);
  } catch {
    root = resolve(workspace);
  }
  const included = new Map<string, string | undefined>();
  for (const match of mentions) {
    const written = match[2].replace(/[.,;:!?]+$/, "");
    if (included.has(written)) continue;
    included.set(written, await includeOne(written, root, from));
  }
  return text.replace(MENTION, (whole, before: string, path: string) => {
    const written = path.replace(/[.,;:!?]+$/, "");
    const content = included.get(written);
    return content === undefined ? whole : `${before}${content}${path.slice(written.length)}`;
  });
}

// Undefined when `written` names nothing (the text stays as it is).
async function includeOne(
  written: string,
  root: string,
  from: string,
): Promise<string | undefined> {
  const outside = () =>
    new CommandTemplateError(
      `${from}: @${written} is outside the workspace; only workspace files are included`,
    );
  if (isAbsolute(written) && !inside(root, resolve(written))) throw outside();
  const lexical = resolve(root, written);
  if (!inside(root, lexical)) throw outside();
  let real: string;
  try {
    real = await Deno.realPath(lexical);
  } catch {
    return undefined;
  }
  if (!inside(root, real)) throw outside();
  const shown = relative(root, lexical).split(sep).join("/") || ".";
  const info = await Deno.stat(real);
  if (info.isDirectory) {
    const names: string[] = [];
    for await (const entry of Deno.readDir(real)) {
      names.push(entry.isDirectory ? `${entry.name}/` : entry.name);
    }
    names.sort();
    return `<folder path="${shown}">\n${names.join("\n")}\n</folder>`;
  }
  if (!info.isFile) return undefined;
  const read = await readTextPrefix(real, MAX_INCLUDED_CHARS);
  const content = read.cut
    ? `${read.text}\n[cut at ${MAX_INCLUDED_CHARS} chars of ${read.bytes} bytes]`
    : read.text;
  return `<file path="${shown}">\n${content.replace(/\n$/, "")}\n</file>`;
}

function inside(root: string, path: string): boolean {
  const below = relative(root, path);
  return below === "" || (!below.startsWith("..") && !isAbsolute(below));
}

/** Options of {@linkcode commandCapabilities}. */
export interface MarkdownCommandOptions {
  /** The host a handler expands its template with. */
  readonly host: CommandTemplateHost;
  /** The command roots others hold now: a file naming one is left out, reported. */
  readonly taken: (root: string) => string | undefined;
}

/** What {@linkcode commandCapabilities} made, and the files it left out. */
export interface MarkdownCommands {
  /** One command capability per file. */
  readonly capabilities: readonly Capability[];
  /** Files whose command name another plugin (or amber itself) already has. */
  readonly problems: readonly FileProblem[];
}

/**
 * One command root per file. The root's help is the `description` (else the file's first line)
 * followed by the usage with the `argument-hint` (`Review code: /review [path]`), as the drawer
 * shows it, and its manual starts with that usage. A name another plugin or amber already has stays theirs: the file is reported.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandCapabilities } from "./markdown_commands.ts";
 * const host = {
 *   workspace: ".",
 *   approve: () => Promise.resolve("no"),
 *   run: () => Promise.resolve(""),
 * };
 * const made = commandCapabilities([
 *   { name: "review", description: "Review code", argumentHint: "[path]", body: "Review $1", path: "review.md" },
 *   { name: "help", body: "Mine", path: "help.md" },
 * ], { host, taken: (root) => root === "help" ? "core" : undefined });
 * const [review] = made.capabilities;
 * assert.equal(review.kind === "command" && review.help, "Review code: /review [path]");
 * assert.deepEqual(await (review as { handlers: Record<string, (a: string) => unknown> }).handlers[""]("src"), { prompt: "Review src" });
 * assert.match(made.problems[0].message, /\/help is taken by core, which wins/);
 * ```
 */
export function commandCapabilities(
  commands: readonly CommandFile[],
  options: MarkdownCommandOptions,
): MarkdownCommands {
  const capabilities: CommandCapability[] = [];
  const problems: FileProblem[] = [];
  for (const command of commands) {
    const holder = options.taken(command.name);
    if (holder !== undefined) {
      problems.push({
        path: command.path,
        message: `/${command.name} is taken by ${holder}, which wins: rename the file to use it`,
      });
      continue;
    }
    const line = `/${command.name}`;
    const usage = command.argumentHint
      ? `Usage: ${line} ${command.argumentHint}`
      : `Usage: ${line}`;
    const notes = [
      usage,
      ...(command.model ? [`model: ${command.model} (for the turn it starts)`] : []),
      ...(command.allowedTools
        ? [`allowed-tools: ${command.allowedTools.join(", ")} (the turn may call only these)`]
        : []),
      `from ${command.path}`,
    ];
    const turn = commandTurn(command);
    const description = command.description || firstLine(command.body);
    capabilities.push({
      kind: "command",
      name: command.name,
      root: command.name,
      // As amber's own commands put their usage after their help, so the drawer shows both.
      help: command.argumentHint ? `${description}: ${line} ${command.argumentHint}` : description,
      man: notes.join("\n"),
      subtree: {},
      handlers: {
        "": async (arg) => {
          try {
            const prompt = await expandTemplate(command.body, arg, options.host, line);
            return turn === undefined ? { prompt } : { prompt, turn };
          } catch (error) {
            // A refusal is the user's (or the rules') answer, not a fault of the plugin: it is
            // told, and nothing goes to the model.
            if (error instanceof CommandTemplateError) return { text: error.message };
            throw error;
          }
        },
      },
    });
  }
  return { capabilities, problems };
}

// What the turn the command's prompt starts runs with; undefined when it changes nothing.
function commandTurn(command: CommandFile): CommandTurn | undefined {
  const model = command.model?.trim();
  const tools = command.allowedTools;
  if ((model === undefined || model === "") && tools === undefined) return undefined;
  return {
    from: `/${command.name} (${command.path})`,
    ...(model === undefined || model === "" ? {} : { model }),
    ...(tools === undefined ? {} : { allowedTools: tools }),
  };
}

function firstLine(body: string): string {
  const line = body.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/**
 * A {@linkcode CommandTemplateHost.run}: `sh -c command` in `workspace` with `env`, stdout and
 * stderr together, cut at {@linkcode MAX_INCLUDED_CHARS}, stopped after `timeoutMs`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runShell } from "./markdown_commands.ts";
 * const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
 * assert.equal(await runShell("echo hi; exit 3", Deno.cwd(), env, 5_000), "hi\n\n[exit code 3]");
 * ```
 */
export async function runShell(
  command: string,
  workspace: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<string> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const child = new Deno.Command("sh", {
    args: ["-c", command],
    cwd: workspace,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: deadline,
  }).spawn();
  const limit = MAX_INCLUDED_CHARS * 4;
  const [stdout, stderr] = await Promise.all([
    keep(child.stdout, limit, deadline),
    keep(child.stderr, limit, deadline),
  ]);
  const stopped = stdout.full || stderr.full;
  if (stopped) {
    try {
      child.kill();
    } catch {
      // It ended already.
    }
  }
  const { code } = await child.status;
  const decoder = new TextDecoder();
  let text = decoder.decode(stdout.bytes) + decoder.decode(stderr.bytes);
  if (text.length > MAX_INCLUDED_CHARS) text = `${text.slice(0, MAX_INCLUDED_CHARS)}\n[cut]`;
  return code === 0 || stopped ? text : `${text}\n[exit code ${code}]`;
}

// Up to `limit` bytes of `stream`, read as they come; the rest is not read (`yes` would fill
// memory until the deadline), nor waited for past the deadline (a background job of the command,
// `sleep 60 &`, holds the pipe open after the shell ends).
async function keep(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  deadline: AbortSignal,
): Promise<{ bytes: Uint8Array; full: boolean }> {
  const reader = stream.getReader();
  const stop = () => void reader.cancel().catch(() => {});
  if (deadline.aborted) stop();
  deadline.addEventListener("abort", stop, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    deadline.removeEventListener("abort", stop);
  }
  const full = size >= limit;
  if (full) stop();
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return { bytes: bytes.subarray(0, limit), full };
}
