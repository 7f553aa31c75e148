/**
 * Keeping the provider keys amber holds out of what a session shows and sends. The values are
 * known (the key in use and every configured provider key present in the environment), so they
 * are matched exactly, never guessed from shapes. A session passes every event through one
 * {@linkcode EventRedactor} before any front end sees it, and hands {@linkcode SecretRedactor.redact}
 * to the kernel for tool results on their way to the model.
 *
 * @module
 */

import type { ProviderHost } from "../provider_settings.ts";
import type { SessionEvent } from "./events.ts";

/** What a secret is replaced by, as in the session file. */
export const REDACTED = "[redacted]";

// As the session file does: a shorter value would blank ordinary words wherever they appear.
const MIN_SECRET_LENGTH = 4;

/**
 * Replaces known secret values in text: each value as it is, trimmed, URL-encoded and
 * JSON-escaped (the forms in which a tool or an error message repeats it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SecretRedactor } from "./redact.ts";
 * const redactor = new SecretRedactor(["sk-abc123"]);
 * assert.equal(redactor.redact("key=sk-abc123;"), "key=[redacted];");
 * assert.equal(redactor.heldBack("the key is sk-ab"), 5);
 * assert.equal(new SecretRedactor([]).active, false);
 * ```
 */
export class SecretRedactor {
  readonly #forms: readonly string[];

  /** A redactor for `secrets`; values shorter than four characters are ignored. */
  constructor(secrets: Iterable<string>) {
    const forms = new Set<string>();
    for (const secret of secrets) {
      for (const form of [secret, secret.trim()]) {
        if (form.length < MIN_SECRET_LENGTH) continue;
        forms.add(form);
        forms.add(encodeURIComponent(form));
        forms.add(JSON.stringify(form).slice(1, -1));
      }
    }
    // Longest first, so a value that contains another is replaced whole.
    this.#forms = [...forms].sort((a, b) => b.length - a.length);
  }

  /** Whether there is anything to replace (so callers can skip copying). */
  get active(): boolean {
    return this.#forms.length > 0;
  }

  /** `text` with every secret replaced by `[redacted]`. */
  redact(text: string): string {
    for (const form of this.#forms) {
      if (text.includes(form)) text = text.replaceAll(form, REDACTED);
    }
    return text;
  }

