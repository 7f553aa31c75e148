/**
 * The interactive session's event reducer: a session event and the time it arrived, applied to
 * the view's state (the tool running, the labels approvals gave calls, the meter and the prompt
 * figures the status bar shows), give the next state and the changes to make to the transcript
 * (a compaction's notices among them). Pure: no clock, no registry, no screen;
 * {@linkcode applyChanges} carries the changes out on a transcript.
 *
 * @module
 */

import type { ToolCall, ToolResult } from "@amber/core";
import { describeCompaction, describeEnd, type SessionEvent } from "../session/mod.ts";
import { sanitizeText } from "./lines.ts";
import {
  EMPTY_METER,
  type Meter,
  meterDelta,
  meterEnd,
  meterFinish,
  meterRequest,
  meterStart,
  meterUsage,
} from "./meter.ts";
import type { NoticeTone, ToolLabel, TranscriptView } from "./transcript_view.ts";

export type { Meter } from "./meter.ts";

/**
 * The last request as the bar shows it: its estimated size against the window (after a
 * compaction, the compacted conversation's), the share of its prompt the provider read from its
 * cache, and the first prompt block that changed since the request before.
 */
export interface PromptFigures {
  /** Estimated tokens of the last request. */
  readonly tokens: number;
  /** The context window it had to fit, when known. */
  readonly window?: number;
  /** The first prompt block whose text changed since the request before, if one did. */
  readonly firstChanged?: string;
  /** The share (0 to 1) of its prompt read from the cache, once the provider reported it. */
  readonly cachedShare?: number;
}

/** What the view knows between events. */
export interface ViewState {
  /** The tool running now, or "". */
  readonly runningTool: string;
  /**
   * Labels of calls an approval was asked for, by call id, until the call ends (or its turn:
   * an id is unique only within one reply, so none outlives the turn that asked).
   */
  readonly labels: ReadonlyMap<string, ToolLabel>;
  /** The meter. */
  readonly meter: Meter;
  /** The last request's figures; absent before the first (and after `/clear`). */
  readonly prompt?: PromptFigures;
}

/** One change to the transcript. */
export type TranscriptChange =
  | { readonly kind: "text"; readonly delta: string }
  | { readonly kind: "reasoning"; readonly delta: string }
  | { readonly kind: "endStream" }
  | {
    readonly kind: "toolStart";
    /** The step whose reply asked for the call (with the call, which row it is). */
    readonly step: number;
    readonly call: ToolCall;
    readonly label: ToolLabel;
  }
  | {
    /** Output the running call streamed (already redacted). */
    readonly kind: "toolOutput";
    readonly step: number;
    readonly call: ToolCall;
    readonly chunk: string;
  }
  | {
    readonly kind: "toolEnd";
    readonly step: number;
    readonly call: ToolCall;
    readonly result: ToolResult;
    readonly durationMs: number;
    /** The label an approval gave the call; absent: the tool's own. */
    readonly label?: ToolLabel;
  }
  | { readonly kind: "notice"; readonly text: string; readonly tone: NoticeTone };

/** The state before any event. */
export const INITIAL_VIEW: ViewState = Object.freeze({
  runningTool: "",
  labels: new Map<string, ToolLabel>(),
  meter: EMPTY_METER,
});

/**
 * Applies `event`, arrived at `now` (ms), to `state`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { INITIAL_VIEW, reduce } from "./reducer.ts";
 * let state = reduce(INITIAL_VIEW, { type: "stepStart", step: 0 }, 1000).state;
 * const next = reduce(state, { type: "text", delta: "Hi" }, 1250);
 * assert.deepEqual(next.changes, [{ kind: "text", delta: "Hi" }]);
 * state = reduce(next.state, { type: "stepEnd", step: 0, usage: { promptTokens: 100, completionTokens: 50 } }, 2250).state;
 * assert.deepEqual([state.meter.latencyMs, state.meter.tps, state.meter.promptTokens], [250, 50, 100]);
 * ```
 */
