/**
 * Session transcripts: `sessions/<id>.jsonl` in the config directory, append-only. The first line
 * describes the session; every further line is one committed step, written before the next step
 * starts, so a killed process loses at most the step in flight. A torn last line is detected,
 * reported and set aside, never corrupting what came before.
 *
 * @module
 */

import { join } from "node:path";
import { AmberError } from "../errors.ts";
import type { StateCommand } from "../hooks.ts";
import type { CompactionReason } from "../compaction.ts";
import type { Message } from "../message.ts";
import type { TokenUsage } from "../usage.ts";

/** The first line of a session file. */
export interface SessionHeader {
  /** The record type. */
  readonly type: "session";
  /** The session id (also the file name). */
  readonly id: string;
  /** When it was created, ISO 8601. */
  readonly created: string;
  /** The workspace it ran in. */
  readonly workspace: string;
  /** The provider preset. */
  readonly provider?: string;
  /** The model. */
  readonly model?: string;
  /** The run's first prompt, clipped: what `amber sessions` shows. */
  readonly title?: string;
}

/** One committed step. */
export interface StepRecord {
  /** The record type. */
  readonly type: "step";
  /** The step's number within the session, from 0. */
  readonly step: number;
  /** When it was committed, ISO 8601. */
  readonly at: string;
  /** The messages the step added to the conversation, in order. */
  readonly messages: readonly Message[];
  /** State commands the step applied. */
  readonly state?: readonly StateCommand[];
  /** Token counts of the step's model call. */
  readonly usage?: TokenUsage;
  /** The step's cost in dollars, when the model's prices were known. */
  readonly cost?: number;
  /** How the run ended, on its last step. */
  readonly end?: string;
}

/**
 * A compaction: from this record on, the conversation is `messages` (which replace every
 * message before it); the steps before stay in the file, the full history.
 */
export interface CompactionRecord {
  /** The record type. */
  readonly type: "compaction";
  /** The number of the step it happened before. */
  readonly step: number;
  /** When it was written, ISO 8601. */
  readonly at: string;
  /** Why it ran. */
  readonly reason: CompactionReason;
  /** Who made it. */
  readonly strategy: string;
  /** The estimated tokens before and after. */
  readonly tokensBefore: number;
  /** The estimated tokens after. */
  readonly tokensAfter: number;
  /** The compacted conversation. */
  readonly messages: readonly Message[];
  /** What the summary's model calls used, when there were any. */
  readonly usage?: TokenUsage;
  /** What they cost in dollars, when the model's prices were known. */
  readonly cost?: number;
}

/** A session read back from disk. */
export interface LoadedSession {
  /** Its header. */
  readonly header: SessionHeader;
  /** Its committed steps, in order. */
  readonly steps: readonly StepRecord[];
  /**
   * The conversation to continue from: the last compaction's messages, then the messages of
   * every step after it (every step's messages, in order, when it was never compacted).
   */
  readonly messages: readonly Message[];
  /** Its compactions, in order; the steps they replaced stay in `steps`. */
  readonly compactions: readonly CompactionRecord[];
  /** A last line that was cut off mid-write (the step in flight when the process died). */
  readonly torn?: { readonly line: number; readonly text: string };
}

/** A session file that cannot be used; names the file and the line. */
export class TranscriptError extends AmberError {
  /** The file. */
  readonly path: string;
  /** The 1-based line, or 0 for the whole file. */
  readonly line: number;
  /** Creates the error. */
  constructor(path: string, line: number, detail: string, options?: ErrorOptions) {
    super(`${path}${line > 0 ? `:${line}` : ""}: ${detail}`, options);
    this.name = "TranscriptError";
    this.path = path;
    this.line = line;
  }
}

const ID_PATTERN = /^[A-Za-z0-9_-]+$/;

