/**
 * The types of a run: what the kernel takes (its options, the model port, the approval prompt)
 * and what it gives (its result, its events, how it ended). They stand apart from `run.ts` so
 * the kernel's own modules share them without importing the entry points that import them.
 *
 * @module
 */

import type { CompactionReason } from "../compaction.ts";
import type { ApprovalPolicy } from "../config.ts";
import type { ChatRequest, StreamEvent, StreamSink } from "../dialect.ts";
import type { GateInput, GateOutcome, StateCommand } from "../hooks.ts";
import type { Message, ToolCall } from "../message.ts";
import type { PermissionCall, PermissionVerdict } from "../permissions.ts";
import type { CapabilityBoundError } from "../resolution_error.ts";
import type { PluginRuntime } from "../runtime.ts";
import type { FileChange, ToolResult } from "../tool.ts";
import type { TokenUsage } from "../usage.ts";
import type { SessionFile } from "./transcript.ts";

/** What the kernel needs of a model client; `ProviderClient` of @amber/providers is one. */
export interface ModelPort {
  /** Streams one response into `sink`; never throws for provider or network failures. */
  stream(
    request: ChatRequest,
    sink: StreamSink,
    signal?: AbortSignal,
  ): Promise<{ readonly status: number; readonly headers: Headers; readonly cancelled: boolean }>;
}

/** Why a run failed. */
export type RunFailure =
  | { readonly kind: "capabilityBound"; readonly error: CapabilityBoundError }
  | {
    readonly kind: "provider";
    readonly message: string;
    readonly status?: number;
    readonly retryable: boolean;
  }
  | { readonly kind: "interrupted"; readonly message: string }
  | {
    /**
     * A tool ignored its cancel (at its deadline, `timeouts.tool`) for longer than the grace
     * (`timeouts.toolGrace`): the kernel stopped waiting, committed the step with that tool's
     * result saying so, and ended the turn, since the tool may still be changing things.
     */
    readonly kind: "toolAbandoned";
    readonly message: string;
    /** The tool's name. */
    readonly tool: string;
    /** The plugin that contributed it. */
    readonly pluginId: string;
    /** The call it answered. */
    readonly callId: string;
  };

/** How a run ended. */
export type EndCause =
  | { readonly kind: "completed"; readonly detail?: string }
  | { readonly kind: "cancelled" }
  | { readonly kind: "maxSteps"; readonly steps: number }
  | { readonly kind: "error"; readonly failure: RunFailure };

/** What the kernel reports as it goes, for a host to show; deltas are forwarded as they come. */
export type RunEvent =
  | StreamEvent
  | { readonly type: "stepStart"; readonly step: number }
  | {
    readonly type: "toolStart";
    /** The step whose reply asked for the call: ids are unique only within one reply. */
    readonly step: number;
    readonly call: ToolCall;
    readonly verb: string;
    readonly summary: string;
  }
  | {
    /** A running tool reported how it is going (`ToolCallContext.progress`). */
    readonly type: "toolProgress";
    readonly step: number;
    readonly call: ToolCall;
    readonly message: string;
  }
  | {
    /**
     * A running tool's output as it comes (`ToolCallContext.output`: a command's stdout and
     * stderr), redacted like its result; the result still carries the whole output.
     */
    readonly type: "toolOutput";
    readonly step: number;
    readonly call: ToolCall;
    readonly chunk: string;
  }
  | {
    /** A call ended: every call gets one, also a denied, blocked or unknown one. */
    readonly type: "toolEnd";
    readonly step: number;
    readonly call: ToolCall;
    readonly result: ToolResult;
    readonly durationMs: number;
  }
  | { readonly type: "steer"; readonly guard: string; readonly feedback: string }
  | {
    /**
     * A request is about to be sent: its size estimated from its bytes, the window it must fit,
     * and the first prompt block whose text changed since the previous request (everything from
     * it on misses the provider's prefix cache; absent when nothing changed).
     */
    readonly type: "request";
    readonly step: number;
    readonly tokens: number;
    readonly contextWindow?: number;
    readonly firstChanged?: string;
  }
  | {
    /** A compaction began: the request's estimated tokens, the window and the threshold. */
    readonly type: "compactionStarted";
    readonly reason: CompactionReason;
    readonly tokens: number;
    readonly budget: number;
    readonly threshold: number;
  }
  | {
    /**
     * A compaction ended: on success the conversation is now the compacted one; otherwise
     * `message` says why not (vetoed, the summary failed) and the conversation is unchanged.
     */
    readonly type: "compactionFinished";
    readonly reason: CompactionReason;
    readonly success: boolean;
    readonly tokensBefore: number;
    readonly tokensAfter: number;
    readonly strategy?: string;
    readonly message?: string;
  }
  | {
    readonly type: "stepEnd";
    readonly step: number;
    readonly usage?: TokenUsage;
    /** The step's cost in dollars, when the model's prices are known. */
    readonly cost?: number;
  }
  | { readonly type: "end"; readonly cause: EndCause };

