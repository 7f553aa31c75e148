/**
 * The quota windows Claude's unified rate-limit headers report to subscription accounts.
 * Private to the package; `anthropicAllowance` is public through `@amber/providers/anthropic`.
 *
 * @module
 */

import type { AllowanceSnapshot, AllowanceWindow } from "@amber/core";

/** A utilization header value as a percentage: a fraction (0.42), a percentage, or `42%`. */
function percentOf(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  const isPercent = text.endsWith("%");
  const number = Number(isPercent ? text.slice(0, -1) : text);
  if (text.length === 0 || !Number.isFinite(number) || number < 0) return undefined;
  // Anthropic sends a fraction; a value above 1 can only be a percentage already.
  const percent = isPercent || number > 1 ? number : number * 100;
  return Math.round(percent * 100) / 100;
}

/** A reset header value as ISO 8601: unix seconds (what Anthropic sends), milliseconds or a date. */
function resetOf(value: string | null): string | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (text.length === 0) return undefined;
  const number = Number(text);
  let ms: number;
  if (Number.isFinite(number)) {
    if (number <= 0) return undefined;
    ms = number >= 1e12 ? number : number * 1000;
  } else {
    ms = Date.parse(text);
  }
  if (!Number.isFinite(ms)) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * The quota windows of Claude's unified rate-limit headers
 * (`anthropic-ratelimit-unified-5h-utilization` / `-5h-reset`, the same for `7d`), as sent to
 * subscription accounts. They are undocumented, so parsing is lenient: utilization as a fraction
 * (`0.42`, what the API sends), a percentage (`42`) or `42%`; resets as unix seconds (what the
 * API sends), milliseconds or a date. Undefined when no window is reported.
 *
 * @example
 * ```ts
 * import { anthropicAllowance } from "@amber/providers/anthropic";
 * import assert from "node:assert/strict";
 * const snapshot = anthropicAllowance(new Headers({
 *   "anthropic-ratelimit-unified-5h-utilization": "0.42",
 *   "anthropic-ratelimit-unified-5h-reset": "1767225600",
 * }));
 * assert.deepEqual(snapshot?.windows, [
 *   { label: "5h", percentUsed: 42, resetsAt: "2026-01-01T00:00:00.000Z" },
 * ]);
 * ```
 */
export function anthropicAllowance(headers: Headers): AllowanceSnapshot | undefined {
  const windows: AllowanceWindow[] = [];
  for (const label of ["5h", "7d"]) {
    const percentUsed = percentOf(headers.get(`anthropic-ratelimit-unified-${label}-utilization`));
    const resetsAt = resetOf(headers.get(`anthropic-ratelimit-unified-${label}-reset`));
    if (percentUsed === undefined && resetsAt === undefined) continue;
    const window: { label: string; percentUsed?: number; resetsAt?: string } = { label };
    if (percentUsed !== undefined) window.percentUsed = percentUsed;
    if (resetsAt !== undefined) window.resetsAt = resetsAt;
    windows.push(window);
  }
  return windows.length > 0 ? { windows } : undefined;
}
