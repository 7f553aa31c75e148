/**
 * UI services: what a plugin may ask of the person at the terminal (a line of text, a secret, a
 * choice, a confirmation) and tell them (a notification). An interactive host (the terminal UI)
 * answers through its own dialogs; a headless host refuses every question with a
 * {@linkcode UiUnavailableError}, so a plugin never waits for an answer no one can give.
 *
 * @module
 */

import { AmberError } from "./errors.ts";

/** How a notification looks. */
export type NotifyTone = "info" | "good" | "warn" | "error";

/** Options every question takes. */
export interface UiAskOptions {
  /** Withdraws the question; the answer is then `undefined` (or `false` for a confirmation). */
  readonly signal?: AbortSignal;
}

/** Options of {@linkcode UiService.askText}. */
export interface UiTextOptions extends UiAskOptions {
  /** The text the answer starts with. */
  readonly initial?: string;
}

/**
 * The UI services a host offers plugins, reached as `services.host.ui`. Questions resolve to
 * `undefined` (or `false`) when the user dismisses them; in headless mode they reject with a
 * {@linkcode UiUnavailableError}. Keys are never asked for through `askText`: `askSecret` keeps
 * the answer off the screen, out of the input history and out of transcripts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { headlessUi, type UiService } from "@amber/core";
 * async function pickRegion(ui: UiService): Promise<string> {
 *   if (!ui.interactive) return "eu";
 *   return await ui.choose("Region?", ["eu", "us"]) ?? "eu";
 * }
 * assert.equal(await pickRegion(headlessUi()), "eu");
 * ```
 */
export interface UiService {
  /** Whether a person can answer; false in headless mode, where every question is refused. */
  readonly interactive: boolean;
  /** Asks for one line of text; `undefined` when dismissed. */
  askText(question: string, options?: UiTextOptions): Promise<string | undefined>;
  /** Asks for a secret, shown masked and never kept; `undefined` when dismissed. */
  askSecret(question: string, options?: UiAskOptions): Promise<string | undefined>;
  /** Asks to pick one of `choices`; `undefined` when dismissed. */
  choose<T extends string>(
    question: string,
    choices: readonly T[],
    options?: UiAskOptions,
  ): Promise<T | undefined>;
  /** Asks yes or no; `false` when dismissed. */
  confirm(question: string, options?: UiAskOptions): Promise<boolean>;
  /** Tells the user something; never waits. */
  notify(message: string, tone?: NotifyTone): void;
}

/**
 * A question was asked where no one can answer it: amber runs headless (`amber run`, a pipe, a
 * test). The message names the question so the plugin's author sees which one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UiUnavailableError } from "@amber/core";
 * const error = new UiUnavailableError("askText", "Name?");
 * assert.equal(error.name, "UiUnavailableError");
 * assert.match(error.message, /^cannot askText 'Name\?': amber is running without a terminal UI/);
 * ```
 */
export class UiUnavailableError extends AmberError {
  /** The service that was called. */
  readonly service: string;
  /** Creates the error for a call of `service` with `question`. */
  constructor(service: string, question: string) {
    super(
      `cannot ${service} '${question}': amber is running without a terminal UI (headless); ` +
        "use a config value or a flag instead",
    );
    this.name = "UiUnavailableError";
    this.service = service;
  }
}

/**
 * The UI services of a headless host: every question rejects with a
 * {@linkcode UiUnavailableError}; notifications go to `onNotify` when given and are dropped
 * otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { headlessUi } from "@amber/core";
 * const notes: string[] = [];
 * const ui = headlessUi((message) => notes.push(message));
 * ui.notify("indexed 12 files");
 * assert.deepEqual(notes, ["indexed 12 files"]);
 * assert.equal(ui.interactive, false);
 * await assert.rejects(ui.confirm("Go?"), { name: "UiUnavailableError" });
 * ```
 */
export function headlessUi(onNotify?: (message: string, tone: NotifyTone) => void): UiService {
  const refuse = (service: string, question: string): Promise<never> =>
    Promise.reject(new UiUnavailableError(service, question));
  return {
    interactive: false,
    askText: (question) => refuse("askText", question),
    askSecret: (question) => refuse("askSecret", question),
    choose: (question) => refuse("choose", question),
    confirm: (question) => refuse("confirm", question),
    notify(message, tone = "info") {
      try {
        onNotify?.(message, tone);
      } catch {
        // A notification is best effort; its sink failing must not reach the plugin.
      }
    },
  };
}
