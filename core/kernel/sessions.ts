/**
 * The sessions under a config directory, as `amber sessions` lists them: each one's title, size,
 * cost and compactions, read from its file.
 *
 * @module
 */

import { join } from "node:path";
import { type LoadedSession, SessionFile } from "./transcript.ts";

/** One session as `amber sessions` lists it. */
export interface SessionSummary {
  /** The id. */
  readonly id: string;
  /** When it was created. */
  readonly created: string;
  /** How many steps it has. */
  readonly steps: number;
  /** Its first prompt, clipped. */
  readonly title: string;
  /** The model. */
  readonly model?: string;
  /**
   * Dollars over its steps and compactions, when any was priced (those whose price was unknown
   * count nothing).
   */
  readonly cost?: number;
  /** How many times it was compacted. */
  readonly compactions: number;
  /** A problem reading it, if any. */
  readonly problem?: string;
}

/**
 * Every session under a config directory, newest first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listSessions, SessionFile } from "@amber/core/kernel";
 * const dir = await Deno.makeTempDir();
 * const file = await SessionFile.create(dir, { id: "s1", workspace: "/w", title: "hi" });
 * await file.append({ step: 0, messages: [{ role: "user", content: "hi" }], cost: 0.25 });
 * await file.appendCompaction({
 *   step: 1, reason: "manual", strategy: "default", tokensBefore: 9, tokensAfter: 4,
 *   messages: [{ role: "user", content: "hi" }], cost: 0.5,
 * });
 * file.close();
 * const [summary] = await listSessions(dir);
 * assert.equal(summary.cost, 0.75);
 * assert.equal(summary.compactions, 1);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function listSessions(configDir: string): Promise<SessionSummary[]> {
  const dir = join(configDir, "sessions");
  const ids: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && entry.name.endsWith(".jsonl")) ids.push(entry.name.slice(0, -6));
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  const summaries = await Promise.all(ids.map(async (id): Promise<SessionSummary> => {
    try {
      const session = await SessionFile.load(configDir, id);
      const cost = costOf(session);
      return {
        id,
        created: session.header.created,
        steps: session.steps.length,
        title: session.header.title ?? "",
        model: session.header.model,
        ...(cost === undefined ? {} : { cost }),
        compactions: session.compactions.length,
        ...(session.torn ? { problem: `line ${session.torn.line} was cut off` } : {}),
      };
    } catch (error) {
      return {
        id,
        created: "",
        steps: 0,
        title: "",
        compactions: 0,
        problem: (error as Error).message,
      };
    }
  }));
  return summaries.sort((a, b) => b.id.localeCompare(a.id));
}

// The sum of the recorded costs; undefined when nothing was priced.
function costOf(session: LoadedSession): number | undefined {
  let cost: number | undefined;
  for (const record of [...session.steps, ...session.compactions]) {
    if (record.cost !== undefined) cost = (cost ?? 0) + record.cost;
  }
  return cost;
}
