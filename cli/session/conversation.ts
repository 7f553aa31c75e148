/**
 * The conversation a session has open: its session file (created by the first turn, or
 * resumed), the file's lock (held while the file is this session's to write:
 * `session_lock.ts`), and what the next run goes on from (the messages, the state, the number
 * of the next step). The session drives it; it knows nothing of providers or events.
 *
 * @module
 */

import type { FileLock, Message, StateCommand } from "@amber/core";
import { type LoadedSession, newSessionId, type RunResult, SessionFile } from "@amber/core/kernel";
import { lockSession } from "./session_lock.ts";

/** What {@linkcode Conversation.resume} read of the session it took over. */
export interface ResumedConversation {
  /** The session as saved (its steps and compactions: the dollars spent so far). */
  readonly session: LoadedSession;
  /** Where a torn last line was moved, when there was one. */
  readonly tornTo?: string;
}

/**
 * One session file and what was said in it, for a session under one config directory. With
 * no file open, the next turn starts a new conversation.
 *
 * @example A conversation started, resumed by its id, and dropped
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionFile } from "@amber/core/kernel";
 * import { Conversation } from "./conversation.ts";
 * const configDir = await Deno.makeTempDir();
 * const conversation = new Conversation(configDir);
 * const file = await conversation.start((id) =>
 *   SessionFile.create(configDir, { id, workspace: configDir })
 * );
 * assert.equal(conversation.id, file.id);
 * await file.append({ step: 0, messages: [{ role: "user", content: "hi" }] });
 * await conversation.resume(file.id, []);
 * assert.deepEqual([conversation.messages.length, conversation.step], [1, 1]);
 * conversation.forget();
 * assert.deepEqual([conversation.id, conversation.messages.length], [undefined, 0]);
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export class Conversation {
  readonly #configDir: string;
  #file: SessionFile | undefined;
  // Held while the session file is this session's to write: one writer per file.
  #lock: FileLock | undefined;
  #history: Message[] = [];
  #state: StateCommand[] = [];
  #step = 0;

  /** A conversation not started yet, of sessions under `configDir`. */
  constructor(configDir: string) {
    this.#configDir = configDir;
  }

  /** The session id, once a turn created the file (or one was resumed). */
  get id(): string | undefined {
    return this.#file?.id;
  }

  /** The open session file, if there is one. */
  get file(): SessionFile | undefined {
    return this.#file;
  }

  /** The conversation so far. */
  get messages(): readonly Message[] {
    return this.#history;
  }

  /** The state commands the next run starts from. */
  get state(): readonly StateCommand[] {
    return this.#state;
  }

  /** The number of the next step. */
  get step(): number {
    return this.#step;
  }

  /**
   * Starts a conversation under a new id: `create` makes its file, and its lock is taken.
   * Rejects (holding nothing) when either fails.
   */
  async start(create: (id: string) => Promise<SessionFile>): Promise<SessionFile> {
    const id = newSessionId(new Date());
    // A new id cannot be held by anyone yet: the lock is taken alongside creating the file.
    const [lock, file] = await Promise.allSettled([
      lockSession(this.#configDir, id),
      create(id),
    ]);
    if (lock.status === "rejected") {
      if (file.status === "fulfilled") file.value.close();
      throw lock.reason;
    }
    if (file.status === "rejected") {
      lock.value.release();
      throw file.reason;
    }
    this.#lock = lock.value;
    this.#file = file.value;
    return file.value;
  }

  /** A run ended with `result`: the conversation goes on from it, at step `next`. */
  advance(result: RunResult, next: number): void {
    this.#history = [...result.messages];
    this.#state = [...result.state].map(([key, value]) => ({ op: "set", key, value }));
    this.#step = next;
  }

  /** The conversation was compacted: `messages` replace what was said. */
  compacted(messages: readonly Message[]): void {
    this.#history = [...messages];
  }

  /**
   * Reads the open file again: after a run broke off without its result, the file (the prompt
   * is in it before the first model call, and every committed step) is what the conversation
   * now is.
   */
  async reload(): Promise<void> {
    const file = this.#file;
    if (file === undefined) return;
    try {
      const saved = await SessionFile.load(this.#configDir, file.id);
      this.#history = [...saved.messages];
      this.#state = saved.steps.flatMap((step) => [...(step.state ?? [])]);
      this.#step = saved.steps.length;
    } catch {
      // Unreadable now: the next turn goes on from what the session last knew.
    }
  }

  /**
   * Takes over session `id` (its lock, then its file, a torn last line moved aside) in place of
   * the open one, which is let go of only once the new one is had. `secrets` are redacted from
   * what is written to it.
   */
  async resume(id: string, secrets: readonly string[]): Promise<ResumedConversation> {
    // Before anything is read or a torn line moved: another process may be writing the file.
    const lock = this.#file?.id === id ? this.#lock : await lockSession(this.#configDir, id);
    let resumed;
    try {
      resumed = await SessionFile.resume(this.#configDir, id, secrets);
    } catch (error) {
      if (lock !== this.#lock) lock?.release();
      throw error;
    }
    this.#file?.close();
    if (lock !== this.#lock) this.#lock?.release();
    this.#lock = lock;
    this.#file = resumed.file;
    this.#history = [...resumed.session.messages];
    this.#state = resumed.session.steps.flatMap((step) => [...(step.state ?? [])]);
    this.#step = resumed.session.steps.length;
    return resumed.tornTo === undefined
      ? { session: resumed.session }
      : { session: resumed.session, tornTo: resumed.tornTo };
  }

  /**
   * Removes the file of a first turn that never got a reply (`amber sessions` would list a
   * conversation there never was, and `--resume` would continue nothing), then forgets it.
   */
  async discard(): Promise<void> {
    const file = this.#file;
    if (file === undefined) return;
    // The file goes while the lock is held: no one resumes it half-removed.
    file.close();
    this.#file = undefined;
    await Deno.remove(file.path).catch(() => {});
    this.forget();
  }

  /** Lets go of the conversation (its file, its lock, what it said): the next turn starts anew. */
  forget(): void {
    this.#file?.close();
    this.#file = undefined;
    this.#lock?.release();
    this.#lock = undefined;
    this.#history = [];
    this.#state = [];
    this.#step = 0;
  }

  /** Closes the file and releases its lock. */
  close(): void {
    this.#file?.close();
    this.#lock?.release();
    this.#lock = undefined;
  }
}
