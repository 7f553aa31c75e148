/**
 * The status bar: `StatusRegistry.compose(width, snapshot)` at every frame, drawn with each
 * segment's tone; the snapshot filled from the live session (latency, tokens and tokens per
 * second of the last response, the running tool, running jobs, scroll mode) on top of what the
 * host knows (model, wallet, allowance). The registry drops segments by drop priority when the
 * bar is too narrow, so a resize recomposes at once.
 *
 * The TUI adds the segments only an interactive session has values for (mode, effort, latency,
 * tokens per second, the context window's fill, the prompt cache's share, cost, jobs, MCP
 * servers connecting, scroll), owned by `core`, so `amber status` stays as it was.
 *
 * @module
 */

import {
  type ComposedStatus,
  emptyStatusSnapshot,
  type StatusMcpServer,
  type StatusRegistry,
  type StatusSegmentCapability,
  type StatusSnapshot,
  type StatusTone,
} from "@amber/core";
import { type AgentSession, dollars } from "../session/mod.ts";
import type { Span, StyledLine } from "./lines.ts";
import type { Meter } from "./meter.ts";
import type { PromptFigures } from "./reducer.ts";
import { type Style, style, Styles } from "./style.ts";

const SEPARATOR: Span = { text: " │ ", style: Styles.dim };

const TONES: { readonly [tone in StatusTone]: Style } = {
  dim: Styles.dim,
  good: Styles.good,
  warn: Styles.warn,
  crit: style({ fg: "red", bold: true }),
  accent: Styles.accent,
  banner: Styles.banner,
};

/**
 * The bar as a styled line: the composed segments in their tones, joined by ` │ `.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statusLine } from "./status_line.ts";
 * import { plainText } from "./lines.ts";
 * const composed = {
 *   segments: [{ name: "model", text: "gpt-5", tone: "accent" as const }, {
 *     name: "tokens",
 *     text: "↑12 ↓3",
 *     tone: "dim" as const,
 *   }],
 *   text: "gpt-5 │ ↑12 ↓3",
 *   dropped: [],
 * };
 * assert.equal(plainText(statusLine(composed)), "gpt-5 │ ↑12 ↓3");
 * ```
 */
export function statusLine(composed: ComposedStatus): StyledLine {
  const spans: Span[] = [];
  for (const segment of composed.segments) {
    if (spans.length > 0) spans.push(SEPARATOR);
    spans.push({ text: segment.text, style: TONES[segment.tone] ?? Styles.dim });
  }
  return spans;
}

/**
 * Composes the bar for `width` from `snapshot`.
 *
 * @example
 * ```ts ignore
 * const line = composeStatus(host.registries.status, 100, snapshot);
 * ```
 */
export function composeStatus(
  registry: StatusRegistry,
  width: number,
  snapshot: StatusSnapshot,
): StyledLine {
  return statusLine(registry.compose(width, snapshot));
}

/** What only the live screen knows, for the bar. */
export interface LiveFigures {
  /** Whether the transcript is scrolled back. */
  readonly scrollMode: boolean;
  /** The meter of the last response. */
  readonly meter: Meter;
  /** The tool running, or "". */
  readonly runningTool: string;
  /** The last request's figures, when there was one. */
  readonly prompt?: PromptFigures;
}

/**
 * What the bar shows of the session and the host, refreshed off the frame path (the account
 * readouts, the running jobs) so that composing a frame only reads.
 *
 * @example
 * ```ts ignore
 * const feed = new StatusFeed(session, () => app.invalidate());
 * feed.refresh();
 * const bar = composeStatus(registry, width, feed.snapshot(figures));
 * ```
 */
export class StatusFeed {
  readonly #session: AgentSession;
  readonly #changed: () => void;
  #base: StatusSnapshot = emptyStatusSnapshot();
  #jobs = 0;
  #mcp: readonly StatusMcpServer[] = [];

  /** A feed over `session`; `changed` is called when a refetched readout lands. */
  constructor(session: AgentSession, changed: () => void) {
    this.#session = session;
    this.#changed = changed;
  }

