/**
 * One compaction, whatever started it: the `BeforeCompaction` hooks (veto or adjust), the
 * interceptable `compression` event, then the compactor chain (the plugins' compactors as
 * middleware, each under its deadline, the default strategy innermost), the result checked,
 * and the events of its end. A compactor that throws, overruns or returns a conversation that
 * breaks the rules (or makes the conversation bigger) is reported as a fault of its plugin, and
 * the default strategy's result takes the place of its own. When the turn is cancelled the
 * compaction ends at once, the conversation unchanged. The caller applies the outcome and writes
 * the record.
 *
 * @module
 */

import type {
  CompactionInput,
  CompactionNext,
  CompactionReason,
  CompactionResult,
  CompactorCapability,
  SummaryRequest,
} from "../compaction.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import { timeoutFor, withDeadline } from "../limits.ts";
import type { Message } from "../message.ts";
import type { NamedEntry } from "../registry.ts";
import type { PluginRuntime } from "../runtime.ts";
import type { TokenUsage } from "../usage.ts";
import { conversationProblem, copyMessage } from "./_compaction_check.ts";
import { defaultCompaction } from "./_compaction_default.ts";
import { faultText } from "./_fault_text.ts";
import { compactionHooks } from "./_hooks.ts";
import { freezeMessage } from "./_snapshot.ts";
import type { RunEvent } from "./run_types.ts";
import type { CompactionRecord } from "./transcript.ts";

/** What one compaction is asked to do. */
export interface CompactionRequest {
  /** Why it runs. */
  readonly reason: CompactionReason;
  /** The step it runs before (for the hooks). */
  readonly step: number;
  /** The estimated tokens of the request as it stands. */
  readonly tokens: number;
  /** The context window (0 when unknown). */
  readonly budget: number;
  /** The tokens from which the kernel compacts. */
  readonly threshold: number;
  /** The user turns kept verbatim. */
  readonly keepTurns: number;
  /** What the summary should keep, when the user said. */
  readonly instructions?: string;
  /** The conversation to compact (prompt blocks apart), frozen. */
  readonly messages: readonly Message[];
  /** The state store as of the last commit. */
  readonly state: ReadonlyMap<string, unknown>;
  /** Aborted when the turn is cancelled. */
  readonly signal: AbortSignal;
  /** The estimated tokens of a request carrying `messages`. */
  readonly estimate: (messages: readonly Message[]) => number;
  /** Asks the model for a summary. */
  readonly summarize: (request: SummaryRequest) => Promise<string>;
}

/** How a compaction ended. */
export interface CompactionOutcome {
  /** Whether the conversation is now `messages` (false: vetoed, or nothing to compact). */
  readonly success: boolean;
  /** The compacted conversation, frozen (the input's, unchanged, when not a success). */
  readonly messages: readonly Message[];
  /** Who made it. */
  readonly strategy?: string;
  /** The estimated tokens before. */
  readonly tokensBefore: number;
  /** The estimated tokens after. */
  readonly tokensAfter: number;
  /** Why it did not succeed, or what went wrong on the way. */
  readonly message?: string;
}

/** What a compaction needs of the runtime. */
export type CompactionRuntime = Pick<PluginRuntime, "config" | "report" | "events">;

/**
 * Runs one compaction (see the module doc) and says how it ended; `onEvent` gets its
 * `compactionStarted` and `compactionFinished`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventBus, type Message } from "@amber/core";
 * import { runCompaction } from "./_compaction.ts";
 * const runtime = { config: () => ({ plugins: {} }), report: () => {}, events: new EventBus() };
 * const env = { hooks: { BeforeCompaction: [] }, compactors: [] };
 * const messages: Message[] = [{ role: "user", content: "hi" }];
 * const outcome = await runCompaction(runtime, env, {
 *   reason: "manual", step: 0, tokens: 10, budget: 0, threshold: 0, keepTurns: 2, messages,
 *   state: new Map(), signal: new AbortController().signal,
 *   estimate: (m) => 10 * m.length, summarize: () => Promise.resolve(""),
 * });
 * assert.equal(outcome.success, false);
 * assert.equal(outcome.message, "nothing to compact");
 * ```
 */
