/**
 * A worker's own settings, from `batch.yaml` in its config directory (beside `config.yaml`,
 * which describes sessions and has no place for them): the rate limit of each provider queue,
 * shared by every worker through BullMQ's limiter, and how a dead worker's jobs are found
 * (BullMQ's lock and stall check), and which base URLs other than the providers' own a job may
 * send this worker's keys to (see `base_url_policy.ts`). Every key may be left out.
 *
 * ```yaml
 * rateLimits:            # per queue (a provider name, or `default`): jobs started per window
 *   anthropic: { max: 50, durationMs: 60000 }
 * lockDurationMs: 30000  # a running job's lock, renewed while its session runs
 * stalledIntervalMs: 30000  # how often workers look for jobs whose lock lapsed
 * maxStalledCount: 2     # a job that stalls more often than this fails
 * allowBaseUrls:         # a job's baseUrl other than its provider's own: only these
 *   - http://10.0.0.9:8000
 * ```
 *
 * A dead worker's job is back on its queue between `lockDurationMs / 2` and
 * `lockDurationMs + stalledIntervalMs` after its last sign of life (its lock was renewed at most
 * half a lock ago; the lapse is found at the next stall check): 15 to 60 s by default.
 *
 * @module
 */

import { join } from "node:path";
import { BaseUrlEntryError, checkAllowEntry } from "./base_url_policy.ts";

/** `batch.yaml` cannot be used: a YAML error, an unknown key, a value of the wrong kind. */
export class WorkerSettingsError extends Error {
  /** The file. */
  readonly path: string;

  /** An error about `path`. */
  constructor(path: string, message: string, options?: ErrorOptions) {
    super(`${path}: ${message}`, options);
    this.name = "WorkerSettingsError";
    this.path = path;
  }
}

/** How many jobs of a queue may start in a window, across every worker. */
export interface RateLimit {
  /** Jobs started per window. */
  readonly max: number;
  /** The window, in ms. */
  readonly durationMs: number;
}

/** A worker's settings; see the module documentation. */
export interface WorkerSettings {
  /** Per queue name (provider, or `default`). */
  readonly rateLimits: { readonly [queue: string]: RateLimit };
  /** A running job's lock, in ms (BullMQ's `lockDuration`). */
  readonly lockDurationMs: number;
  /** How often stalled jobs are looked for, in ms (BullMQ's `stalledInterval`). */
  readonly stalledIntervalMs: number;
  /** How many stalls a job survives (BullMQ's `maxStalledCount`). */
  readonly maxStalledCount: number;
  /** Base URLs besides the providers' own that a job may name (loopback ones included). */
  readonly allowBaseUrls: readonly string[];
}

/**
 * The settings when `batch.yaml` says nothing: BullMQ's lock and stall check, no limits, and
 * no base URL but the providers' own.
 */
export const DEFAULT_WORKER_SETTINGS: WorkerSettings = {
  rateLimits: {},
  lockDurationMs: 30_000,
  stalledIntervalMs: 30_000,
  maxStalledCount: 2,
  allowBaseUrls: [],
};

const NUMBERS = ["lockDurationMs", "stalledIntervalMs", "maxStalledCount"] as const;

/**
 * Reads `<configDir>/batch.yaml`; no file is {@linkcode DEFAULT_WORKER_SETTINGS}. Rejects with a
 * {@linkcode WorkerSettingsError} naming the key at fault.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readWorkerSettings, WorkerSettingsError } from "./worker_settings.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/batch.yaml`, "rateLimits:\n  openai: {max: 5, durationMs: 1000}\n");
 * const settings = await readWorkerSettings(dir);
 * assert.deepEqual(settings.rateLimits.openai, { max: 5, durationMs: 1000 });
 * assert.equal(settings.maxStalledCount, 2);
 * await Deno.writeTextFile(`${dir}/batch.yaml`, "lockDuration: 5\n");
 * await assert.rejects(readWorkerSettings(dir), WorkerSettingsError);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readWorkerSettings(configDir: string): Promise<WorkerSettings> {
  const path = join(configDir, "batch.yaml");
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return DEFAULT_WORKER_SETTINGS;
    throw new WorkerSettingsError(path, `cannot read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const { parse } = await import("yaml");
  let data: unknown;
  try {
    data = parse(text) ?? {};
  } catch (error) {
    throw new WorkerSettingsError(path, (error as Error).message, { cause: error });
  }
  const fail = (message: string) => new WorkerSettingsError(path, message);
  if (!isMapping(data)) throw fail("expected a mapping of settings");
  const known = ["rateLimits", ...NUMBERS, "allowBaseUrls"];
  for (const key of Object.keys(data)) {
    if (!known.includes(key)) throw fail(`${key}: unknown key (keys: ${known.join(", ")})`);
  }
  const settings: { -readonly [K in keyof WorkerSettings]: WorkerSettings[K] } = {
    ...DEFAULT_WORKER_SETTINGS,
  };
  for (const key of NUMBERS) {
    const value = data[key];
    if (value === undefined) continue;
    if (!isCount(value)) throw fail(`${key}: expected a whole number above 0, got ${value}`);
    settings[key] = value;
  }
  const limits = data.rateLimits ?? {};
  if (!isMapping(limits)) throw fail("rateLimits: expected a mapping of queue names");
  const rateLimits: Record<string, RateLimit> = {};
  for (const [queue, limit] of Object.entries(limits)) {
    const at = `rateLimits.${queue}`;
    if (!isMapping(limit)) throw fail(`${at}: expected {max, durationMs}`);
    for (const key of Object.keys(limit)) {
      if (key !== "max" && key !== "durationMs") {
        throw fail(`${at}.${key}: unknown key (keys: max, durationMs)`);
      }
    }
    if (!isCount(limit.max) || !isCount(limit.durationMs)) {
      throw fail(`${at}: max and durationMs must be whole numbers above 0`);
    }
    rateLimits[queue] = { max: limit.max, durationMs: limit.durationMs };
  }
  settings.rateLimits = rateLimits;
  settings.allowBaseUrls = allowBaseUrls(data.allowBaseUrls ?? [], fail);
  return settings;
}

function allowBaseUrls(
  value: unknown,
  fail: (message: string) => WorkerSettingsError,
): string[] {
  if (!Array.isArray(value)) throw fail("allowBaseUrls: expected a list of base URLs");
  return value.map((entry, index) => {
    if (typeof entry !== "string") {
      throw fail(`allowBaseUrls[${index}]: expected a URL, got ${JSON.stringify(entry)}`);
    }
    try {
      return checkAllowEntry(entry);
    } catch (error) {
      if (!(error instanceof BaseUrlEntryError)) throw error;
      throw fail(`allowBaseUrls[${index}]: ${error.message}`);
    }
  });
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value > 0;
}
