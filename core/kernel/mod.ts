/**
 * `@amber/core/kernel`: the run kernel. It resolves a plugin selection into one execution
 * environment, runs a model in a loop with tools over it, compacts its conversation when it
 * grows too long for the model's context window, and records each step in a session file. The
 * contracts it calls (hooks, gates, guards, tools, dialects) live in `@amber/core`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newSessionId } from "@amber/core/kernel";
 * const id = newSessionId(new Date("2026-01-02T03:04:05Z"));
 * assert.match(id, /^20260102-030405-[0-9a-f]{6}$/);
 * ```
 *
 * @module
 */

export {
  type ApprovalAnswer,
  type ApprovalRequest,
  type EndCause,
  type ModelPort,
  runAgent,
  type RunEvent,
  type RunFailure,
  type RunOptions,
  type RunResult,
  runSelection,
} from "./run.ts";
export { type ResolvedSelection, resolveSelection, type SelectionRequest } from "./selection.ts";
export { buildEnvironment } from "./environment.ts";
export {
  type CompactionRecord,
  type LoadedSession,
  newSessionId,
  parseSession,
  SessionFile,
  type SessionHeader,
  type StepRecord,
  TranscriptError,
} from "./transcript.ts";
export { listSessions, type SessionSummary } from "./sessions.ts";
export { compactConversation, type CompactOptions, type CompactOutcome } from "./compact.ts";