  /**
   * Rereads the session's snapshot (model, effort, cached readouts), the running jobs and the
   * MCP servers.
   */
  refresh(): void {
    this.#base = this.#session.snapshot();
    const host = this.#session.host;
    this.#jobs = host.services.jobs?.list().filter((job) => job.running).length ?? 0;
    this.#mcp = host.mcp?.list().map((server) => ({
      name: server.name,
      connected: server.state.status === "connected",
      tools: server.tools.filter((tool) => !tool.disabled).length,
    })) ?? [];
  }

  /** Refetches the wallet of the session's account; the bar shows it once it lands. */
  refreshWallet(): void {
    const account = this.#session.account();
    if (account === undefined) return;
    this.#session.host.registries.wallet.refresh(account).then(() => {
      this.refresh();
      this.#changed();
    }, () => {});
  }

  /** The snapshot the bar is composed from, with the screen's live figures. */
  snapshot(live: LiveFigures): StatusSnapshot {
    return {
      ...this.#base,
      model: this.#session.model,
      scrollMode: live.scrollMode,
      latencyMs: live.meter.latencyMs,
      promptTokens: live.meter.promptTokens,
      completionTokens: live.meter.completionTokens,
      tps: live.meter.tps,
      runningJobs: this.#jobs,
      runningTool: live.runningTool,
      mcpServers: this.#mcp,
      // Every key present, set or not: a sandboxed plugin's segment is sent the snapshot again
      // only when a key of it changed.
      turnCost: this.#session.turnCost,
      sessionCost: this.#session.cost,
      contextTokens: live.prompt?.tokens,
      contextWindow: live.prompt?.window ?? this.#session.info.contextWindow,
      cachedShare: live.prompt?.cachedShare,
      cacheBreak: live.prompt?.firstChanged,
    };
  }
}

/**
 * The MCP segment's text: `mcp 2/3` while some server is not connected (connecting, retrying,
 * failed), nothing once all are.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpSegmentText } from "./status_line.ts";
 * const server = (connected: boolean) => ({ name: "s", connected, tools: 1 });
 * assert.equal(mcpSegmentText([server(true), server(false), server(true)]), "mcp 2/3");
 * assert.equal(mcpSegmentText([server(true)]), "");
 * ```
 */
export function mcpSegmentText(servers: readonly StatusMcpServer[]): string {
  const connected = servers.filter((server) => server.connected).length;
  return connected < servers.length ? `mcp ${connected}/${servers.length}` : "";
}

/**
 * The cost segment's text: the turn's dollars and the session's, once a price was known.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptyStatusSnapshot } from "@amber/core";
 * import { costSegmentText } from "./status_line.ts";
 * const s = emptyStatusSnapshot();
 * assert.equal(costSegmentText({ ...s, turnCost: 0.012, sessionCost: 0.34 }), "$0.012 / $0.340");
 * assert.equal(costSegmentText({ ...s, sessionCost: 0.34 }), "$0.000 / $0.340");
 * assert.equal(costSegmentText(s), "");
 * ```
 */
export function costSegmentText(s: StatusSnapshot): string {
  if (s.sessionCost === undefined) return "";
  return `${dollars(s.turnCost ?? 0)} / ${dollars(s.sessionCost)}`;
}

/**
 * The context segment's text: the last request's estimated size as a share of the window.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptyStatusSnapshot } from "@amber/core";
 * import { contextSegmentText } from "./status_line.ts";
 * const s = emptyStatusSnapshot();
 * assert.equal(contextSegmentText({ ...s, contextTokens: 620, contextWindow: 1000 }), "ctx 62%");
 * assert.equal(contextSegmentText({ ...s, contextTokens: 620 }), "");
 * ```
 */
export function contextSegmentText(s: StatusSnapshot): string {
  const share = contextShare(s);
  return share === undefined ? "" : `ctx ${Math.round(share * 100)}%`;
}

