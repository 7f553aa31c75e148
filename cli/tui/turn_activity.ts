/**
 * What the turn running is doing, for the rule above the input: how long the turn has run, the
 * tool running (its name and summary, what it last said of itself, and for how long), and while
 * a response streams, its live output tokens and tokens per second (from the meter).
 *
 * Tools are told apart by their step and call id together: ids are unique only within one
 * reply. Pure apart from holding state: every method takes the time.
 *
 * @module
 */

import type { SessionEvent } from "../session/mod.ts";
import { sanitizeText } from "./lines.ts";
import { type Meter, meterStreaming } from "./meter.ts";
import { callKey } from "./tool_title.ts";

/** One tool call running. */
interface RunningCall {
  readonly name: string;
  readonly summary: string;
  readonly since: number;
  readonly progress?: string;
}

/** The two halves of the rule's label: what runs, and the figures for the right side. */
export interface ActivityLabel {
  /** What runs: the tool with its summary and duration, or "" while the model answers. */
  readonly doing: string;
  /** The turn's elapsed time, and while a response streams its tokens and tokens per second. */
  readonly figures: string;
}

/**
 * The turn's activity: started with the turn, fed its events, read at each frame.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EMPTY_METER } from "./meter.ts";
 * import { TurnActivity } from "./turn_activity.ts";
 * const activity = new TurnActivity();
 * activity.start(0);
 * const call = { id: "c1", name: "bash", arguments: "{}" };
 * activity.event({ type: "toolStart", step: 0, call, verb: "running", summary: "$ make" }, 1000);
 * assert.deepEqual(activity.label(EMPTY_METER, 4500), { doing: "bash $ make 3s", figures: "4s" });
 * ```
 */
export class TurnActivity {
  #started: number | undefined;
  #calls = new Map<string, RunningCall>();

  /** Whether a turn is being followed. */
  get running(): boolean {
    return this.#started !== undefined;
  }

  /** A turn started at `now`. */
  start(now: number): void {
    this.#started = now;
    this.#calls.clear();
  }

  /** The turn ended (or the conversation it was part of is gone). */
  end(): void {
    this.#started = undefined;
    this.#calls.clear();
  }

  /** Follows the tools of `event`, arrived at `now`. */
  event(event: SessionEvent, now: number): void {
    if (event.type === "toolStart") {
      this.#calls.set(callKey(event.step, event.call.id), {
        name: event.call.name,
        summary: oneLine(event.summary),
        since: now,
      });
    } else if (event.type === "toolProgress") {
      const id = callKey(event.step, event.call.id);
      const call = this.#calls.get(id);
      if (call !== undefined) this.#calls.set(id, { ...call, progress: oneLine(event.message) });
    } else if (event.type === "toolEnd") {
      this.#calls.delete(callKey(event.step, event.call.id));
    }
  }

  /** The label at `now`, given the meter of the response in progress. */
  label(meter: Meter, now: number): ActivityLabel {
    if (this.#started === undefined) return { doing: "", figures: "" };
    const figures = [duration(now - this.#started)];
    // Only a response streaming now has figures that are current; a finished one's are the bar's.
    if (meterStreaming(meter)) {
      figures.push(`↓${meter.completionTokens} tok`);
      if (meter.tps > 0) figures.push(`${meter.tps.toFixed(0)} tok/s`);
    }
    return { doing: this.#doing(now), figures: figures.join(" · ") };
  }

  #doing(now: number): string {
    let latest: RunningCall | undefined;
    for (const call of this.#calls.values()) {
      if (latest === undefined || call.since >= latest.since) latest = call;
    }
    if (latest === undefined) return "";
    const what = [latest.name, latest.summary, latest.progress && `(${latest.progress})`]
      .filter((part) => part).join(" ");
    const more = this.#calls.size > 1 ? ` +${this.#calls.size - 1} more` : "";
    return `${what} ${duration(now - latest.since)}${more}`;
  }
}

/**
 * A duration as the rule shows it: whole seconds, then minutes and seconds, then hours.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { duration } from "./turn_activity.ts";
 * assert.equal(duration(999), "0s");
 * assert.equal(duration(65_000), "1m 05s");
 * assert.equal(duration(3_720_000), "1h 02m");
 * ```
 */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

// A tool's and a plugin's words: one line, no escape sequence reaches the terminal.
function oneLine(text: string): string {
  const line = sanitizeText(String(text).split("\n", 1)[0]).trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}
