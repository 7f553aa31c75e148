/**
 * How long plugin code may take at each seam, how many faults a plugin may make before it is
 * switched off, and the deadline every seam runs under. The numbers live in `config.yaml`
 * (`timeouts`, `quarantine`); a plugin's own overrides sit under `timeouts.plugins.<id>`.
 *
 * @module
 */

import type { AmberConfig, QuarantineConfig, Seam } from "./config.ts";

// The config types are defined beside the rest of `config.yaml`; the seams are named here too.
export type { QuarantineConfig, Seam, SeamTimeouts, TimeoutConfig } from "./config.ts";
import { AmberError } from "./errors.ts";

/** Every seam, in the order the docs list them. */
export const SEAMS: readonly Seam[] = Object.freeze([
  "tool",
  "toolGrace",
  "hook",
  "gate",
  "guard",
  "compactor",
  "action",
  "command",
  "wallet",
  "import",
  "initialize",
]);

/**
 * The defaults, in milliseconds. `toolGrace` is how long a tool that ignores its cancel signal
 * is waited for before it is abandoned.
 */
export const DEFAULT_TIMEOUTS: { readonly [S in Seam]: number } = Object.freeze({
  tool: 600_000,
  toolGrace: 2_000,
  hook: 5_000,
  gate: 5_000,
  guard: 5_000,
  // A compactor may ask the model for a summary of a long conversation.
  compactor: 180_000,
  action: 60_000,
  command: 30_000,
  wallet: 10_000,
  import: 5_000,
  initialize: 5_000,
});

/** The quarantine defaults: 3 faults within 60 seconds. */
export const DEFAULT_QUARANTINE: Required<QuarantineConfig> = Object.freeze({
  faults: 3,
  windowSeconds: 60,
});

/**
 * The deadline, in milliseconds, for `seam`: the plugin's own override, then the configured
 * value, then the default.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { timeoutFor } from "@amber/core";
 * const config = { plugins: {}, timeouts: { hook: 100, plugins: { slow: { hook: 900 } } } };
 * assert.equal(timeoutFor(config, "hook", "slow"), 900);
 * assert.equal(timeoutFor(config, "hook", "other"), 100);
 * assert.equal(timeoutFor(config, "gate"), 5_000);
 * ```
 */
export function timeoutFor(config: AmberConfig, seam: Seam, pluginId?: string): number {
  const timeouts = config.timeouts;
  const own = pluginId === undefined ? undefined : timeouts?.plugins?.[pluginId]?.[seam];
  return positive(own) ?? positive(timeouts?.[seam]) ?? DEFAULT_TIMEOUTS[seam];
}

/**
 * The quarantine settings in force.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { quarantineSettings } from "@amber/core";
 * assert.deepEqual(quarantineSettings({ plugins: {}, quarantine: { faults: 5 } }), {
 *   faults: 5,
 *   windowSeconds: 60,
 * });
 * ```
 */
export function quarantineSettings(config: AmberConfig): Required<QuarantineConfig> {
  return {
    faults: positive(config.quarantine?.faults) ?? DEFAULT_QUARANTINE.faults,
    windowSeconds: positive(config.quarantine?.windowSeconds) ?? DEFAULT_QUARANTINE.windowSeconds,
  };
}

/** Plugin code did not finish within its deadline. */
export class DeadlineError extends AmberError {
  /** What was waited for, as in "tool gate 'x' of plugin 'y'". */
  readonly what: string;
  /** The deadline, in milliseconds. */
  readonly ms: number;
  /** Creates the error. */
  constructor(what: string, ms: number, options?: ErrorOptions) {
    super(`${what} did not finish within ${ms} ms`, options);
    this.name = "DeadlineError";
    this.what = what;
    this.ms = ms;
  }
}

/**
 * Runs `work` under a deadline: resolves or rejects as it does, or rejects with a
 * {@linkcode DeadlineError} after `ms`. A synchronous throw becomes a rejection. The timer is
 * cleared either way, so nothing is left pending; `work` itself is not stopped (pass it an
 * abort signal for that).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DeadlineError, withDeadline } from "@amber/core";
 * assert.equal(await withDeadline(() => 1, 50, "quick"), 1);
 * await assert.rejects(
 *   withDeadline(() => new Promise(() => {}), 10, "hook 'h'"),
 *   (error) => error instanceof DeadlineError && error.message === "hook 'h' did not finish within 10 ms",
 * );
 * await assert.rejects(withDeadline(() => { throw new Error("x"); }, 10, "s"), /x/);
 * ```
 */
export function withDeadline<T>(
  work: () => T | PromiseLike<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(what, ms)), ms);
  });
  let running: Promise<T>;
  try {
    running = Promise.resolve(work());
  } catch (error) {
    running = Promise.reject(error);
  }
  return Promise.race([running, deadline]).finally(() => clearTimeout(timer));
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}
