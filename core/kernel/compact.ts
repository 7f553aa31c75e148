/**
 * Compaction on request, between turns: what `/compact [what to keep]` runs. The same pipeline
 * as the kernel's automatic compaction (the `BeforeCompaction` hooks and the `compression`
 * interceptors may veto it, the plugins' compactors then the default strategy make it), written
 * to the session as its own record, so a resumed session continues from the compacted context.
 *
 * @module
 */

import type { Message } from "../message.ts";
import type { StateCommand } from "../hooks.ts";
import type { PluginRuntime } from "../runtime.ts";
import { addUsage, type TokenUsage } from "../usage.ts";
import { DEFAULT_KEEP_TURNS, windowOf } from "./_context.ts";
import { messagesChars, RequestSize, toolChars } from "./_estimate.ts";
import { seedState } from "./_hooks.ts";
import { chatRequest, summarizer } from "./_inference.ts";
import { freezeMessage, StateSnapshot } from "./_snapshot.ts";
import type { ModelPort, RunEvent } from "./run_types.ts";
import type { SessionFile } from "./transcript.ts";

/** Options of {@linkcode compactConversation}. */
export interface CompactOptions {
  /** The plugin runtime: its environment's hooks and compactors, its events. */
  readonly runtime: PluginRuntime;
  /** The model client that writes the summary. */
  readonly model: ModelPort;
  /** The session's model. */
  readonly modelName: string;
  /** The conversation to compact. */
  readonly history: readonly Message[];
  /** The state commands committed so far, replayed for the compactors' view of the store. */
  readonly historyState?: readonly StateCommand[];
  /** Where the compaction record goes, when the conversation is compacted. */
  readonly session?: SessionFile;
  /** The number of the next step (the record's). */
  readonly step?: number;
  /** What the summary should keep (`/compact <what>`). */
  readonly instructions?: string;
  /**
   * The model's context window, in tokens (or a function that says it, as for a run): the
   * strategy aims at half of it.
   */
  readonly contextWindow?: number | (() => number | undefined);
  /** The share of the window at which the kernel would compact by itself; 0.85 by default. */
  readonly compactAt?: number;
  /** The user turns kept verbatim; 2 by default. */
  readonly keepTurns?: number;
  /** Cancels the summary. */
  readonly signal?: AbortSignal;
  /** Receives `compactionStarted` and `compactionFinished`. */
  readonly onEvent?: (event: RunEvent) => void;
  /** Prices the summary's usage in dollars (undefined when unknown). */
  readonly price?: (usage: TokenUsage) => number | undefined;
}

/** What {@linkcode compactConversation} did. */
export interface CompactOutcome {
  /** Whether the conversation was compacted (false: vetoed, or nothing to compact). */
  readonly compacted: boolean;
  /** The conversation to go on with: the compacted one, or `history` as it was. */
  readonly messages: readonly Message[];
  /** The estimated tokens of a request carrying the conversation before. */
  readonly tokensBefore: number;
  /** The same, after. */
  readonly tokensAfter: number;
  /** Who made it: `default` or a compactor's name. */
  readonly strategy?: string;
  /** Why it did not compact, or what went wrong on the way (a failed summary). */
  readonly message?: string;
  /** What the summary's model calls used. */
  readonly usage?: TokenUsage;
  /** What they cost in dollars, when priced. */
  readonly cost?: number;
}

/**
 * Compacts a conversation now (reason `manual`), and writes the record to `session` when it
 * did. The caller goes on with `messages` (as the next run's `history`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type Message, PluginRuntime } from "@amber/core";
 * import { compactConversation, type ModelPort } from "@amber/core/kernel";
 * import { createRegistries } from "@amber/registries";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * await runtime.start();
 * const model: ModelPort = {
 *   stream(_request, sink) {
 *     sink({ type: "text", delta: "The user read a.ts; it defines add()." });
 *     sink({ type: "finish", reason: "stop" });
 *     return Promise.resolve({ status: 200, headers: new Headers(), cancelled: false });
 *   },
 * };
 * const history: Message[] = [
 *   { role: "user", content: "Read a.ts" },
 *   { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read", arguments: '{"path":"a.ts"}' }] },
 *   { role: "tool", toolCallId: "c1", name: "read", content: "export function add() {}\n".repeat(200) },
 *   { role: "assistant", content: "It defines add()." },
 *   { role: "user", content: "And b.ts?" },
 *   { role: "assistant", content: "b.ts is empty." },
 *   { role: "user", content: "Thanks" },
 * ];
 * const outcome = await compactConversation({
 *   runtime, model, modelName: "m", history, contextWindow: 100, keepTurns: 1,
 * });
 * assert.equal(outcome.compacted, true);
 * assert.ok(outcome.tokensAfter < outcome.tokensBefore);
 * assert.match(outcome.messages[0].content, /it defines add\(\)[\s\S]*- a\.ts/);
 * assert.deepEqual(outcome.messages.at(-1), { role: "user", content: "Thanks" });
 * ```
 */
export async function compactConversation(options: CompactOptions): Promise<CompactOutcome> {
  const { runtime, session } = options;
  const env = runtime.environment();
  const history = options.history.map(freezeMessage);
  const store = new Map<string, unknown>();
  seedState(store, env, options.historyState ?? []);
  const size = new RequestSize();
  const blocks = chatRequest(options, env, history, []).blocks;
  const fixed = toolChars(env.toolDefinitions) + messagesChars(blocks);
  const estimate = (messages: readonly Message[]) => size.tokens(messagesChars(messages) + fixed);
  const { window, threshold } = windowOf(options);
  const signal = options.signal ?? new AbortController().signal;
  let usage: TokenUsage | undefined;
  const step = options.step ?? 0;
  // Loaded when asked for, as the run loop loads it (see `_context.ts`).
  const { compactionRecord, runCompaction } = await import("./_compaction.ts");
  const outcome = await runCompaction(runtime, env, {
    reason: "manual",
    step,
    tokens: estimate(history),
    budget: window,
    threshold,
    keepTurns: options.keepTurns ?? DEFAULT_KEEP_TURNS,
    ...(options.instructions ? { instructions: options.instructions } : {}),
    messages: history,
    state: new StateSnapshot(store),
    signal,
    estimate,
    summarize: summarizer(options.model, options.modelName, signal, (used) => {
      usage = usage === undefined ? used : addUsage(usage, used);
    }),
  }, options.onEvent);
  const cost = usage === undefined ? undefined : options.price?.(usage);
  if (outcome.success && session !== undefined) {
    await session.appendCompaction(compactionRecord(step, "manual", outcome, usage, cost));
  }
  return {
    compacted: outcome.success,
    messages: outcome.messages,
    tokensBefore: outcome.tokensBefore,
    tokensAfter: outcome.tokensAfter,
    ...(outcome.strategy === undefined ? {} : { strategy: outcome.strategy }),
    ...(outcome.message === undefined ? {} : { message: outcome.message }),
    ...(usage === undefined ? {} : { usage }),
    ...(cost === undefined ? {} : { cost }),
  };
}