export async function runCompaction(
  runtime: CompactionRuntime,
  env: {
    readonly hooks: Pick<ResolvedExecutionEnv["hooks"], "BeforeCompaction">;
    readonly compactors: ResolvedExecutionEnv["compactors"];
  },
  request: CompactionRequest,
  onEvent?: (event: RunEvent) => void,
): Promise<CompactionOutcome> {
  const { reason, tokens } = request;
  const hooked = await compactionHooks(runtime, env.hooks.BeforeCompaction, {
    step: request.step,
    transcript: Object.freeze([...request.messages]),
    state: request.state,
    plan: {
      reason,
      tokens,
      budget: request.budget,
      threshold: request.threshold,
      keepTurns: request.keepTurns,
      ...(request.instructions === undefined ? {} : { instructions: request.instructions }),
    },
  });
  const unchanged = (message: string): CompactionOutcome => ({
    success: false,
    messages: request.messages,
    tokensBefore: tokens,
    tokensAfter: tokens,
    message,
  });
  const plan = hooked.plan;
  const events = runtime.events;
  let vetoed = hooked.veto;
  if (vetoed === undefined && events.has("compression")) {
    const event = { reason, tokens, budget: plan.budget, threshold: plan.threshold };
    if (!events.publish("compression", event) && reason !== "overflow") {
      vetoed = "an interceptor of the compression event vetoed it";
    }
  }
  const end = (outcome: CompactionOutcome): CompactionOutcome => {
    onEvent?.({
      type: "compactionFinished",
      reason,
      success: outcome.success,
      tokensBefore: outcome.tokensBefore,
      tokensAfter: outcome.tokensAfter,
      ...(outcome.strategy === undefined ? {} : { strategy: outcome.strategy }),
      ...(outcome.message === undefined ? {} : { message: outcome.message }),
    });
    if (events.has("compressionCompleted")) {
      events.publish("compressionCompleted", {
        success: outcome.success,
        tokensBefore: outcome.tokensBefore,
        tokensAfter: outcome.tokensAfter,
      });
    }
    return outcome;
  };
  if (vetoed !== undefined) return end(unchanged(vetoed));
  if (request.signal.aborted) return end(unchanged(CANCELLED));
  onEvent?.({
    type: "compactionStarted",
    reason,
    tokens,
    budget: plan.budget,
    threshold: plan.threshold,
  });
  const input: CompactionInput = Object.freeze({
    ...plan,
    messages: Object.freeze([...request.messages]),
    state: request.state,
    signal: request.signal,
    summarize: request.summarize,
    estimate: request.estimate,
  });
  const chain = new Chain(runtime, env.compactors);
  let result: CompactionResult;
  try {
    result = await untilAborted(chain.run(input), request.signal);
  } catch (error) {
    // Only the default strategy is left to fail here; the turn goes on uncompacted.
    if (request.signal.aborted) return end(unchanged(CANCELLED));
    return end(unchanged(`the compaction failed: ${faultText(error)}`));
  }
  // A cancelled turn keeps its conversation: a summary cut short is no summary.
  if (request.signal.aborted) return end(unchanged(CANCELLED));
  const same = result.messages.length === request.messages.length &&
    result.messages.every((message, i) => message === request.messages[i]);
  if (same) return end(unchanged(chain.note ?? "nothing to compact"));
  return end({
    success: true,
    messages: result.messages,
    strategy: result.strategy,
    tokensBefore: tokens,
    tokensAfter: request.estimate(result.messages),
    ...(chain.note === undefined ? {} : { message: chain.note }),
  });
}

/**
 * The session record of a compaction that succeeded (its summary calls' usage and cost, when
 * there were any).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compactionRecord } from "./_compaction.ts";
 * const outcome = { success: true, messages: [], strategy: "x", tokensBefore: 9, tokensAfter: 4 };
 * assert.deepEqual(compactionRecord(3, "auto", outcome, undefined, undefined), {
 *   step: 3, reason: "auto", strategy: "x", tokensBefore: 9, tokensAfter: 4, messages: [],
 * });
 * ```
 */
