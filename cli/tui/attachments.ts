/**
 * Files attached to a prompt with `@path`: on submit, each `@path` word that names a regular
 * file inside the workspace adds the file's text to the prompt the model gets, after what was
 * typed, one `<attached_file>` section per file. A file is cut past a size cap, and the section
 * says so; a binary file, or one outside the workspace (judged by its real path: a symlink that
 * points out counts as outside), is not attached and the note says why. However big a file,
 * only its head is kept in memory. Keys the session knows of are redacted from a file's text,
 * as from what tools return.
 * `@server:uri` words that name no file are left to the MCP attachment hook.
 *
 * @module
 */

import { isAbsolute, relative, resolve, sep as SEPARATOR } from "node:path";

/** What attaching did to one `@path`: shown in the transcript under the prompt. */
export interface AttachmentNote {
  /** The path as typed after `@`. */
  readonly path: string;
  /** `attached notes.md (12 lines)`, or why it was cut or left out. */
  readonly note: string;
  /** Whether its content went into the prompt. */
  readonly attached: boolean;
}

/** The prompt the model gets, and a note per mentioned file. */
export interface AttachedPrompt {
  /** The typed prompt followed by the attached files' sections. */
  readonly prompt: string;
  /** One per distinct `@path` that names a file, in order of mention. */
  readonly notes: readonly AttachmentNote[];
}

/** Caps of {@linkcode attachFiles}. */
export interface AttachOptions {
  /** At most this many bytes of one file (64 KiB by default). */
  readonly maxFileBytes?: number;
  /** At most this many bytes of all files together (256 KiB by default). */
  readonly maxTotalBytes?: number;
  /** Applied to each file's text before it goes into the prompt (the session's key redaction). */
  readonly redact?: (text: string) => string;
}