/**
 * The cache segment's text: the share of the last prompt the provider read from its cache, and
 * the first prompt block that changed when the cached prefix broke.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptyStatusSnapshot } from "@amber/core";
 * import { cacheSegmentText } from "./status_line.ts";
 * const s = emptyStatusSnapshot();
 * assert.equal(cacheSegmentText({ ...s, cachedShare: 0.914 }), "cache 91%");
 * assert.equal(cacheSegmentText({ ...s, cachedShare: 0.1, cacheBreak: "tools" }), "cache 10% (tools changed)");
 * assert.equal(cacheSegmentText({ ...s, cacheBreak: "system" }), "cache: system changed");
 * assert.equal(cacheSegmentText(s), "");
 * ```
 */
export function cacheSegmentText(s: StatusSnapshot): string {
  const broke = s.cacheBreak === undefined || s.cacheBreak === "" ? undefined : s.cacheBreak;
  if (s.cachedShare === undefined) return broke === undefined ? "" : `cache: ${broke} changed`;
  const share = `cache ${Math.round(s.cachedShare * 100)}%`;
  return broke === undefined ? share : `${share} (${broke} changed)`;
}

function contextShare(s: StatusSnapshot): number | undefined {
  const tokens = s.contextTokens ?? 0;
  const window = s.contextWindow ?? 0;
  return tokens > 0 && window > 0 ? tokens / window : undefined;
}

function ms(value: number): string {
  return value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(1)} s`;
}

/**
 * The segments the TUI adds for what only a live session knows. Each hides when it has nothing
 * to say; their drop priorities put them below the model and the token counts.
 */
export const TUI_SEGMENTS: readonly StatusSegmentCapability[] = [
  {
    kind: "status",
    name: "scroll",
    priority: 50,
    dropPriority: 95,
    render: (s) => ({ text: s.scrollMode ? "SCROLL" : "", tone: "banner" }),
  },
  {
    kind: "status",
    name: "effort",
    priority: 110,
    dropPriority: 30,
    render: (s) => ({ text: s.reasoningEffort ? `effort ${s.reasoningEffort}` : "", tone: "dim" }),
  },
  {
    kind: "status",
    name: "mode",
    priority: 120,
    dropPriority: 15,
    render: (s) => ({ text: s.mode, tone: "dim" }),
  },
  {
    kind: "status",
    name: "context",
    priority: 310,
    dropPriority: 45,
    render: (s) => {
      const share = contextShare(s) ?? 0;
      return {
        text: contextSegmentText(s),
        tone: share >= 0.95 ? "crit" : share >= 0.8 ? "warn" : "dim",
      };
    },
  },
  {
    kind: "status",
    name: "cache",
    priority: 320,
    dropPriority: 12,
    render: (s) => ({ text: cacheSegmentText(s), tone: s.cacheBreak ? "warn" : "dim" }),
  },
  {
    kind: "status",
    name: "cost",
    priority: 420,
    dropPriority: 42,
    render: (s) => ({ text: costSegmentText(s), tone: "dim" }),
  },
  {
    kind: "status",
    name: "latency",
    priority: 400,
    dropPriority: 25,
    render: (s) => ({ text: s.latencyMs > 0 ? ms(s.latencyMs) : "", tone: "dim" }),
  },
  {
    kind: "status",
    name: "tps",
    priority: 410,
    dropPriority: 35,
    render: (s) => ({ text: s.tps > 0 ? `${s.tps.toFixed(0)} tok/s` : "", tone: "dim" }),
  },
  {
    kind: "status",
    name: "jobs",
    priority: 500,
    dropPriority: 38,
    render: (s) => ({
      text: s.runningJobs > 0 ? `${s.runningJobs} job${s.runningJobs === 1 ? "" : "s"}` : "",
      tone: "warn",
    }),
  },
  {
    kind: "status",
    name: "mcp",
    priority: 510,
    dropPriority: 36,
    render: (s) => ({ text: mcpSegmentText(s.mcpServers), tone: "warn" }),
  },
];
