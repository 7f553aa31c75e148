// What a plugin process's dialect answers, checked before the host uses it: the process is not
// trusted, so a request must go where the provider's settings point, and every event must have
// the shape the kernel reads. A bad answer is a `SandboxedDialectError`, which fails the call it
// answered (the step gets an error naming the plugin), never the host.

import type { AllowanceSnapshot } from "../allowance.ts";
import type { FinishReason, HttpRequestSpec, ProviderSettings, StreamEvent } from "../dialect.ts";
import { AmberError } from "../errors.ts";
import type { DialectCreated, DialectErrorReading, DialectEvents } from "./protocol.ts";

/**
 * A plugin process's dialect answered something the host cannot use, or failed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SandboxedDialectError } from "@amber/core/sandbox";
 * const error = new SandboxedDialectError("acme", "acme-wire", "built what is not an HTTP request");
 * assert.equal(error.name, "SandboxedDialectError");
 * assert.equal(
 *   error.message,
 *   "the 'acme-wire' dialect of plugin 'acme' built what is not an HTTP request",
 * );
 * ```
 */
export class SandboxedDialectError extends AmberError {
  /** The plugin whose dialect it is. */
  readonly pluginId: string;
  /** The dialect's flavor. */
  readonly flavor: string;
  /** Creates the error; the message is prefixed with the dialect and its plugin. */
  constructor(pluginId: string, flavor: string, message: string, options?: ErrorOptions) {
    super(`the '${flavor}' dialect of plugin '${pluginId}' ${message}`, options);
    this.name = "SandboxedDialectError";
    this.pluginId = pluginId;
    this.flavor = flavor;
  }
}

/** Throws the error for an answer that failed a check, `message` saying what was wrong. */
export type Refuse = (message: string) => never;

const FINISH_REASONS: ReadonlySet<FinishReason> = new Set<FinishReason>([
  "stop",
  "length",
  "tool_calls",
  "content_filter",
  "error",
  "other",
]);

/** `dialect.create`'s answer. */
export function checkCreated(value: unknown, refuse: Refuse): DialectCreated {
  const created = value as DialectCreated | null;
  if (
    typeof created !== "object" || created === null || !Number.isSafeInteger(created.dialect) ||
    typeof created.models !== "boolean" || typeof created.allowance !== "boolean" ||
    typeof created.retryDelay !== "boolean"
  ) refuse("answered dialect.create with what is not a dialect's description");
  return created;
}

/**
 * A request the dialect built. It must go to the origin of `settings.baseUrl`: the host sends
 * it with its own network access, which the plugin process was not granted, so a request to
 * anywhere else would carry the plugin's data (and the key) past its grant.
 */
export function checkSpec(
  value: unknown,
  settings: ProviderSettings,
  refuse: Refuse,
): HttpRequestSpec {
  const spec = value as HttpRequestSpec | null;
  if (typeof spec !== "object" || spec === null || typeof spec.url !== "string") {
    refuse("built what is not an HTTP request");
  }
  if (spec.method !== "GET" && spec.method !== "POST") {
    refuse(`built a request with method ${JSON.stringify(spec.method)}`);
  }
  if (spec.body !== undefined && typeof spec.body !== "string") {
    refuse("built a request whose body is not text");
  }
  const headers = spec.headers as unknown;
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) {
    refuse("built a request without headers");
  }
  for (const [name, text] of Object.entries(headers)) {
    if (typeof text !== "string") refuse(`built a request whose header '${name}' is not text`);
  }
  const target = origin(spec.url);
  const allowed = origin(settings.baseUrl);
  if (target === undefined || target !== allowed) {
    refuse(
      `built a request to ${target ?? "an invalid URL"}, not to the provider's ${
        allowed ?? "base URL"
      }`,
    );
  }
  return spec;
}

/** `dialect.frames` / `dialect.end`'s answer. */
export function checkEvents(value: unknown, refuse: Refuse): DialectEvents {
  const answer = value as DialectEvents | null;
  if (typeof answer !== "object" || answer === null || !Array.isArray(answer.events)) {
    refuse("answered with what is not a list of stream events");
  }
  if (answer.error !== undefined && typeof answer.error !== "string") {
    refuse("answered a decoder failure that is not text");
  }
  for (const event of answer.events) {
    if (!isStreamEvent(event)) {
      refuse(`decoded what is not a stream event: ${JSON.stringify(event)?.slice(0, 120)}`);
    }
  }
  return answer;
}

/** `dialect.error`'s answer. */
export function checkReading(value: unknown, refuse: Refuse): DialectErrorReading {
  const reading = value as DialectErrorReading | null;
  if (
    typeof reading !== "object" || reading === null || typeof reading.retryable !== "boolean" ||
    typeof reading.message !== "string" || typeof reading.contextOverflow !== "boolean" ||
    (reading.retryDelayMs !== null && typeof reading.retryDelayMs !== "number")
  ) refuse("answered dialect.error with what is not an error reading");
  return reading;
}

/** `dialect.parseModels`'s answer. */
export function checkModels(value: unknown, refuse: Refuse): string[] {
  if (!Array.isArray(value) || !value.every((id) => typeof id === "string")) {
    refuse("answered a models listing that is not a list of ids");
  }
  return value;
}

/** `dialect.allowance`'s answer: null is no readout. */
export function checkAllowance(value: unknown, refuse: Refuse): AllowanceSnapshot | undefined {
  if (value === null) return undefined;
  const snapshot = value as AllowanceSnapshot;
  if (
    typeof snapshot !== "object" || !Array.isArray(snapshot.windows) ||
    !snapshot.windows.every((window) =>
      typeof window === "object" && window !== null && typeof window.label === "string" &&
      optional(window.percentUsed, "number") && optional(window.resetsAt, "string") &&
      optional(window.remaining, "number") && optional(window.entitlement, "number")
    ) || !optional(snapshot.plan, "string") || !optional(snapshot.creditsBalance, "number") ||
    !optional(snapshot.unit, "string") || !optional(snapshot.currency, "string")
  ) refuse("read an allowance that is not an allowance snapshot");
  return snapshot;
}

function isStreamEvent(value: unknown): value is StreamEvent {
  if (typeof value !== "object" || value === null) return false;
  const event = value as Record<string, unknown>;
  switch (event.type) {
    case "text":
    case "reasoning":
      return typeof event.delta === "string";
    case "reasoningSignature":
      return typeof event.signature === "string";
    case "toolCallStart":
      return typeof event.index === "number" && typeof event.id === "string" &&
        typeof event.name === "string";
    case "toolCallDelta":
      return typeof event.index === "number" && typeof event.delta === "string";
    case "toolCallEnd":
      return typeof event.index === "number" && typeof event.id === "string" &&
        typeof event.name === "string" && typeof event.arguments === "string" &&
        optional(event.signature, "string");
    case "usage":
      return typeof event.promptTokens === "number" &&
        typeof event.completionTokens === "number" &&
        optional(event.cachedTokens, "number") && optional(event.cacheWriteTokens, "number") &&
        optional(event.reasoningTokens, "number");
    case "finish":
      return FINISH_REASONS.has(event.reason as FinishReason) && optional(event.raw, "string");
    case "error":
      return typeof event.message === "string" && typeof event.retryable === "boolean" &&
        optional(event.status, "number") && optional(event.retryAfterMs, "number") &&
        optional(event.contextOverflow, "boolean");
    default:
      return false;
  }
}

function optional(value: unknown, type: "number" | "string" | "boolean"): boolean {
  return value === undefined || typeof value === type;
}

function origin(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : undefined;
}