// `@` at the start or after a blank, the path running to the next blank, less a final `.`,
// `,`, `)`, `:` and the like (so "see @notes.md." names `notes.md`).
const FILE_MENTION = /(?<=^|[\s(\["'])@(\S*[^\s.,;:!?)\]}'"`>])/g;

/**
 * The `@path` words of `text`, in order, each once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fileMentions } from "./attachments.ts";
 * assert.deepEqual(fileMentions("compare @a.ts with @src/b.ts, and @a.ts. mail me@x.io"), [
 *   "a.ts",
 *   "src/b.ts",
 * ]);
 * ```
 */
export function fileMentions(text: string): string[] {
  return [...new Set([...text.matchAll(FILE_MENTION)].map((match) => match[1]))];
}

/**
 * `prompt` with the workspace files it mentions attached. Words that name no file (an MCP
 * mention, an e-mail address, a typo) are left alone and get no note.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { attachFiles } from "./attachments.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${root}/notes.md`, "one\ntwo\n");
 * const { prompt, notes } = await attachFiles("summarise @notes.md and @docs:x://y", root);
 * assert.equal(
 *   prompt,
 *   'summarise @notes.md and @docs:x://y\n\n<attached_file path="notes.md">\none\ntwo\n</attached_file>',
 * );
 * assert.deepEqual(notes.map((n) => n.note), ["attached notes.md (2 lines)"]);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function attachFiles(
  prompt: string,
  root: string,
  options: AttachOptions = {},
): Promise<AttachedPrompt> {
  const maxFile = options.maxFileBytes ?? 64 * 1024;
  let budget = options.maxTotalBytes ?? 256 * 1024;
  const sections: string[] = [];
  const notes: AttachmentNote[] = [];
  const base = resolve(root);
  // Judged again by real paths: a symlink in the workspace may point anywhere (`~/.ssh`).
  const realBase = await Deno.realPath(base).catch(() => base);
  for (const path of fileMentions(prompt)) {
    const full = resolve(base, path);
    const rel = relative(base, full);
    const outside = {
      path,
      note: `not attached: ${path} is outside the workspace`,
      attached: false,
    };
    if (!within(base, full)) {
      if (await isFile(full)) notes.push(outside);
      continue;
    }
    const real = await Deno.realPath(full).catch(() => undefined);
    if (real === undefined || !(await isFile(real))) continue;
    if (!within(realBase, real)) {
      notes.push(outside);
      continue;
    }
    const cap = Math.min(maxFile, budget);
    let read: Head;
    try {
      read = await readHead(real, Math.max(cap, BINARY_PROBE));
    } catch (error) {
      notes.push({
        path,
        note: `not attached: ${path}: ${error instanceof Error ? error.message : String(error)}`,
        attached: false,
      });
      continue;
    }
    const { head, size, lines } = read;
    if (head.subarray(0, BINARY_PROBE).includes(0)) {
      notes.push({ path, note: `not attached: ${path} is a binary file`, attached: false });
      continue;
    }
    const cut = size > cap;
    // Cut at a line break, so the model never sees half a line or half a character; only a
    // file whose first line alone passes the file cap is cut inside it. What is left of the
    // total cap, if it holds no whole line, attaches nothing.
    let text = new TextDecoder().decode(head.subarray(0, Math.min(size, cap)));
    if (cut) {
      text = text.replace(/\uFFFD$/, "");
      const lineEnd = text.lastIndexOf("\n") + 1;
      text = lineEnd > 0 || cap < maxFile ? text.slice(0, lineEnd) : text;
      if (text === "") {
        notes.push({
          path,
          note: `not attached: ${path} (no room left under the attachments' cap)`,
          attached: false,
        });
        continue;
      }
    }
    budget -= new TextEncoder().encode(text).length;
    const kept = countLines(text);
    const shown = rel.split(SEPARATOR).join("/");
    const note = cut
      ? `attached ${shown} (${plural(lines, "line")}, cut to the first ${kept}: ${kib(cap)} cap)`
      : `attached ${shown} (${plural(lines, "line")})`;
    const clean = options.redact?.(text) ?? text;
    const body = clean.endsWith("\n") || clean === "" ? clean : `${clean}\n`;
    const tail = cut ? `[cut: the first ${kept} of ${plural(lines, "line")}]\n` : "";
    sections.push(`<attached_file path="${shown}">\n${body}${tail}</attached_file>`);
    notes.push({ path, note, attached: true });
  }
  if (sections.length === 0) return { prompt, notes };
  return { prompt: `${prompt}\n\n${sections.join("\n\n")}`, notes };
}

// Whether `path` lies below `base` (both absolute; `base` itself is a folder, not a file).
function within(base: string, path: string): boolean {
  const rel = relative(base, path);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${SEPARATOR}`) && !isAbsolute(rel);
}

const LF = 0x0a;

// A NUL in the first this many bytes makes a file binary.
const BINARY_PROBE = 8192;

// The start of a file, with its size and line count.
interface Head {
  readonly head: Uint8Array;
  readonly size: number;
  readonly lines: number;
}

// The first `keep` bytes of the file at `path`, and its size and lines counted in a pass over
// the rest: a huge file costs the time to read it, never its size in memory.
async function readHead(path: string, keep: number): Promise<Head> {
  using file = await Deno.open(path);
  const head = new Uint8Array(keep);
  const chunk = new Uint8Array(64 * 1024);
  let size = 0;
  let newlines = 0;
  let last = 0;
  for (let n = await file.read(chunk); n !== null; n = await file.read(chunk)) {
    if (n === 0) continue;
    const data = chunk.subarray(0, n);
    if (size < keep) head.set(data.subarray(0, keep - size), size);
    for (let at = data.indexOf(LF); at >= 0; at = data.indexOf(LF, at + 1)) newlines++;
    last = data[n - 1];
    size += n;
  }
  const lines = size === 0 ? 0 : newlines + (last === LF ? 0 : 1);
  return { head: head.subarray(0, Math.min(size, keep)), size, lines };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

function countLines(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function kib(bytes: number): string {
  return `${Math.round(bytes / 1024)} KiB`;
}

/** A user message split into the prompt as typed and notes of the files attached to it. */
export interface TypedPrompt {
  /** The prompt as typed. */
  readonly prompt: string;
  /** `attached notes.md (2 lines)` per attached file, as the transcript said when it was sent. */
  readonly notes: readonly string[];
}

// The sections `attachFiles` appends, all of them up to the end of the message.
const SECTIONS = /^(?:\n\n<attached_file path="[^"\n]*">\n[\s\S]*?<\/attached_file>)+$/;
const SECTION = /<attached_file path="([^"\n]*)">\n([\s\S]*?)<\/attached_file>/g;

/**
 * A user message as {@linkcode attachFiles} made it, split back into the prompt as typed and a
 * note per attached file: what a transcript shows when it replays a session. A message without
 * attachments is its own prompt, with no notes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { attachFiles, typedPrompt } from "./attachments.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${root}/notes.md`, "one\ntwo\n");
 * const sent = await attachFiles("summarise @notes.md", root);
 * assert.deepEqual(typedPrompt(sent.prompt), {
 *   prompt: "summarise @notes.md",
 *   notes: ["attached notes.md (2 lines)"],
 * });
 * assert.deepEqual(typedPrompt("just text"), { prompt: "just text", notes: [] });
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export function typedPrompt(content: string): TypedPrompt {
  const marker = '\n\n<attached_file path="';
  for (let at = content.indexOf(marker); at >= 0; at = content.indexOf(marker, at + 1)) {
    const rest = content.slice(at);
    if (!SECTIONS.test(rest)) continue;
    const notes = [...rest.matchAll(SECTION)].map(([, path, body]) => {
      const cut = /\[cut: the first (\d+) of (\d+) lines?\]\n$/.exec(body);
      return cut === null
        ? `attached ${path} (${plural(countLines(body), "line")})`
        : `attached ${path} (${plural(Number(cut[2]), "line")}, cut to the first ${cut[1]})`;
    });
    return { prompt: content.slice(0, at), notes };
  }
  return { prompt: content, notes: [] };
}
