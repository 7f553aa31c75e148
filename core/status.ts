/**
 * Status segments: the pieces of the status bar, and the snapshot they render from.
 *
 * @module
 */

import type { OwnedRegistry } from "./registry.ts";

/** How a segment wants to look. */
export type StatusTone = "dim" | "good" | "warn" | "crit" | "accent" | "banner";

/**
 * What a segment renders to. Empty text hides the segment.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { StatusText } from "@amber/core";
 * const text: StatusText = { text: "$12.34", tone: "good" };
 * assert.equal(text.tone, "good");
 * ```
 */
export interface StatusText {
  /** The segment's text; empty hides it. */
  readonly text: string;
  /** How it looks. */
  readonly tone: StatusTone;
}

/** One MCP server as the status bar sees it. */
export interface StatusMcpServer {
  /** The server's name. */
  readonly name: string;
  /** Whether it is connected. */
  readonly connected: boolean;
  /** How many tools it offers. */
  readonly tools: number;
}

/** The agent's mode. */
export type AgentMode = "chat" | "plan" | "build";

/**
 * Everything a segment may read, filled by the host before each composition.
 */
export interface StatusSnapshot {
  /** 0-based index of the window. */
  readonly windowIndex: number;
  /** How many windows there are. */
  readonly windowCount: number;
  /** The model in use. */
  readonly model: string;
  /** The reasoning effort, or empty. */
  readonly reasoningEffort: string;
  /** The agent's mode. */
  readonly mode: AgentMode;
  /** Whether the transcript is scrolled back. */
  readonly scrollMode: boolean;
  /** Latency of the last response, ms. */
  readonly latencyMs: number;
  /** Prompt tokens of the last response. */
  readonly promptTokens: number;
  /** Completion tokens of the last response. */
  readonly completionTokens: number;
  /** Tokens per second of the last response. */
  readonly tps: number;
  /** Background jobs running. */
  readonly runningJobs: number;
  /** Seconds until the next job ends, or 0. */
  readonly jobSecondsLeft: number;
  /** The tool running now, or empty. */
  readonly runningTool: string;
  /** MCP servers. */
  readonly mcpServers: readonly StatusMcpServer[];
  /** The wallet readout (`$12.34` or `-`). */
  readonly wallet: string;
  /** The allowance readout (`5h 42%` or `-`). */
  readonly allowance: string;
  /** Dollars of the turn running or last run, when the model's prices are known. */
  readonly turnCost?: number;
  /** Dollars over the session, when known. */
  readonly sessionCost?: number;
  /** The estimated tokens of the last request (after a compaction, of the compacted one). */
  readonly contextTokens?: number;
  /** The model's context window, in tokens, when known. */
  readonly contextWindow?: number;
  /** The share (0 to 1) of the last prompt read from the provider's cache, when reported. */
  readonly cachedShare?: number;
  /** The first prompt block that changed since the request before (the cache missed from it). */
  readonly cacheBreak?: string;
}

/**
 * A snapshot with every field at its resting value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptyStatusSnapshot } from "@amber/core";
 * const snapshot = { ...emptyStatusSnapshot(), model: "gpt-5" };
 * assert.equal(snapshot.model, "gpt-5");
 * ```
 */
export function emptyStatusSnapshot(): StatusSnapshot {
  return {
    windowIndex: 0,
    windowCount: 1,
    model: "",
    reasoningEffort: "",
    mode: "build",
    scrollMode: false,
    latencyMs: 0,
    promptTokens: 0,
    completionTokens: 0,
    tps: 0,
    runningJobs: 0,
    jobSecondsLeft: 0,
    runningTool: "",
    mcpServers: [],
    wallet: "-",
    allowance: "-",
  };
}

/**
 * A status segment capability. `render` runs inside frame composition: pure, fast, no I/O.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptyStatusSnapshot, type StatusSegmentCapability } from "@amber/core";
 * const segment: StatusSegmentCapability = {
 *   kind: "status",
 *   name: "model",
 *   priority: 100,
 *   dropPriority: 90,
 *   render: (snapshot) => ({ text: snapshot.model, tone: "accent" }),
 * };
 * const rendered = segment.render({ ...emptyStatusSnapshot(), model: "gpt-5" });
 * assert.deepEqual(rendered, { text: "gpt-5", tone: "accent" });
 * ```
 */
export interface StatusSegmentCapability {
  /** The dispatch key. */
  readonly kind: "status";
  /** Unique across the harness. */
  readonly name: string;
  /** Position: lower comes first (left). */
  readonly priority: number;
  /** When the bar is too narrow, the lowest drop priority goes first. */
  readonly dropPriority: number;
  /** The segment's text for this snapshot. */
  render(snapshot: StatusSnapshot): StatusText;
}

/** One rendered segment of a composed bar. */
export interface ComposedSegment {
  /** The segment's name. */
  readonly name: string;
  /** Its text. */
  readonly text: string;
  /** Its tone. */
  readonly tone: StatusTone;
}

/** A composed status bar. */
export interface ComposedStatus {
  /** The segments shown, left to right. */
  readonly segments: readonly ComposedSegment[];
  /** The plain text of the bar, at most `width` cells wide. */
  readonly text: string;
  /** The names of the segments dropped for lack of width. */
  readonly dropped: readonly string[];
}

/**
 * The status registry contract.
 */
export interface StatusRegistry extends OwnedRegistry<StatusSegmentCapability> {
  /** Composes the bar for a terminal `width` cells wide. */
  compose(width: number, snapshot: StatusSnapshot): ComposedStatus;
}
