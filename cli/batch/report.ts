/**
 * How `amber batch` shows a batch: the counts as a line of text or a progress bar, and each job
 * as one line of the results file.
 *
 * @module
 */

import type { TokenUsage } from "@amber/core";
import type { BatchCounts, JobRecord, JobState } from "./queue.ts";

/** Jobs that will not run again unless retried. */
export function finished(counts: BatchCounts): number {
  return counts.completed + counts.failed + counts.cancelled + counts.unknown;
}

/**
 * The counts in words, the ones that are zero left out (but `0/N done` always said).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeCounts } from "./report.ts";
 * const counts = { total: 5, waiting: 1, active: 1, completed: 2, failed: 1, cancelled: 0, unknown: 0 };
 * assert.equal(describeCounts(counts), "3/5 done: 2 completed, 1 failed, 1 active, 1 waiting");
 * ```
 */
export function describeCounts(counts: BatchCounts): string {
  const parts = (["completed", "failed", "cancelled", "active", "waiting", "unknown"] as const)
    .filter((key) => counts[key] > 0)
    .map((key) => `${counts[key]} ${key === "unknown" ? "gone from the queue" : key}`);
  const done = `${finished(counts)}/${counts.total} done`;
  return parts.length === 0 ? done : `${done}: ${parts.join(", ")}`;
}

/**
 * A progress bar `width` cells wide: finished jobs filled, running ones shaded, then the counts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { progressBar } from "./report.ts";
 * const counts = { total: 4, waiting: 1, active: 1, completed: 2, failed: 0, cancelled: 0, unknown: 0 };
 * assert.equal(progressBar(counts, 8), "[████▒▒  ] 2/4 done: 2 completed, 1 active, 1 waiting");
 * ```
 */
export function progressBar(counts: BatchCounts, width: number): string {
  const cells = Math.max(4, width);
  const total = Math.max(1, counts.total);
  const full = Math.round((finished(counts) / total) * cells);
  const running = Math.min(cells - full, Math.round((counts.active / total) * cells));
  const bar = "█".repeat(full) + "▒".repeat(running) + " ".repeat(cells - full - running);
  return `[${bar}] ${describeCounts(counts)}`;
}

/** An attempt's transcript: its text, or the file it was written to. */
export type TranscriptRef =
  | { readonly attempt: number; readonly transcript: string }
  | { readonly attempt: number; readonly transcriptFile: string };

/** One line of `amber batch results`: a job, whether or not it has finished. */
export interface ResultLine {
  /** Its line in the tasks file. */
  readonly line: number;
  /** Where it stands. */
  readonly status: JobState;
  /** The final answer, once finished. */
  readonly answer?: string;
  /** The exit status `amber run` would have had, once finished. */
  readonly exit?: number;
  /** Why it failed or stopped. */
  readonly error?: string;
  /** Its tokens. */
  readonly usage?: TokenUsage;
  /** Its cost in dollars, when the prices are known. */
  readonly cost?: number;
  /** The workspace's `git diff`. */
  readonly diff?: string;
  /** The attempt that produced the outcome. */
  readonly attempt?: number;
  /** That attempt's transcript (the session file), inline. */
  readonly transcript?: string;
  /** Or the file it was written to (`--out`). */
  readonly transcriptFile?: string;
  /** The transcripts of the other attempts (ones that died mid-job), oldest first. */
  readonly otherAttempts?: readonly TranscriptRef[];
}

/**
 * The results line of `record`, with `transcripts(attempt)` giving each attempt's transcript (its
 * text or where it was written).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resultLine } from "./report.ts";
 * const line = await resultLine({ line: 4, state: "waiting", attempts: 0 }, () => {
 *   throw new Error("no attempt to read");
 * });
 * assert.deepEqual(line, { line: 4, status: "waiting" });
 * ```
 */
export async function resultLine(
  record: JobRecord,
  transcripts: (attempt: number) => Promise<TranscriptRef | undefined>,
): Promise<ResultLine> {
  const outcome = record.outcome;
  const refs: TranscriptRef[] = [];
  for (let attempt = 1; attempt <= record.attempts; attempt++) {
    const ref = await transcripts(attempt);
    if (ref !== undefined) refs.push(ref);
  }
  const own = refs.find((ref) => ref.attempt === outcome?.attempt);
  const others = refs.filter((ref) => ref !== own);
  const error = outcome?.error ?? record.failedReason;
  return {
    line: record.line,
    status: record.state,
    ...(outcome === undefined ? {} : {
      answer: outcome.answer,
      exit: outcome.exitCode,
      usage: outcome.usage,
      ...(outcome.cost === undefined ? {} : { cost: outcome.cost }),
      diff: outcome.diff,
      attempt: outcome.attempt,
    }),
    ...(error === undefined ? {} : { error }),
    ...(own === undefined
      ? {}
      : "transcript" in own
      ? { transcript: own.transcript }
      : { transcriptFile: own.transcriptFile }),
    ...(others.length === 0 ? {} : { otherAttempts: others }),
  };
}