export function reduce(
  state: ViewState,
  event: SessionEvent,
  now: number,
): { readonly state: ViewState; readonly changes: readonly TranscriptChange[] } {
  switch (event.type) {
    case "stepStart":
      return { state: { ...state, meter: meterStart(state.meter, now) }, changes: [] };
    case "text":
    case "reasoning":
      return {
        state: { ...state, meter: meterDelta(state.meter, event.delta.length, now) },
        changes: [{ kind: event.type, delta: event.delta }],
      };
    case "toolCallStart":
      return {
        state: { ...state, meter: meterDelta(state.meter, event.name.length, now) },
        changes: [],
      };
    case "toolCallDelta":
      return {
        state: { ...state, meter: meterDelta(state.meter, event.delta.length, now) },
        changes: [],
      };
    case "finish":
    case "error":
      // The stream is over; the step's tools may run a long while before it ends.
      return { state: { ...state, meter: meterFinish(state.meter, now) }, changes: [] };
    case "stepEnd":
      return {
        state: { ...state, meter: meterEnd(state.meter, event.usage, now) },
        changes: [{ kind: "endStream" }],
      };
    case "request": {
      // A new request: the cache figure of the one before is no longer current. The first one
      // the view sees has nothing before it to have changed from (the kernel compares with the
      // last request of its process, none after a start or a resume).
      const changed = state.prompt === undefined ? undefined : event.firstChanged;
      return {
        state: {
          ...state,
          meter: meterRequest(state.meter, event.tokens, now),
          prompt: {
            tokens: event.tokens,
            ...(event.contextWindow === undefined ? {} : { window: event.contextWindow }),
            ...(changed === undefined ? {} : { firstChanged: changed }),
          },
        },
        changes: [],
      };
    }
    case "usage": {
      const metered = { ...state, meter: meterUsage(state.meter, event, now) };
      const prompt = state.prompt;
      if (prompt === undefined || event.cachedTokens === undefined || event.promptTokens <= 0) {
        return { state: metered, changes: [] };
      }
      const cachedShare = Math.min(1, event.cachedTokens / event.promptTokens);
      return { state: { ...metered, prompt: { ...prompt, cachedShare } }, changes: [] };
    }
    case "compactionStarted": {
      // The window, for the figure after it, when no request said it yet (a resumed session).
      const prompt = state.prompt ?? { tokens: event.tokens };
      return {
        state: event.budget > 0 && prompt.window === undefined
          ? { ...state, prompt: { ...prompt, window: event.budget } }
          : state,
        changes: [{ kind: "notice", text: describeCompaction(event), tone: "dim" }],
      };
    }
    case "compactionFinished": {
      const notice: TranscriptChange = {
        kind: "notice",
        text: describeCompaction(event),
        tone: event.success ? "good" : "warn",
      };
      if (!event.success) return { state, changes: [notice] };
      // The conversation is the compacted one now: what the next request will carry. Its cache
      // figure was of the prompt before.
      const window = state.prompt?.window;
      return {
        state: {
          ...state,
          prompt: { tokens: event.tokensAfter, ...(window === undefined ? {} : { window }) },
        },
        changes: [notice],
      };
    }
    case "toolStart":
      return {
        state: { ...state, runningTool: event.call.name },
        changes: [{
          kind: "toolStart",
          step: event.step,
          call: event.call,
          label: { verb: event.verb, summary: event.summary },
        }],
      };
    case "toolProgress":
      // The rule under the transcript shows what the running tool last said of itself.
      return {
        state: { ...state, runningTool: `${event.call.name}: ${firstLine(event.message)}` },
        changes: [],
      };
    case "toolOutput":
      return {
        state,
        changes: [{ kind: "toolOutput", step: event.step, call: event.call, chunk: event.chunk }],
      };
    case "toolEnd": {
      const label = state.labels.get(event.call.id);
      const labels = new Map(state.labels);
      labels.delete(event.call.id);
      return {
        state: { ...state, runningTool: "", labels },
        changes: [{
          kind: "toolEnd",
          step: event.step,
          call: event.call,
          result: event.result,
          durationMs: event.durationMs,
          ...(label === undefined ? {} : { label }),
        }],
      };
    }
    case "steer":
      return {
        state,
        changes: [{ kind: "notice", text: `↻ ${event.guard}: ${event.feedback}`, tone: "dim" }],
      };
    case "end": {
      // The turn is over: a label it gave a call cannot belong to a later call of that id.
      const ended = state.labels.size === 0 ? state : { ...state, labels: INITIAL_VIEW.labels };
      const cause = event.cause;
      if (cause.kind === "cancelled") {
        return {
          state: ended,
          changes: [{
            kind: "notice",
            text: "cancelled (every committed step is kept)",
            tone: "warn",
          }],
        };
      }
      if (cause.kind === "completed") return { state: ended, changes: [] };
      return {
        state: ended,
        changes: [{ kind: "notice", text: describeEnd(cause), tone: "error" }],
      };
    }
    case "retry":
      return { state, changes: [{ kind: "notice", text: event.message, tone: "warn" }] };
    default:
      // The session's file events: the commands that open and resume sessions say those.
      return { state, changes: [] };
  }
}

