/**
 * The session files of the sub-agents the `task` tool starts. A sub-agent runs on its
 * session's provider and environment with a file of its own, `<parent>-taskN`: a session like
 * any other (`--resume` takes it), with one writer for its whole life. It cannot start another
 * sub-agent: the recursion would have no bound but max steps.
 *
 * @module
 */

import type { GateInput, GateOutcome } from "@amber/core";
import { newSessionId, type RunResult, type SessionFile } from "@amber/core/kernel";
import { describeEnd } from "./events.ts";
import { lockSession } from "./session_lock.ts";

/**
 * The host gate of a sub-agent's run: it blocks the `task` tool, and allows every other call.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { subagentGate } from "./subagent_sessions.ts";
 * const input = (name: string) => ({
 *   call: { id: "1", name, arguments: "{}" },
 *   args: {},
 *   state: new Map(),
 * });
 * assert.equal(subagentGate(input("task")).kind, "block");
 * assert.equal(subagentGate(input("read")).kind, "allow");
 * ```
 */
export function subagentGate({ call }: GateInput): GateOutcome {
  return call.name === "task"
    ? { kind: "block", reason: "a sub-agent cannot start another sub-agent" }
    : { kind: "allow" };
}

/**
 * What a sub-agent answers: the last thing its run's assistant said. Throws when the run did not
 * complete.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { subagentAnswer } from "./subagent_sessions.ts";
 * import type { RunResult } from "@amber/core/kernel";
 * const run: RunResult = {
 *   cause: { kind: "completed" },
 *   steps: 1,
 *   messages: [{ role: "user", content: "look" }, { role: "assistant", content: "found it" }],
 *   usage: { promptTokens: 0, completionTokens: 0 },
 *   compactions: 0,
 *   state: new Map(),
 * };
 * assert.equal(subagentAnswer(run), "found it");
 * assert.throws(() => subagentAnswer({ ...run, cause: { kind: "cancelled" } }), /without an answer/);
 * ```
 */
export function subagentAnswer(result: RunResult): string {
  if (result.cause.kind !== "completed") {
    throw new Error(`the sub-agent ended without an answer: ${describeEnd(result.cause)}`);
  }
  const last = [...result.messages].reverse().find((m) => m.role === "assistant");
  return last?.content ?? "";
}

/**
 * Numbers the sub-agents of one session and holds each one's file for its run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionFile } from "@amber/core/kernel";
 * import { SubagentSessions } from "./subagent_sessions.ts";
 * const configDir = await Deno.makeTempDir();
 * const subagents = new SubagentSessions();
 * const create = (id: string) => SessionFile.create(configDir, { id, workspace: configDir });
 * const id = await subagents.run(configDir, "20261201-101500-abcdef", create, (file) =>
 *   Promise.resolve(file.id));
 * assert.equal(id, "20261201-101500-abcdef-task1");
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export class SubagentSessions {
  #tasks = 0;

  /**
   * Runs the next sub-agent of session `parent` (of a new id, when the session has none yet)
   * under `configDir`: takes its lock, has `create` make its file, and gives the file to `run`;
   * the file is closed and the lock released when `run` settles.
   */
  async run<T>(
    configDir: string,
    parent: string | undefined,
    create: (id: string) => Promise<SessionFile>,
    run: (file: SessionFile) => Promise<T>,
  ): Promise<T> {
    const id = `${parent ?? newSessionId(new Date())}-task${++this.#tasks}`;
    const lock = await lockSession(configDir, id);
    let file: SessionFile;
    try {
      file = await create(id);
    } catch (error) {
      lock.release();
      throw error;
    }
    try {
      return await run(file);
    } finally {
      file.close();
      lock.release();
    }
  }
}