/**
 * Parses the text of a session file. A last line without its newline that is not valid JSON is
 * returned as `torn`; any other bad line is a {@linkcode TranscriptError} naming it. Consecutive
 * records of one step number are one step (the kernel writes a run's prompt before its first
 * model call, and the rest of that step at its commit). A compaction record replaces the
 * conversation to continue from (`messages`) with its own; the steps before it stay in `steps`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSession } from "@amber/core/kernel";
 * const text = '{"type":"session","id":"s1","created":"2026-11-30T00:00:00Z","workspace":"/w"}\n' +
 *   '{"type":"step","step":0,"at":"2026-11-30T00:00:01Z","messages":[{"role":"user","content":"hi"}]}\n' +
 *   '{"type":"step","step":1,"at":';
 * const session = parseSession(text, "s1.jsonl");
 * assert.equal(session.steps.length, 1);
 * assert.equal(session.torn?.line, 3);
 * ```
 */
export function parseSession(text: string, path: string): LoadedSession {
  const lines = text.split("\n");
  const complete = text.endsWith("\n");
  // split leaves "" after a final newline; a final fragment is the line in flight.
  const last = lines.pop() ?? "";
  let torn: { line: number; text: string } | undefined;
  if (!complete && last !== "") {
    try {
      // A whole record that only lacks its newline still counts.
      JSON.parse(last);
      lines.push(last);
    } catch {
      torn = { line: lines.length + 1, text: last };
    }
  }
  if (lines.length === 0) throw new TranscriptError(path, 0, "the session file is empty");
  let header: SessionHeader;
  try {
    header = JSON.parse(lines[0]);
  } catch (error) {
    throw new TranscriptError(path, 1, "the header is not JSON", { cause: error });
  }
  if (header?.type !== "session" || typeof header.id !== "string") {
    throw new TranscriptError(path, 1, "the first line is not a session header");
  }
  const steps: StepRecord[] = [];
  const compactions: CompactionRecord[] = [];
  let messages: Message[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (lines[i] === "") continue;
    let record: StepRecord | CompactionRecord;
    try {
      record = JSON.parse(lines[i]);
    } catch (error) {
      throw new TranscriptError(path, i + 1, "the line is not JSON", { cause: error });
    }
    if (record?.type === "compaction" && Array.isArray(record.messages)) {
      // From here on the conversation is the compacted one; the steps stay, the full history.
      compactions.push(record);
      messages = [...record.messages];
      continue;
    }
    if (record?.type !== "step" || !Array.isArray(record.messages)) {
      throw new TranscriptError(path, i + 1, "the line is not a step or compaction record");
    }
    // A compaction between the two parts of one step (before its model call) leaves it one step.
    const last = steps.at(-1);
    if (last !== undefined && last.step === record.step) {
      steps[steps.length - 1] = merge(last, record);
    } else steps.push(record);
    for (const message of record.messages) messages.push(message);
  }
  return torn === undefined
    ? { header, steps, messages, compactions }
    : { header, steps, messages, compactions, torn };
}

// One step written in two parts (its prompt before the model call, the rest at its commit) is
// one step: the messages and state of both, the later part's time, usage and end.
function merge(first: StepRecord, second: StepRecord): StepRecord {
  const state = [...(first.state ?? []), ...(second.state ?? [])];
  return {
    ...first,
    ...second,
    messages: [...first.messages, ...second.messages],
    ...(state.length > 0 ? { state } : {}),
  };
}

/**
 * A new session id: the time it was made, then a random suffix, so ids sort by age.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newSessionId } from "@amber/core/kernel";
 * assert.match(newSessionId(new Date()), /^\d{8}-\d{6}-[0-9a-f]{6}$/);
 * ```
 */
