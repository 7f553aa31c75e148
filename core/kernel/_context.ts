/**
 * A run's context window: each model call's request estimated before it is sent (and reported in
 * a `request` event), the conversation compacted before a request that would pass the share of
 * the window the run allows, and once more, with the call retried, after the provider said the
 * context overflowed. A compaction replaces the conversation in place and is written to the
 * session as its own record.
 *
 * @module
 */

import { describeError } from "../errors.ts";
import type { ResolvedExecutionEnv } from "../execution_env.ts";
import type { Message } from "../message.ts";
import { addUsage, type TokenUsage } from "../usage.ts";
import type { CompactionReason } from "../compaction.ts";
import { messagesChars, RequestSize, toolChars } from "./_estimate.ts";
import { chatRequest, Reply, type StepRequest, summarizer } from "./_inference.ts";
import type { RunEvent, RunOptions } from "./run_types.ts";

/** The share of the window a request may fill before the kernel compacts, by default. */
export const DEFAULT_COMPACT_AT = 0.85;

/** The user turns a compaction keeps verbatim, by default. */
export const DEFAULT_KEEP_TURNS = 2;

// After a compaction that left the request above the threshold (or was vetoed), the next
// automatic one waits until the request grew by this share of the window: one per step would
// ask for a summary at every step and get nowhere.
const RETRY_GROWTH = 0.05;

/**
 * The context window of `options` (0 when unknown) and the tokens from which the kernel compacts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { windowOf } from "./_context.ts";
 * assert.deepEqual(windowOf({ contextWindow: 1000 }), { window: 1000, threshold: 850 });
 * assert.deepEqual(windowOf({ contextWindow: -5, compactAt: 0.5 }), { window: 0, threshold: 0 });
 * assert.deepEqual(windowOf({ contextWindow: () => 2000 }), { window: 2000, threshold: 1700 });
 * assert.deepEqual(windowOf({ contextWindow: () => undefined }), { window: 0, threshold: 0 });
 * ```
 */
export function windowOf(
  options: {
    readonly contextWindow?: number | (() => number | undefined);
    readonly compactAt?: number;
  },
): { window: number; threshold: number } {
  const { compactAt } = options;
  const contextWindow = typeof options.contextWindow === "function"
    ? options.contextWindow()
    : options.contextWindow;
  const window = contextWindow !== undefined && contextWindow > 0 ? contextWindow : 0;
  return { window, threshold: Math.floor(window * (compactAt ?? DEFAULT_COMPACT_AT)) };
}

/** What one model call gave. */
export interface ModelCall {
  /** The reply gathered. */
  readonly reply: Reply;
  /** The response's status and headers, and whether the call was cancelled. */
  readonly response: {
    readonly status: number;
    readonly headers: Headers;
    readonly cancelled: boolean;
  };
  /** The conversation was compacted: the step's messages so far are part of it now. */
  readonly compacted: boolean;
}

type Env = Pick<
  ResolvedExecutionEnv,
  "assemblePrompt" | "toolDefinitions" | "hooks" | "compactors"
>;

interface Built {
  readonly step: StepRequest;
  readonly chars: number;
  readonly fixed: number;
}

/**
 * The context window of one run over its conversation, which it compacts in place.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime, type Message } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { ContextWindow } from "./_context.ts";
 * import type { RunEvent } from "./run_types.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * await runtime.start();
 * const events: RunEvent[] = [];
 * const conversation: Message[] = [];
 * const context = new ContextWindow({
 *   runtime,
 *   model: {
 *     stream(_request, sink) {
 *       sink({ type: "text", delta: "ok" });
 *       sink({ type: "finish", reason: "stop" });
 *       return Promise.resolve({ status: 200, headers: new Headers(), cancelled: false });
 *     },
 *   },
 *   modelName: "m",
 *   contextWindow: 1000,
 *   onEvent: (event) => events.push(event),
 * }, conversation, () => new Map(), new AbortController().signal);
 * const call = await context.call(runtime.environment(), 0, [{ role: "user", content: "Hi" }]);
 * assert.equal(call.reply.message()?.content, "ok");
 * assert.deepEqual(events[0], { type: "request", step: 0, tokens: 6, contextWindow: 1000 });
 * ```
 */
export class ContextWindow {
  /** How many times the conversation was compacted. */
  compactions = 0;
  /** What the summary calls used, over the run. */
  usage: TokenUsage | undefined;
  /** What the summary calls cost, over the run; undefined once one's price was unknown. */
  cost: number | undefined = 0;
  readonly #o: ContextOptions;
  readonly #conversation: Message[];
  readonly #state: () => ReadonlyMap<string, unknown>;
  readonly #signal: AbortSignal;
  readonly #size = new RequestSize();
  #floor = 0;

  /** Watches `conversation` (which the run extends in place as it commits). */
  constructor(
    options: ContextOptions,
    conversation: Message[],
    state: () => ReadonlyMap<string, unknown>,
    signal: AbortSignal,
  ) {
    this.#o = options;
    this.#conversation = conversation;
    this.#state = state;
    this.#signal = signal;
  }

