/**
 * The interactive session's event reducer: a session event and the time it arrived, applied to
 * the view's state (the tool running, the labels approvals gave calls, the meter the status bar
 * shows), give the next state and the changes to make to the transcript. Pure: no clock, no
 * registry, no screen; {@linkcode applyChanges} carries the changes out on a transcript.
 *
 * @module
 */

import type { ToolCall, ToolResult } from "@amber/core";
import { describeEnd, type SessionEvent } from "../session/mod.ts";
import { sanitizeText } from "./lines.ts";
import type { NoticeTone, ToolLabel, TranscriptView } from "./transcript_view.ts";

/**
 * The last response as the bar shows it: latency to the first delta, token counts, and
 * completion tokens per second of streaming.
 */
export interface Meter {
  /** Latency of the last response to its first delta, ms. */
  readonly latencyMs: number;
  /** Prompt tokens of the last response. */
  readonly promptTokens: number;
  /** Completion tokens of the last response. */
  readonly completionTokens: number;
  /** Completion tokens per second of the last response. */
  readonly tps: number;
  /** When the model call in progress started, ms. */
  readonly started?: number;
  /** When its first delta arrived, ms. */
  readonly first?: number;
}

/** What the view knows between events. */
export interface ViewState {
  /** The tool running now, or "". */
  readonly runningTool: string;
  /** Labels of calls an approval was asked for, by call id, until the call ends. */
  readonly labels: ReadonlyMap<string, ToolLabel>;
  /** The meter. */
  readonly meter: Meter;
}

/** One change to the transcript. */
export type TranscriptChange =
  | { readonly kind: "text"; readonly delta: string }
  | { readonly kind: "reasoning"; readonly delta: string }
  | { readonly kind: "endStream" }
  | { readonly kind: "toolStart"; readonly call: ToolCall; readonly label: ToolLabel }
  | {
    readonly kind: "toolEnd";
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
  meter: Object.freeze({ latencyMs: 0, promptTokens: 0, completionTokens: 0, tps: 0 }),
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
        state: { ...state, meter: meterDelta(state.meter, now) },
        changes: [{ kind: event.type, delta: event.delta }],
      };
    case "toolCallStart":
      return { state: { ...state, meter: meterDelta(state.meter, now) }, changes: [] };
    case "stepEnd":
      return {
        state: { ...state, meter: meterEnd(state.meter, event.usage, now) },
        changes: [{ kind: "endStream" }],
      };
    case "toolStart":
      return {
        state: { ...state, runningTool: event.call.name },
        changes: [{
          kind: "toolStart",
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
    case "toolEnd": {
      const label = state.labels.get(event.call.id);
      const labels = new Map(state.labels);
      labels.delete(event.call.id);
      return {
        state: { ...state, runningTool: "", labels },
        changes: [{
          kind: "toolEnd",
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
      const cause = event.cause;
      if (cause.kind === "cancelled") {
        return {
          state,
          changes: [{
            kind: "notice",
            text: "cancelled (every committed step is kept)",
            tone: "warn",
          }],
        };
      }
      if (cause.kind === "completed") return { state, changes: [] };
      return { state, changes: [{ kind: "notice", text: describeEnd(cause), tone: "error" }] };
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
        transcript.toolStart(change.call, change.label);
        break;
      case "toolEnd":
        transcript.toolEnd(
          change.call,
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

function meterStart(meter: Meter, now: number): Meter {
  const { started: _started, first: _first, ...figures } = meter;
  return { ...figures, started: now };
}

function meterDelta(meter: Meter, now: number): Meter {
  if (meter.first !== undefined || meter.started === undefined) return meter;
  return { ...meter, first: now, latencyMs: now - meter.started };
}

// A response without usage leaves the last figures.
function meterEnd(
  meter: Meter,
  usage: { readonly promptTokens: number; readonly completionTokens: number } | undefined,
  now: number,
): Meter {
  const { started, first: _first, ...figures } = meter;
  if (usage === undefined || started === undefined) return figures;
  const seconds = (now - (meter.first ?? started)) / 1000;
  return {
    ...figures,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    tps: seconds > 0.05 ? usage.completionTokens / seconds : 0,
  };
}

function firstLine(text: string): string {
  // A plugin's words: no escape sequence of its reaches the terminal.
  const line = sanitizeText(String(text).split("\n", 1)[0]);
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