  /**
   * How many characters at the end of `text` could be the start of a secret that the next
   * piece of a stream completes: those must wait for it.
   */
  heldBack(text: string): number {
    let longest = 0;
    for (const form of this.#forms) {
      const most = Math.min(form.length - 1, text.length);
      for (let n = most; n > longest; n--) {
        if (endsWithStartOf(text, form, n)) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }
}

// Whether the last `n` characters of `text` are the first `n` of `form`; compared in place, as
// this runs on every streamed delta.
function endsWithStartOf(text: string, form: string, n: number): boolean {
  const offset = text.length - n;
  for (let i = 0; i < n; i++) {
    if (text.charCodeAt(offset + i) !== form.charCodeAt(i)) return false;
  }
  return true;
}

type DeltaEvent = Extract<SessionEvent, { type: "text" | "reasoning" | "toolCallDelta" }>;

/**
 * Redacts a session's events. Streamed deltas (answer text, reasoning, each tool call's
 * arguments) are redacted as the one text each stream makes: the end of a delta that could
 * begin a secret is held until the next delta of the same stream, or until an event that is
 * not a delta, which first lets out what is held. Every string in any other event is redacted;
 * an event without a secret passes unchanged.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventRedactor, SecretRedactor } from "./redact.ts";
 * import type { SessionEvent } from "./events.ts";
 * const out: SessionEvent[] = [];
 * const events = new EventRedactor(new SecretRedactor(["sk-abc123"]));
 * const emit = (event: SessionEvent) => out.push(event);
 * events.apply({ type: "text", delta: "it is sk-a" }, emit);
 * events.apply({ type: "text", delta: "bc123." }, emit);
 * events.apply({ type: "end", cause: { kind: "completed" } }, emit);
 * const text = out.map((e) => e.type === "text" ? e.delta : "").join("");
 * assert.equal(text, "it is [redacted].");
 * assert.equal(out.at(-1)?.type, "end");
 * ```
 */
export class EventRedactor {
  readonly #redactor: SecretRedactor;
  // What each stream holds back, by stream ("text", "reasoning", "toolCallDelta:<index>").
  readonly #held = new Map<string, DeltaEvent>();

  /** Redacts with `redactor`. */
  constructor(redactor: SecretRedactor) {
    this.#redactor = redactor;
  }

  /** Passes `event`, redacted, to `emit`, after any held text it lets out. */
  apply(event: SessionEvent, emit: (event: SessionEvent) => void): void {
    if (!this.#redactor.active) {
      emit(event);
      return;
    }
    if (event.type === "text" || event.type === "reasoning" || event.type === "toolCallDelta") {
      this.#delta(event, emit);
      return;
    }
    this.flush(emit);
    // An opaque proof that must travel back to the provider byte for byte; never shown.
    if (event.type === "reasoningSignature") emit(event);
    else emit(redactValue(event, this.#redactor));
  }

  /** Lets out any held text (at the end of a turn, however it ended). */
  flush(emit: (event: SessionEvent) => void): void {
    if (this.#held.size === 0) return;
    const held = [...this.#held.values()];
    this.#held.clear();
    for (const event of held) emit(event);
  }

  #delta(event: DeltaEvent, emit: (event: SessionEvent) => void): void {
    const stream = event.type === "toolCallDelta" ? `${event.type}:${event.index}` : event.type;
    const held = this.#held.get(stream);
    const text = this.#redactor.redact(held === undefined ? event.delta : held.delta + event.delta);
    const keep = this.#redactor.heldBack(text);
    const now = text.slice(0, text.length - keep);
    if (now !== "") emit({ ...event, delta: now });
    if (keep === 0) this.#held.delete(stream);
    else this.#held.set(stream, { ...event, delta: text.slice(text.length - keep) });
  }
}

// Copies only what changes: plain objects and arrays are walked, strings redacted; anything
// else (an Error in an end cause, a Map) is kept as it is.
function redactValue<T>(value: T, redactor: SecretRedactor): T {
  if (typeof value === "string") return redactor.redact(value) as T;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = redactValue(item, redactor);
      if (next !== item) (copy ??= [...value])[i] = next;
    });
    return (copy ?? value) as T;
  }
  if (value === null || typeof value !== "object") return value;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(record)) {
    const item = record[key];
    const next = redactValue(item, redactor);
    if (next !== item) (copy ??= { ...record })[key] = next;
  }
  return (copy ?? value) as T;
}

/**
 * The keys of every configured provider that are set in the environment: each preset's key
 * variable and config.yaml's `apiKeyEnv`, except `skip` (the variable of the key in use, which
 * the caller already holds).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { configuredKeys } from "./redact.ts";
 * const configDir = await Deno.makeTempDir();
 * const host = await openHost({ configDir, thirdParty: false });
 * const env = (name: string) => name === "ANTHROPIC_API_KEY" ? "sk-ant-secret" : undefined;
 * assert.deepEqual(configuredKeys(host, env), ["sk-ant-secret"]);
 * await host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export function configuredKeys(
  host: ProviderHost,
  env: (name: string) => string | undefined,
  skip?: string,
): string[] {
  const names = new Set<string>();
  for (const preset of host.registries.provider.presets()) {
    if (preset.keyEnv !== undefined && preset.keyEnv !== "") names.add(preset.keyEnv);
  }
  const configured = host.config.apiKeyEnv;
  if (configured !== undefined && configured !== "") names.add(configured);
  if (skip !== undefined) names.delete(skip);
  const keys: string[] = [];
  for (const name of names) {
    let value: string | undefined;
    try {
      value = env(name)?.trim();
    } catch {
      // Not allowed to read it (a narrowed --allow-env): then no command can see it either.
      continue;
    }
    if (value !== undefined && value.length >= MIN_SECRET_LENGTH) keys.push(value);
  }
  return keys;
}