export function compactionRecord(
  step: number,
  reason: CompactionReason,
  outcome: CompactionOutcome,
  usage: TokenUsage | undefined,
  cost: number | undefined,
): Omit<CompactionRecord, "type" | "at"> {
  return {
    step,
    reason,
    strategy: outcome.strategy ?? "default",
    tokensBefore: outcome.tokensBefore,
    tokensAfter: outcome.tokensAfter,
    messages: outcome.messages,
    ...(usage === undefined ? {} : { usage }),
    ...(cost === undefined ? {} : { cost }),
  };
}

const CANCELLED = "the turn was cancelled";

// `work`, or a rejection as soon as `signal` aborts: a compactor that ignores the signal does
// not hold a cancelled turn until its deadline (it goes on, unheard).
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  let stop = () => {};
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
  });
  work.catch(() => {});
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener("abort", stop));
}

// A compaction never makes the conversation bigger: a result that would is no compaction.
function grown(input: CompactionInput, messages: readonly Message[]): string | undefined {
  const after = input.estimate(messages);
  const before = input.estimate(input.messages);
  return after > before
    ? `gave a conversation bigger than its input (${after} estimated tokens, not ${before})`
    : undefined;
}

// The compactors as middleware over the default strategy, which runs at most once per input.
class Chain {
  note: string | undefined;
  readonly #runtime: CompactionRuntime;
  readonly #compactors: readonly NamedEntry<CompactorCapability>[];
  readonly #defaults = new Map<CompactionInput, Promise<CompactionResult>>();

  constructor(runtime: CompactionRuntime, compactors: readonly NamedEntry<CompactorCapability>[]) {
    this.#runtime = runtime;
    this.#compactors = compactors;
  }

  run(input: CompactionInput): Promise<CompactionResult> {
    return this.#link(0, input);
  }

  #default(input: CompactionInput): Promise<CompactionResult> {
    let result = this.#defaults.get(input);
    if (result === undefined) {
      result = defaultCompaction(input).then(({ messages, strategy, note }) => {
        if (note !== undefined) this.note = note;
        return { messages: messages.map(freezeMessage), strategy };
      });
      this.#defaults.set(input, result);
    }
    return result;
  }

  async #link(index: number, input: CompactionInput): Promise<CompactionResult> {
    const entry = this.#compactors[index];
    if (entry === undefined) return await this.#default(input);
    const what = `compactor '${entry.name}' of plugin '${entry.owner}'`;
    const next: CompactionNext = (given) => {
      if (given === undefined || given === input) return this.#link(index + 1, input);
      const problem = conversationProblem(given?.messages, input.messages);
      if (problem !== undefined) {
        this.#fault(entry, what, `passed on ${problem}; its own input goes on instead`);
        return this.#link(index + 1, input);
      }
      return this.#link(
        index + 1,
        Object.freeze({
          ...input,
          messages: Object.freeze(given.messages.map(copyMessage)),
          keepTurns: Number.isInteger(given.keepTurns) && given.keepTurns >= 1
            ? given.keepTurns
            : input.keepTurns,
          ...(typeof given.instructions === "string" ? { instructions: given.instructions } : {}),
        }),
      );
    };
    let result: unknown;
    try {
      const ms = timeoutFor(this.#runtime.config(), "compactor", entry.owner);
      result = await withDeadline(() => entry.capability.compact(input, next), ms, what);
    } catch (error) {
      this.#fault(entry, what, `${faultText(error)}; the default strategy's result is used`, error);
      return await this.#default(input);
    }
    const messages = (result as { messages?: unknown } | null)?.messages;
    const problem = typeof result !== "object" || result === null
      ? `returned a ${result === null ? "null" : typeof result} instead of a result`
      : conversationProblem(messages, input.messages) ?? grown(input, messages as Message[]);
    if (problem !== undefined) {
      this.#fault(entry, what, `${problem}; the default strategy's result is used`);
      return await this.#default(input);
    }
    const strategy = (result as { strategy?: unknown }).strategy;
    return {
      messages: (messages as Message[]).map(copyMessage),
      strategy: typeof strategy === "string" && strategy !== "" ? strategy : entry.name,
    };
  }

  #fault(entry: NamedEntry<CompactorCapability>, where: string, message: string, error?: unknown) {
    this.#runtime.report({
      pluginId: entry.owner,
      where,
      message,
      ...(error === undefined ? {} : { error }),
    });
  }
}