export function newSessionId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const random = crypto.getRandomValues(new Uint8Array(3));
  return `${stamp}-${[...random].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * An open session file. Each {@linkcode SessionFile.append} is one write of one whole line
 * through an append-only handle, done before the kernel starts the next step.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionFile } from "@amber/core/kernel";
 * const dir = await Deno.makeTempDir();
 * const file = await SessionFile.create(dir, { id: "demo", workspace: "/w" });
 * await file.append({ step: 0, messages: [{ role: "user", content: "hi" }] });
 * file.close();
 * const loaded = await SessionFile.load(dir, "demo");
 * assert.equal(loaded.messages.length, 1);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class SessionFile {
  /** The file's path. */
  readonly path: string;
  /** The session id. */
  readonly id: string;
  #file: Deno.FsFile;
  #encoder = new TextEncoder();
  #secrets: readonly string[];

  private constructor(path: string, id: string, file: Deno.FsFile, secrets: readonly string[]) {
    this.path = path;
    this.id = id;
    this.#file = file;
    // Longest first, so a key that contains another leaves nothing of itself behind.
    this.#secrets = secrets.filter((secret) => secret.length >= 4)
      .sort((a, b) => b.length - a.length);
  }

  /** The path of session `id` under a config directory. */
  static pathOf(configDir: string, id: string): string {
    if (!ID_PATTERN.test(id)) throw new TranscriptError(id, 0, "not a session id");
    return join(configDir, "sessions", `${id}.jsonl`);
  }

  /**
   * Creates `sessions/<id>.jsonl` and writes its header. `secrets` (API keys) are replaced by
   * `[redacted]` wherever they would appear in anything written.
   */
  static async create(
    configDir: string,
    header: Omit<SessionHeader, "type" | "created"> & { readonly created?: string },
    secrets: readonly string[] = [],
  ): Promise<SessionFile> {
    const path = SessionFile.pathOf(configDir, header.id);
    await Deno.mkdir(join(configDir, "sessions"), { recursive: true });
    const file = await Deno.open(path, { createNew: true, write: true, append: true });
    const session = new SessionFile(path, header.id, file, secrets);
    await session.#write({ type: "session", created: new Date().toISOString(), ...header });
    return session;
  }

  /** Reads session `id`. A torn last line is reported in `torn`, the rest returned intact. */
  static async load(configDir: string, id: string): Promise<LoadedSession> {
    const path = SessionFile.pathOf(configDir, id);
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new TranscriptError(path, 0, `there is no session '${id}'`, { cause: error });
      }
      throw new TranscriptError(path, 0, `cannot read: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return parseSession(text, path);
  }

  /**
   * Opens session `id` to continue it. A torn last line is first moved to
   * `<id>.jsonl.torn-<time>` (nothing is lost) and cut from the file, so new steps follow the
   * last whole one.
   */
  static async resume(
    configDir: string,
    id: string,
    secrets: readonly string[] = [],
  ): Promise<
    { readonly file: SessionFile; readonly session: LoadedSession; readonly tornTo?: string }
  > {
    const session = await SessionFile.load(configDir, id);
    const path = SessionFile.pathOf(configDir, id);
    let tornTo: string | undefined;
    if (session.torn !== undefined) {
      tornTo = `${path}.torn-${new Date().toISOString().replaceAll(":", "-")}`;
      await Deno.writeTextFile(tornTo, session.torn.text);
      const text = await Deno.readTextFile(path);
      const keep = new TextEncoder().encode(text.slice(0, text.length - session.torn.text.length));
      await Deno.truncate(path, keep.byteLength);
    }
    const file = await Deno.open(path, { write: true, append: true });
    return { file: new SessionFile(path, id, file, secrets), session, tornTo };
  }

  /** Appends one committed step; resolves once the line is written. */
  append(step: Omit<StepRecord, "type" | "at"> & { readonly at?: string }): Promise<void> {
    return this.#write({ type: "step", at: new Date().toISOString(), ...step });
  }

  /**
   * Appends a compaction: a resumed session continues from its messages. Resolves once the
   * line is written.
   */
  appendCompaction(
    compaction: Omit<CompactionRecord, "type" | "at"> & { readonly at?: string },
  ): Promise<void> {
    return this.#write({ type: "compaction", at: new Date().toISOString(), ...compaction });
  }

  /** Closes the file. */
  close(): void {
    try {
      this.#file.close();
    } catch {
      // Already closed.
    }
  }

  async #write(record: SessionHeader | StepRecord | CompactionRecord): Promise<void> {
    let line = JSON.stringify(record);
    for (const secret of this.#secrets) {
      if (line.includes(secret)) line = line.replaceAll(secret, "[redacted]");
    }
    const bytes = this.#encoder.encode(`${line}\n`);
    // One write call per line: with O_APPEND the line lands whole or, if the process dies in the
    // call, as a tail fragment that parseSession sets aside.
    let written = 0;
    while (written < bytes.byteLength) written += await this.#file.write(bytes.subarray(written));
  }
}
