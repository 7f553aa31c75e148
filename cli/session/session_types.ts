/**
 * The types of an agent session: what `AgentSession.open` takes, what one turn runs
 * with, and what a compaction on request did. They stand apart from `session.ts` so that the
 * session's helpers and front ends share them without the session's imports.
 *
 * @module
 */

import type { ApprovalPolicy, CommandTurn } from "@amber/core";
import type { ApprovalAnswer, ApprovalRequest } from "@amber/core/kernel";
import type { Host, HostOptions } from "../host.ts";
import type { EnvReader, ProviderOverrides } from "../provider_settings.ts";

/** Answers an approval question; `signal` is aborted when the question is moot (a cancel). */
export type ApprovalHandler = (
  request: ApprovalRequest,
  signal: AbortSignal,
) => Promise<ApprovalAnswer>;

/** What the session gives the host it opens. */
export type SessionHostServices = Required<Pick<HostOptions, "subagents">>;

/** What `AgentSession.open` takes. */
export interface AgentSessionOptions {
  /**
   * Opens the host with the session's services (its sub-agent service); the front end adds its
   * own (UI, commands, a cancel signal) and the embedder its plugins and directories.
   */
  readonly openHost: (services: SessionHostServices) => Promise<Host>;
  /** `--provider`, `--model`, `--base-url`, `--effort`. */
  readonly overrides?: ProviderOverrides;
  /** The approval policy; config.yaml's `approval`, else `ask`, by default. */
  readonly approval?: ApprovalPolicy;
  /** The most model calls per turn; 50 by default. */
  readonly maxSteps?: number;
  /** Reads an environment variable (the key); `Deno.env.get` by default. */
  readonly env?: EnvReader;
  /**
   * The share of the model's context window a request may fill before the conversation is
   * compacted (`amber run --compact-at`); config.yaml's `compaction.at`, else 0.85, by default.
   */
  readonly compactAt?: number;
}

/** What `AgentSession.compact` did. */
export interface CompactionOutcome {
  /** Whether the conversation is now the compacted one. */
  readonly compacted: boolean;
  /** The estimated tokens of the conversation before. */
  readonly tokensBefore: number;
  /** The estimated tokens after (the same as before when nothing was compacted). */
  readonly tokensAfter: number;
  /** Who made the compacted conversation: `default` or a compactor's name. */
  readonly strategy?: string;
  /** Why nothing was compacted (no conversation yet, a veto, a failed summary). */
  readonly message?: string;
}

/** What one turn runs with. */
export interface TurnOptions {
  /** Cancels the turn; the kernel commits what was done, marked cancelled. */
  readonly signal?: AbortSignal;
  /** Answers approval questions; without it, a tool that needs approval is denied. */
  readonly ask?: ApprovalHandler;
  /** What the command that gave the prompt asks of this turn only (its model, its tools). */
  readonly command?: CommandTurn;
}