  /**
   * Makes step `step`'s model call: compacts first when the request would pass the threshold,
   * and compacts and retries once when the provider says the context overflowed. After a
   * compaction `stepMessages` is empty: what it held is in the conversation.
   */
  async call(env: Env, step: number, stepMessages: Message[]): Promise<ModelCall> {
    const o = this.#o;
    const { window, threshold } = windowOf(o);
    let built = this.#build(env, stepMessages);
    const firstChanged = built.step.firstChanged;
    const compact = (reason: CompactionReason) =>
      this.#compact(
        env,
        step,
        stepMessages,
        reason,
        this.#size.tokens(built.chars),
        threshold,
        built.fixed,
      );
    let compacted = false;
    const tokens = this.#size.tokens(built.chars);
    if (o.autoCompact !== false && window > 0 && tokens > threshold && tokens > this.#floor) {
      if (await compact("auto")) {
        compacted = true;
        built = this.#build(env, stepMessages);
      }
    }
    for (let attempt = 0;; attempt++) {
      const retry = attempt > 0;
      const changed = built.step.firstChanged ?? firstChanged;
      o.onEvent?.({
        type: "request",
        step,
        tokens: this.#size.tokens(built.chars),
        ...(window > 0 ? { contextWindow: window } : {}),
        ...(changed === undefined ? {} : { firstChanged: changed }),
      });
      // An overflow's error (and the finish after it) is held back until it is known that the
      // call will not be retried, so a host does not show an error the retry then mends.
      const held: RunEvent[] = [];
      const reply = new Reply((event) => {
        if (!retry && (held.length > 0 || (event.type === "error" && event.contextOverflow))) {
          held.push(event);
        } else o.onEvent?.(event);
      });
      let response: ModelCall["response"];
      try {
        response = await o.model.stream(built.step.request, reply.sink, this.#signal);
      } catch (error) {
        // The model port broke its promise not to throw (a dialect's decoder, a host's sink):
        // the step ends with the error, like any provider failure.
        reply.error = {
          message: `the model call failed: ${describeError(error)}`,
          retryable: false,
        };
        response = { status: 0, headers: new Headers(), cancelled: false };
      }
      const overflow = reply.error?.contextOverflow === true && !response.cancelled;
      if (overflow && !retry && !this.#signal.aborted && await compact("overflow")) {
        compacted = true;
        built = this.#build(env, stepMessages);
        continue;
      }
      for (const event of held) o.onEvent?.(event);
      if (reply.usage !== undefined && reply.error === undefined) {
        this.#size.calibrate(built.chars, reply.usage.promptTokens);
      }
      return { reply, response, compacted };
    }
  }

  #build(env: Env, stepMessages: readonly Message[]): Built {
    const step = chatRequest(this.#o, env, this.#conversation, stepMessages);
    const fixed = toolChars(env.toolDefinitions) + messagesChars(step.blocks);
    const chars = this.#size.conversationChars(this.#conversation) + messagesChars(stepMessages) +
      fixed;
    return { step, chars, fixed };
  }

  async #compact(
    env: Env,
    step: number,
    stepMessages: Message[],
    reason: CompactionReason,
    tokens: number,
    threshold: number,
    fixed: number,
  ): Promise<boolean> {
    const o = this.#o;
    const { window } = windowOf(o);
    let usage: TokenUsage | undefined;
    // Compaction's modules load the first time a conversation needs it: most runs never do.
    const { compactionRecord, runCompaction } = await import("./_compaction.ts");
    const outcome = await runCompaction(o.runtime, env, {
      reason,
      step,
      tokens,
      budget: window,
      threshold,
      keepTurns: o.keepTurns ?? DEFAULT_KEEP_TURNS,
      messages: [...this.#conversation, ...stepMessages],
      state: this.#state(),
      signal: this.#signal,
      // The tools and the prompt blocks of the request, with `messages` as its conversation.
      estimate: (messages) => this.#size.tokens(messagesChars(messages) + fixed),
      summarize: summarizer(o.model, o.modelName, this.#signal, (used) => {
        usage = usage === undefined ? used : addUsage(usage, used);
      }),
    }, o.onEvent);
    const cost = usage === undefined ? undefined : o.price?.(usage);
    if (usage !== undefined) {
      this.usage = this.usage === undefined ? usage : addUsage(this.usage, usage);
      this.cost = this.cost === undefined || cost === undefined ? undefined : this.cost + cost;
    }
    const relief = outcome.success && (window === 0 || outcome.tokensAfter <= threshold);
    this.#floor = relief ? 0 : Math.max(tokens, outcome.tokensAfter) + window * RETRY_GROWTH;
    if (!outcome.success) return false;
    this.#conversation.length = 0;
    for (const message of outcome.messages) this.#conversation.push(message);
    stepMessages.length = 0;
    this.#size.reset();
    this.compactions++;
    await o.session?.appendCompaction(compactionRecord(step, reason, outcome, usage, cost));
    return true;
  }
}

/** What the context window takes of a run's options. */
export type ContextOptions = Pick<
  RunOptions,
  | "runtime"
  | "model"
  | "modelName"
  | "maxTokens"
  | "temperature"
  | "reasoningEffort"
  | "contextWindow"
  | "compactAt"
  | "autoCompact"
  | "keepTurns"
  | "price"
  | "onEvent"
  | "session"
>;