/** The user's answer to an approval prompt. */
export type ApprovalAnswer = "once" | "always" | "deny";

/** What an approval prompt shows. */
export interface ApprovalRequest {
  /** The call. */
  readonly call: ToolCall;
  /** The parsed arguments. */
  readonly args: unknown;
  /** The tool's one-line summary of the call. */
  readonly summary: string;
  /** Set when a gate asked for the confirmation; then "always" is not remembered. */
  readonly correlationId?: string;
  /** The gate's reason for asking, when it gave one. */
  readonly reason?: string;
  /** What the call would do to a file, when its tool can say (`Tool.preview`), redacted. */
  readonly change?: FileChange;
  /**
   * Set when a permission ask rule asked the question (`bash(git push *)`), with where the rule
   * comes from in `reason`; then "always" is not remembered.
   */
  readonly rule?: string;
}

/** Options of `runAgent`. */
export interface RunOptions {
  /** The plugin runtime: the environment, live refresh and events. */
  readonly runtime: PluginRuntime;
  /** The model client, its dialect resolved once for the run. */
  readonly model: ModelPort;
  /** The model name. */
  readonly modelName: string;
  /** The user's prompt that starts this run. */
  readonly prompt: string;
  /** The conversation before it (a resumed session). */
  readonly history?: readonly Message[];
  /** State commands committed before (a resumed session), replayed in order. */
  readonly historyState?: readonly StateCommand[];
  /** Where committed steps go. */
  readonly session?: SessionFile;
  /** The step number to start from (a resumed session continues its numbering). */
  readonly firstStep?: number;
  /** The approval policy for tools that need approval. */
  readonly approval: ApprovalPolicy;
  /** Asks the user; without it, `ask` denies with a message saying how to allow. */
  readonly ask?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
  /**
   * The permission rules (`PermissionRules.decide` of `@amber/core`), asked for every call
   * before the gates: a deny verdict blocks the call naming the rule, an ask verdict puts it to
   * the user whatever the policy (denied with no one to ask, or under `deny`), an allow verdict
   * answers the approval question (a gate's confirmation is still asked). Asked afresh for each
   * call, so a rule saved mid-run applies to the next call. What it throws blocks the call.
   */
  readonly permissions?: (call: PermissionCall) => PermissionVerdict | undefined;
  /** The host's gate, consulted before every plugin gate. */
  readonly hostGate?: (input: GateInput) => GateOutcome | Promise<GateOutcome>;
  /** The most steps (model calls); the backstop for guards that always steer. */
  readonly maxSteps?: number;
  /** Cancels the run. */
  readonly signal?: AbortSignal;
  /** Receives run events. */
  readonly onEvent?: (event: RunEvent) => void;
  /** Passed on to the model. */
  readonly maxTokens?: number;
  /** Passed on to the model. */
  readonly temperature?: number;
  /** Passed on to the model. */
  readonly reasoningEffort?: string;
  /**
   * Called with each response's headers (for passive allowance readouts). What it throws is
   * reported as a diagnostic and the run goes on: a readout is not worth a turn.
   */
  readonly onResponse?: (status: number, headers: Headers) => void;
  /**
   * Applied to every tool result's output and error before the result enters the conversation,
   * the events and the transcript (the host removes its keys with it). When it throws, the
   * result is withheld and replaced by an error saying so.
   */
  readonly redact?: (text: string) => string;
  /**
   * The model's context window, in tokens, or a function the kernel asks before each request
   * (for a host that learns the window while the run goes on: a provider's `/models` answer
   * can take seconds). Without one the kernel compacts only after the provider says the context
   * overflowed.
   */
  readonly contextWindow?: number | (() => number | undefined);
  /** The share of the window a request may fill before the kernel compacts; 0.85 by default. */
  readonly compactAt?: number;
  /** False: no compaction before a request (an overflow still compacts); true by default. */
  readonly autoCompact?: boolean;
  /** The user turns a compaction keeps verbatim; 2 by default. */
  readonly keepTurns?: number;
  /** Prices a step's usage in dollars (undefined when unknown). */
  readonly price?: (usage: TokenUsage) => number | undefined;
}

/** What a run did. */
export interface RunResult {
  /** How it ended. */
  readonly cause: EndCause;
  /** How many steps it took. */
  readonly steps: number;
  /** The whole conversation afterwards. */
  readonly messages: readonly Message[];
  /** Tokens over all steps. */
  readonly usage: TokenUsage;
  /** Dollars over all steps, when every step's price was known. */
  readonly cost?: number;
  /** How many times the conversation was compacted. */
  readonly compactions: number;
  /** The state store afterwards. */
  readonly state: ReadonlyMap<string, unknown>;
}
