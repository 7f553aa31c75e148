/**
 * Context compaction: what replaces a conversation that no longer fits the model's context
 * window with a shorter one that carries the same work on. The kernel compacts before a request
 * would pass a share of the window, after the provider said the context overflowed, and when
 * the user asks (`/compact`). Plugins take part two ways: a `compactor` capability replaces or
 * extends the strategy (middleware: it may call `next` for the default result and change it,
 * or answer on its own), and a `BeforeCompaction` phase hook vetoes or adjusts a compaction
 * before it starts.
 *
 * @module
 */

import type { Message } from "./message.ts";

/** Why a compaction runs: the window's threshold, a provider's overflow error, or the user. */
export type CompactionReason = "auto" | "overflow" | "manual";

/** A model call a compactor asks for: a summary of `messages` as `system` asks. */
export interface SummaryRequest {
  /** The instructions for the summarizing model. */
  readonly system: string;
  /** What to summarize (the dialect sees them as the conversation). */
  readonly messages: readonly Message[];
  /** Another model of the session's provider; the session's own by default. */
  readonly model?: string;
  /** The most tokens of the summary. */
  readonly maxTokens?: number;
}

/** A compaction about to run, as a `BeforeCompaction` hook sees it. */
export interface CompactionPlan {
  /** Why it runs. */
  readonly reason: CompactionReason;
  /** The estimated tokens of the request that would be sent now. */
  readonly tokens: number;
  /** The model's context window, in tokens (0 when unknown). */
  readonly budget: number;
  /** The tokens from which the kernel compacts (the window times the share). */
  readonly threshold: number;
  /** The user turns kept verbatim at the end. */
  readonly keepTurns: number;
  /** What the user asked the summary to keep (`/compact <what>`), if anything. */
  readonly instructions?: string;
}

/** What a `BeforeCompaction` hook may answer (in its reaction's `compaction`). */
export interface CompactionAdjustment {
  /** Vetoes the compaction, saying why. An overflow's compaction cannot be vetoed. */
  readonly veto?: string;
  /** Replaces the instructions for the summary. */
  readonly instructions?: string;
  /** Replaces the number of user turns kept verbatim (at least 1). */
  readonly keepTurns?: number;
}

/** What a compactor is given. */
export interface CompactionInput extends CompactionPlan {
  /** The conversation as it stands: the messages the request would carry, prompt blocks apart. */
  readonly messages: readonly Message[];
  /** The state store as of the last commit. */
  readonly state: ReadonlyMap<string, unknown>;
  /** Aborted when the turn is cancelled. */
  readonly signal: AbortSignal;
  /** Asks the session's provider for a summary; rejects when the call fails. */
  summarize(request: SummaryRequest): Promise<string>;
  /** The estimated tokens of `messages` in a request. */
  estimate(messages: readonly Message[]): number;
}

/** What a compaction gives back. */
export interface CompactionResult {
  /**
   * The conversation that replaces `messages`: every tool result still answers a call of an
   * assistant message before it, and it ends with the same user turn the input did.
   * What the kernel checks: the messages are well formed, every tool result answers an earlier
   * call (each call once), the conversation is no bigger than it was, and the user's last
   * message is kept as it was (the steps after it may be summarized when that one turn alone
   * does not fit; a compaction's own summary is no user turn).
   */
  readonly messages: readonly Message[];
  /** Who made it: `default` or the compactor's name. */
  readonly strategy: string;
}

/** The rest of the chain: the next compactor, last of all the default strategy. */
export type CompactionNext = (input?: CompactionInput) => Promise<CompactionResult>;

/**
 * A compaction strategy a plugin contributes. Compactors run as middleware in dependency order
 * (a plugin's after those it requires), the default strategy innermost: one that answers
 * without calling `next` replaces what comes after it; one that calls `next` extends it. A
 * result that breaks the rules of {@linkcode CompactionResult} is a fault of the plugin, and the
 * kernel uses the default strategy's result instead. "After" means on the way out: a plugin's
 * compactor wraps those of the plugins it requires, so it sees their result from `next` and has
 * the last word (`ResolvedExecutionEnv.compactors` lists the chain outermost first).
 *
 * @example A strategy that only drops old tool output
 * ```ts
 * import assert from "node:assert/strict";
 * import type { CompactorCapability, Message } from "@amber/core";
 * const dropOutput: CompactorCapability = {
 *   kind: "compactor",
 *   name: "drop_output",
 *   compact: (input) => ({
 *     strategy: "drop_output",
 *     messages: input.messages.map((m, i): Message =>
 *       m.role === "tool" && i < input.messages.length - 3
 *         ? { ...m, content: "[output dropped]" }
 *         : m
 *     ),
 *   }),
 * };
 * const messages: Message[] = [
 *   { role: "user", content: "go" },
 *   { role: "assistant", content: "", toolCalls: [{ id: "c", name: "read", arguments: "{}" }] },
 *   { role: "tool", toolCallId: "c", name: "read", content: "x".repeat(1000) },
 *   { role: "assistant", content: "read it" },
 *   { role: "user", content: "thanks" },
 *   { role: "assistant", content: "welcome" },
 * ];
 * const result = await dropOutput.compact({
 *   reason: "manual", tokens: 300, budget: 1000, threshold: 850, keepTurns: 1,
 *   messages, state: new Map(), signal: new AbortController().signal,
 *   summarize: () => Promise.resolve(""), estimate: (m) => m.length,
 * }, () => Promise.reject(new Error("not used")));
 * assert.equal(result.messages[2].content, "[output dropped]");
 * ```
 */
export interface CompactorCapability {
  /** The dispatch key. */
  readonly kind: "compactor";
  /** Unique across the harness. */
  readonly name: string;
  /** Compacts, or passes on to `next` (and may change what it gives). */
  compact(
    input: CompactionInput,
    next: CompactionNext,
  ): CompactionResult | Promise<CompactionResult>;
}