/**
 * Remembers the label an approval question gave a call, for its line should it never run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { INITIAL_VIEW, withLabel } from "./reducer.ts";
 * const state = withLabel(INITIAL_VIEW, "c1", { verb: "running", summary: "$ ls" });
 * assert.equal(state.labels.get("c1")?.summary, "$ ls");
 * assert.equal(INITIAL_VIEW.labels.size, 0);
 * ```
 */
export function withLabel(state: ViewState, id: string, label: ToolLabel): ViewState {
  return { ...state, labels: new Map(state.labels).set(id, label) };
}

/**
 * The view once the conversation it showed is gone (`/clear`, `/resume`): the figures of its
 * last response and request are not current for the next one, so the bar shows none of them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forgetConversation, INITIAL_VIEW, reduce } from "./reducer.ts";
 * const state = reduce(INITIAL_VIEW, { type: "request", step: 0, tokens: 900, contextWindow: 1000 }, 0).state;
 * assert.equal(state.prompt?.tokens, 900);
 * assert.equal(forgetConversation(state).prompt, undefined);
 * ```
 */
export function forgetConversation(state: ViewState): ViewState {
  const { prompt: _prompt, ...rest } = state;
  return { ...rest, meter: INITIAL_VIEW.meter };
}

/**
 * Carries `changes` out on `transcript`; `label` gives a call's label from its tool when no
 * approval gave it one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyChanges } from "./reducer.ts";
 * import { TranscriptView } from "./transcript_view.ts";
 * const transcript = new TranscriptView();
 * applyChanges(transcript, [{ kind: "notice", text: "hello", tone: "dim" }], () => ({ verb: "", summary: "" }));
 * assert.equal(transcript.size, 1);
 * ```
 */
export function applyChanges(
  transcript: TranscriptView,
  changes: readonly TranscriptChange[],
  label: (call: ToolCall) => ToolLabel,
): void {
  for (const change of changes) {
    switch (change.kind) {
      case "text":
        transcript.appendText(change.delta);
        break;
      case "reasoning":
        transcript.appendReasoning(change.delta);
        break;
      case "endStream":
        transcript.endStream();
        break;
      case "toolStart":
        transcript.toolStart(change, change.label);
        break;
      case "toolOutput":
        transcript.toolOutput(change, change.chunk);
        break;
      case "toolEnd":
        transcript.toolEnd(
          change,
          change.result,
          change.durationMs,
          change.label ?? label(change.call),
        );
        break;
      case "notice":
        transcript.notice(change.text, change.tone);
        break;
    }
  }
}

function firstLine(text: string): string {
  // A plugin's words: no escape sequence of its reaches the terminal.
  const line = sanitizeText(String(text).split("\n", 1)[0]);
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
