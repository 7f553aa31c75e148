/**
 * What the plugin runtime tells its host about plugin faults, so that the host can remember them
 * across processes (amber keeps them in the config directory and `amber doctor` lists them).
 *
 * A fault is plugin code that threw, rejected or overran its deadline where the host caught it:
 * a hook, a gate, a render, a tick, a command handler, a floating rejection traced to the
 * plugin's files. A plugin that faults `quarantine.faults` times within
 * `quarantine.windowSeconds` is quarantined: switched off for the session. A plugin whose
 * `initialize` overran its deadline is held: a host that remembers it does not start the plugin
 * again until the user switches it back on, which releases it.
 *
 * @module
 */

import type { Seam } from "./limits.ts";

/** What happened to a plugin. */
export type FaultEventKind = "fault" | "timeout" | "quarantine" | "release";

/**
 * One thing a host may want to remember about a plugin's faults.
 *
 * - `fault`: plugin code threw, rejected or overran a deadline; the host carried on.
 * - `timeout`: the plugin's `initialize` overran its deadline (`seam` says so); the plugin is
 *   failed, and a host that persists this should {@linkcode PluginRuntime.hold} it at its next
 *   start rather than wait again.
 * - `quarantine`: it faulted too often and was switched off for the session.
 * - `release`: the user switched it on again, which ends a hold or a quarantine.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { FaultEvent } from "@amber/core";
 * const event: FaultEvent = {
 *   kind: "timeout",
 *   pluginId: "slow",
 *   seam: "initialize",
 *   where: "initialize",
 *   message: "plugin 'slow': initialize did not finish within 5000 ms",
 *   at: Date.UTC(2026, 0, 1),
 * };
 * assert.equal(event.seam, "initialize");
 * ```
 */
export interface FaultEvent {
  /** What happened. */
  readonly kind: FaultEventKind;
  /** The plugin concerned. */
  readonly pluginId: string;
  /** Where, as a diagnostic says it: `hook 'h' at AfterTool`, `tick`, `initialize`... */
  readonly where: string;
  /** What happened, in one line. */
  readonly message: string;
  /** When, in milliseconds since the epoch. */
  readonly at: number;
  /** The seam whose deadline was overrun, for a `timeout`. */
  readonly seam?: Seam;
}
